// Package studykit holds the study fixtures that tests of several
// packages share: a study environment on a fresh or given database (Env,
// TempEnv), a study created and run to its total (RunStudy), and a
// synthetic report of a built-in template (SyntheticReport). It imports
// studies and report, so their own tests use it from external test
// packages (package studies_test, report_test).
package studykit

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"optimize/internal/testkit"
	"optimize/search"
	"optimize/simcore/metrics"
	"optimize/storage"
	"optimize/studies"
	"optimize/studies/report"
)

// TempEnv opens a study environment on a fresh SQLite file.
func TempEnv(t testing.TB, workers int) *studies.Env {
	t.Helper()
	return Env(t, filepath.Join(t.TempDir(), "q.db"), workers)
}

// Env opens a study environment on dsn (as storage.Open takes it) with
// the built-in templates, the standard cluster, the default lease and
// workers trials at once; the store closes when the test ends.
func Env(t testing.TB, dsn string, workers int) *studies.Env {
	t.Helper()
	st, err := storage.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	reg, base := testkit.Builtins(t)
	return &studies.Env{Store: st, Registry: reg, Base: base, Progress: io.Discard, Workers: workers,
		Lease: studies.DefaultLease, Worker: studies.WorkerID()}
}

// Study is a create request for a study name of trials trials of
// template with TPE, on the default seeds and sampler seed
// (studies.Defaults: seeds 42, 43 and 44, sampler seed 1).
func Study(template, name string, trials int) studies.CreateOptions {
	o := studies.Defaults()
	o.Template, o.Name, o.Trials, o.Sampler = template, name, trials, "tpe"
	return o
}

