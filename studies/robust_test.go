package studies_test

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"optimize/internal/testkit/studykit"
	"optimize/search"
	"optimize/simcore/metrics"
	"optimize/strategies"
	"optimize/studies"
	"optimize/studies/report"
)

// robustRequest is a small robust study: slo-cascade on two seeds in the
// workload's own operating point and near capacity.
func robustRequest(name string, trials int) studies.CreateOptions {
	o := studykit.Study("slo-cascade", name, trials)
	o.Seeds = []int64{42, 43}
	o.Robust = strategies.Robust{Regimes: []string{strategies.BaseRegime, "near-capacity"}}
	return o
}

// A robust study stores every trial's runs in each regime, its baseline
// in each, and scores each trial by the worst regime's ratio to that
// regime's baseline: recomputed here from the stored per-regime runs. It
// is created by one environment and run by another (as a resume or a
// worker does), which rebuilds every regime's evaluator from storage.
func TestRobustStudyScoresTheWorstRegime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.db")
	env := studykit.Env(t, path, 2)
	o := robustRequest("r", 4)
	if _, err := env.Create(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	resumed := studykit.Env(t, path, 2)
	row, err := resumed.Store.StudyByName("r")
	if err != nil {
		t.Fatal(err)
	}
	if row.Robust == nil || len(row.Robust.Baselines) != 1 || row.Robust.Baselines[0].Scenario != "near-capacity" {
		t.Fatalf("stored robust record %+v, want the near-capacity baseline", row.Robust)
	}
	if err := resumed.Run(context.Background(), row); err != nil {
		t.Fatal(err)
	}
	r, err := report.Load(resumed.Store, resumed.Registry, "r")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Complete) != 4 {
		t.Fatalf("%d complete trials, want 4", len(r.Complete))
	}
	tpl := r.Template
	prim := tpl.Objectives[tpl.Primary]
	trials, err := resumed.Store.Trials(row.ID)
	if err != nil {
		t.Fatal(err)
	}
	baselines := map[string]*metrics.Summary{"": &row.Baseline, "near-capacity": &row.Robust.Baselines[0].Mean}
	for _, tr := range trials {
		runs, err := resumed.Store.ScenarioMetrics(tr.ID)
		if err != nil {
			t.Fatal(err)
		}
		by := map[string][]metrics.Summary{}
		for _, run := range runs {
			by[run.Scenario] = append(by[run.Scenario], run.Metrics)
		}
		if len(by) != 2 || len(by[""]) != 2 || len(by["near-capacity"]) != 2 {
			t.Fatalf("trial %d: runs by scenario %d/%d/%d, want 2 seeds in each of 2 scenarios", tr.Number, len(by), len(by[""]), len(by["near-capacity"]))
		}
		worst, violation := 0.0, make([]float64, len(tpl.Constraints))
		for sc, ms := range by {
			mean := metrics.Mean(ms)
			v, _ := strategies.Metric(&mean, prim.Metric)
			b, _ := strategies.Metric(baselines[sc], prim.Metric)
			worst = max(worst, v/b)
			for i, c := range tpl.Constraints {
				s, _ := c.Shortfall(baselines[sc], &mean)
				violation[i] = max(violation[i], s)
			}
		}
		total := 0.0
		for _, v := range violation {
			total += v
		}
		want := search.Score(worst, total, 0)
		if math.Abs(tr.Score-want) > 1e-9*math.Max(1, want) {
			t.Errorf("trial %d: score %.9g, want the worst regime's %.9g (ratio %.4f, violation %.4g)", tr.Number, tr.Score, want, worst, total)
		}
	}
	best := &r.Complete[r.Best]
	rj, err := r.Robust(best)
	if err != nil || rj == nil || len(rj.Scenarios) != 2 {
		t.Fatalf("per-scenario table %+v, %v; want 2 scenarios", rj, err)
	}
	worstDelta := math.Inf(-1)
	for _, s := range rj.Scenarios {
		if d := float64(s.Deltas[prim.Name]); d > worstDelta {
			worstDelta = d
			if rj.Binding != s.Scenario {
				t.Errorf("binding scenario %q, want %q (its %s Δ %+.3f is the worst)", rj.Binding, s.Scenario, prim.Name, d)
			}
		}
	}
	if got := report.Delta(best.Objectives[tpl.Primary], mustMetric(t, &r.Baseline, prim.Metric)); math.Abs(got-worstDelta) > 1e-9 {
		t.Errorf("best trial's stored Δ %+.6f, want the binding scenario's %+.6f", got, worstDelta)
	}
}

func mustMetric(t *testing.T, s *metrics.Summary, path string) float64 {
	t.Helper()
	v, err := strategies.Metric(s, path)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A constraint that holds in the workload's own regime and fails near
// capacity (throughput capped between the two regimes' throughputs) makes
// every trial of the robust study infeasible, and none of the study of
// the base regime alone.
func TestRobustConstraintMustHoldInEveryRegime(t *testing.T) {
	dir := t.TempDir()
	tpl := `name: capped
description: slo-cascade with throughput capped between the base and near-capacity regimes.
base: slo-cascade
robust_regimes: [base, near-capacity]
parameters:
  - {name: critical_base, type: float, low: 1, high: 20, default: 10, knob: priority.base.critical}
constraints:
  - {metric: tokens_per_sec, max: 60000}
`
	if err := os.WriteFile(filepath.Join(dir, "capped.yaml"), []byte(tpl), 0o644); err != nil {
		t.Fatal(err)
	}
	reg, err := strategies.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.AddDir(dir); err != nil {
		t.Fatal(err)
	}
	feasible := func(o studies.CreateOptions) (int, *report.Report) {
		env := studykit.TempEnv(t, 2)
		env.Registry = reg
		r := studykit.RunStudy(t, env, o)
		n := 0
		for i := range r.Complete {
			if search.Feasible(r.Complete[i].Violation) {
				n++
			}
		}
		return n, r
	}
	o := studykit.Study("capped", "robust", 3)
	o.Seeds = []int64{42}
	n, r := feasible(o)
	if r.Study.Robust == nil {
		t.Fatal("the template's robust_regimes made no robust study")
	}
	if n != 0 {
		t.Errorf("%d of 3 trials feasible in the robust study, want 0 (throughput exceeds the cap near capacity)", n)
	}
	rj, err := r.Robust(&r.Complete[r.Best])
	if err != nil || rj == nil || rj.Scenarios[0].Missed != "" || rj.Scenarios[1].Missed == "" {
		t.Errorf("per-scenario table %+v (%v): want the constraint met in base and missed near capacity", rj, err)
	}
	o.Name, o.Robust = "single", strategies.Robust{Regimes: []string{strategies.BaseRegime}}
	if n, _ := feasible(o); n != 3 {
		t.Errorf("%d of 3 trials feasible in the base regime alone, want 3", n)
	}
}

// A study of one scenario stores no robust record and its seed runs in the
// reference scenario only, as before robust studies.
func TestPlainStudyStoresNoScenarios(t *testing.T) {
	env := studykit.TempEnv(t, 1)
	o := studykit.Study("slo-cascade", "plain", 1)
	o.Seeds = []int64{42}
	r := studykit.RunStudy(t, env, o)
	if r.Study.Robust != nil {
		t.Fatalf("robust record %+v for a plain study", r.Study.Robust)
	}
	trials, err := env.Store.Trials(r.Study.ID)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := env.Store.ScenarioMetrics(trials[0].ID)
	if err != nil || len(runs) != 1 || runs[0].Scenario != "" {
		t.Fatalf("runs %+v (%v), want one run of the reference scenario", runs, err)
	}
	if rj, err := r.Robust(&r.Complete[0]); rj != nil || err != nil {
		t.Fatalf("per-scenario table %+v (%v) for a plain study", rj, err)
	}
}

// A study tuned in trained-physics alone (--worlds trained-physics) is
// validated there by default, not in its template's blackbox world.
func TestRobustWorldStudyValidatesInItsWorld(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	o := studykit.Study("slo-cascade-nochunk", "tp", 2)
	o.Seeds = []int64{42, 43}
	o.Robust = strategies.Robust{Worlds: []string{"trained-physics"}}
	studykit.RunStudy(t, env, o)
	v, err := env.Validate(context.Background(), "tp", studies.ValidateOptions{Trial: -1, Seeds: []int64{100, 101}})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Worlds) != 1 || v.Worlds[0].World.LatencyModel != "trained-physics" {
		t.Fatalf("validated in %+v, want one block in the trained-physics world", v.Worlds)
	}
	// The study was tuned there: a plain held-out validation, not a
	// regime-like "another world".
	if w := v.Worlds[0]; !w.StudyWorld || !strings.HasPrefix(w.Title(), "In a world the study was tuned in: ") {
		t.Errorf("trained-physics block: study world %v, title %q; want the study's own", w.StudyWorld, w.Title())
	}
	// Asked for blackbox, where it was not tuned, it is another world.
	v, err = env.Validate(context.Background(), "tp", studies.ValidateOptions{Trial: -1, Seeds: []int64{100, 101},
		Worlds: []studies.WorldChange{{{Key: "latency.model", Value: "blackbox", Flag: "--world"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Worlds) != 1 || v.Worlds[0].StudyWorld {
		t.Errorf("blackbox block %+v: want another world", v.Worlds)
	}
}

// A robust study with Prune stops a trial between scenarios only when it
// cannot win: every pruned trial, run afterwards in every scenario,
// scores at least its stored bound and at least the study's best, which
// is a complete trial. Pruned trials count towards the total, store the
// runs of the scenarios they ran and nothing else, and save simulations.
func TestPruningStopsOnlyTrialsThatCannotWin(t *testing.T) {
	env := studykit.TempEnv(t, 1)
	o := robustRequest("p", 12)
	o.Robust.Prune = true
	r := studykit.RunStudy(t, env, o)
	if len(r.Complete)+len(r.Pruned) != 12 || len(r.Pruned) < 3 {
		t.Fatalf("%d complete and %d pruned trials, want 12 in all and at least 3 pruned", len(r.Complete), len(r.Pruned))
	}
	row, err := env.Store.StudyByName("p")
	if err != nil {
		t.Fatal(err)
	}
	best := r.Complete[r.Best].Score
	stored, err := env.Store.Trials(row.ID)
	if err != nil {
		t.Fatal(err)
	}
	perTrial := len(o.Robust.Scenarios()) * len(o.Seeds)
	sims := 0
	for _, tr := range stored {
		runs, err := env.Store.ScenarioMetrics(tr.ID)
		if err != nil {
			t.Fatal(err)
		}
		sims += len(runs)
		if tr.State != "pruned" {
			if len(runs) != perTrial {
				t.Errorf("complete trial %d: %d runs, want %d", tr.Number, len(runs), perTrial)
			}
			continue
		}
		if len(runs) == 0 || len(runs) >= perTrial || len(runs)%len(o.Seeds) != 0 {
			t.Errorf("pruned trial %d: %d runs, want whole scenarios, fewer than %d", tr.Number, len(runs), perTrial)
		}
		full, err := env.FullScore(row, tr.Params)
		if err != nil {
			t.Fatal(err)
		}
		if full < tr.Score-1e-9 || full < best {
			t.Errorf("pruned trial %d: full score %.6g, below its bound %.6g or the best %.6g: it could have won", tr.Number, full, tr.Score, best)
		}
	}
	// The CSV export lists every trial, a last column saying which were
	// pruned.
	var csvOut strings.Builder
	if err := r.Export(&csvOut, "csv", false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(csvOut.String()), "\n")
	marked := 0
	for _, l := range lines[1:] {
		if strings.HasSuffix(l, ",true") {
			marked++
		}
	}
	if !strings.HasSuffix(lines[0], ",pruned") || len(lines) != 13 || marked != len(r.Pruned) {
		t.Errorf("CSV export: header %q, %d rows, %d marked pruned; want a pruned column, 12 rows, %d marked", lines[0], len(lines)-1, marked, len(r.Pruned))
	}
	rj, err := r.Robust(&r.Complete[r.Best])
	if err != nil {
		t.Fatal(err)
	}
	if rj.Pruned != len(r.Pruned) || rj.Simulations != int64(sims) || sims > 12*perTrial-len(r.Pruned)*len(o.Seeds) {
		t.Errorf("robust table: %d pruned, %d simulations; stored %d pruned, %d runs (at most %d)", rj.Pruned, rj.Simulations, len(r.Pruned), sims, 12*perTrial-len(r.Pruned)*len(o.Seeds))
	}
}

// The aggregate of the scenarios run is a lower bound on the whole
// trial's score, under either aggregate: the pruner's premise.
func TestPartialAggregateBoundsTheWhole(t *testing.T) {
	env := studykit.TempEnv(t, 1)
	tpl, err := env.Registry.Get("slo-cascade")
	if err != nil {
		t.Fatal(err)
	}
	var base metrics.Summary // the score reads only the ratios and shortfalls
	rng := rand.New(rand.NewPCG(1, 2))
	for _, agg := range strategies.Aggregates() {
		for trial := 0; trial < 200; trial++ {
			all := make([]search.Evaluation, 1+rng.IntN(4))
			for i := range all {
				e := search.Evaluation{Ratios: make([]float64, len(tpl.Objectives)), Violations: make([]float64, len(tpl.Constraints)), Primary: tpl.Primary}
				for k := range e.Ratios {
					e.Ratios[k] = rng.Float64() * 3
				}
				for c := range e.Violations {
					e.Violations[c] = max(0, rng.Float64()-0.7)
				}
				all[i] = e
			}
			w := studies.CombineBound(tpl, &base, agg, all, len(all))
			whole := w.Score(0)
			for n := 1; n < len(all); n++ {
				p := studies.CombineBound(tpl, &base, agg, all[:n], len(all))
				if part := p.Score(0); part > whole+1e-12 {
					t.Fatalf("%s: %d of %d scenarios score %.6g, above the whole %.6g", agg, n, len(all), part, whole)
				}
			}
		}
	}
}