// RunStudy creates study o in env, runs it to its total and returns its
// report.
func RunStudy(t testing.TB, env *studies.Env, o studies.CreateOptions) *report.Report {
	t.Helper()
	ctx := context.Background()
	row, err := env.Create(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Run(ctx, row); err != nil {
		t.Fatal(err)
	}
	r, err := report.Load(env.Store, env.Registry, o.Name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// summaryAt is a summary whose metric paths read the given values
// (strategies.Metric reads the JSON names).
func summaryAt(t testing.TB, values map[string]float64) metrics.Summary {
	t.Helper()
	tree := map[string]any{}
	for path, v := range values {
		node := tree
		parts := strings.Split(path, ".")
		for _, p := range parts[:len(parts)-1] {
			next, ok := node[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				node[p] = next
			}
			node = next
		}
		node[parts[len(parts)-1]] = v
	}
	js, _ := json.Marshal(tree)
	var s metrics.Summary
	if err := json.Unmarshal(js, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// SyntheticReport is a report of n trials of a built-in template: random
// parameters (inactive where their condition fails), objectives between
// 0.3 and 1.8 times a baseline of 100, and a constraint penalty on every
// fifth trial; it returns the number penalised. Its Best is the lowest
// score; its Pareto front is over every trial, penalised or not, and its
// hypervolume is not computed: it is what the pictures draw, not a
// report Load would build.
func SyntheticReport(t testing.TB, template string, n int) (*report.Report, int) {
	t.Helper()
	reg, _ := testkit.Builtins(t)
	tpl, err := reg.Get(template)
	if err != nil {
		t.Fatal(err)
	}
	base := map[string]float64{}
	for _, o := range tpl.Objectives {
		base[o.Metric] = 100
		if rest, ok := strings.CutPrefix(o.Metric, "per_slo."); ok {
			class, _, _ := strings.Cut(rest, ".")
			base["per_slo."+class+".count"] = 1000 // a class without requests has no metrics
		}
	}
	r := &report.Report{Study: &storage.Study{Name: "syn", Template: template, Workload: tpl.Workload, Sampler: "tpe", TrialsTotal: n},
		Template: tpl, Baseline: summaryAt(t, base), Seeds: []int64{42}, Best: -1}
	r.BaseSeeds = []metrics.Summary{r.Baseline}
	rng := rand.New(rand.NewPCG(1, 2))
	penalised := 0
	var points [][]float64
	for i := range n {
		params := make([]search.Value, len(tpl.Params))
		for j, p := range tpl.Params {
			switch {
			case !tpl.Space()[:j+1].Active(params[:j+1])[j]:
				params[j] = search.Inactive()
			case p.Kind == search.Categorical:
				params[j] = search.Value{Choice: p.Choices[rng.IntN(len(p.Choices))]}
			default:
				params[j] = search.Value{Number: p.Low + rng.Float64()*(p.High-p.Low)}
			}
		}
		obj := make([]float64, len(tpl.Objectives))
		mins := make([]bool, len(obj))
		values := maps.Clone(base)
		for k, o := range tpl.Objectives {
			obj[k], mins[k] = 100*(0.3+1.5*rng.Float64()), o.Minimize
			values[o.Metric] = obj[k]
		}
		m := summaryAt(t, values)
		violation := 0.0
		if i%5 == 4 {
			violation = 0.002
			penalised++
		}
		b100 := slices.Repeat([]float64{100}, len(obj))
		e := search.Judge(obj, b100, mins, []float64{violation}, tpl.Primary)
		score := e.Score(search.DefaultViolationWeight)
		r.Complete = append(r.Complete, report.Result{Number: i, Params: params, Objectives: obj, Score: score,
			Violations: e.Violations, Violation: e.Violation(), Metrics: m, PerSeed: []metrics.Summary{m}})
		if r.Best < 0 || score < r.Complete[r.Best].Score {
			r.Best = i
		}
		b := make([]float64, len(obj))
		for k := range b {
			b[k] = 100
		}
		points = append(points, search.Normalize(obj, b, mins))
	}
	r.Pareto = search.ParetoFront(points)
	return r, penalised
}

// AddUnfinished adds three trials after the last of study name in the
// database at dsn, as a study interrupted while workers died would hold
// them: a failed trial with the parameters of trial 0, a running trial
// re-running them (its rescue), and a running trial claimed but not yet
// proposed (no parameters). It returns their numbers.
func AddUnfinished(t testing.TB, dsn, name string) (failed, rescue, claimed int) {
	t.Helper()
	db := testkit.DB(t, dsn)
	var study struct {
		ID     uint
		Last   int
		Params string
	}
	err := db.Raw(`SELECT s.id AS id, (SELECT MAX(number) FROM trial_rows WHERE study_id = s.id) AS last,
		(SELECT params FROM trial_rows WHERE study_id = s.id AND number = 0) AS params
		FROM study_rows s WHERE s.name = ?`, name).Scan(&study).Error
	if err != nil || study.ID == 0 || study.Params == "" {
		t.Fatalf("study %s: id %d, trial 0's params %q: %v", name, study.ID, study.Params, err)
	}
	start := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	failed, rescue, claimed = study.Last+1, study.Last+2, study.Last+3
	for _, row := range []struct {
		number    int
		state     string
		params    string
		rescueOf  int
		heartbeat time.Time
	}{
		{failed, storage.TrialFailed, study.Params, -1, start.Add(time.Second)},
		{rescue, storage.TrialRunning, study.Params, failed, start.Add(2 * time.Second)},
		{claimed, storage.TrialRunning, "", -1, start.Add(3 * time.Second)},
	} {
		// The columns a claim writes (storage's zero values for the rest).
		err := db.Exec(`INSERT INTO trial_rows (study_id, number, state, goptuna_id, params, rescue_of, score, objectives, metrics,
			worker, started_at, heartbeat_at) VALUES (?, ?, ?, 0, ?, ?, 0, '', '', 'gone', ?, ?)`, study.ID, row.number, row.state, row.params, row.rescueOf, start, row.heartbeat).Error
		if err != nil {
			t.Fatal(err)
		}
	}
	return failed, rescue, claimed
}
