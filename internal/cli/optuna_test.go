package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"optimize/internal/testkit"
	"optimize/internal/testkit/studykit"
	"optimize/search"
	"optimize/storage"
	"optimize/studies/report"
)

// debianPython is the interpreter Debian's python3-optuna installs into.
const debianPython = "/usr/bin/python3"

// optunaPython is the Python interpreter that imports optuna:
// $OPTIMIZE_TEST_OPTUNA (CI sets it, and then the test fails without
// it), else Debian's, else python3 on PATH, whichever imports optuna. The
// test skips without one, and fails under $CI.
func optunaPython(t *testing.T) string {
	t.Helper()
	py := os.Getenv("OPTIMIZE_TEST_OPTUNA")
	if py == "" {
		var tried []string
		for _, py := range []string{debianPython, "python3"} {
			err := exec.Command(py, "-c", "import optuna").Run()
			if err == nil {
				return py
			}
			tried = append(tried, fmt.Sprintf("%s: %v", py, err))
		}
		msg := fmt.Sprintf("no Python with optuna (%s): install Debian's python3-optuna or set OPTIMIZE_TEST_OPTUNA=PYTHON", strings.Join(tried, "; "))
		if os.Getenv("CI") != "" {
			t.Fatal(msg + " ($CI is set: CI must have it)")
		}
		t.Skip(msg)
	}
	if out, err := exec.Command(py, "-c", "import optuna").CombinedOutput(); err != nil {
		t.Fatalf("OPTIMIZE_TEST_OPTUNA=%s cannot import optuna: %v\n%s", py, err, out)
	}
	return py
}

// optunaView is what testdata/optuna_load.py prints of the study Optuna
// opened.
type optunaView struct {
	Version    string         `json:"optuna_version"`
	StudyName  string         `json:"study_name"`
	Directions []string       `json:"directions"`
	UserAttrs  map[string]any `json:"user_attrs"`
	Trials     []struct {
		Number      int
		State       string
		Params      map[string]any
		Values      []float64
		Constraints []float64
		// Keyed are the "constraints:<words>" attributes (Optuna 5's
		// Trial.set_constraint); TrialConstraints Optuna 5's own
		// trial.constraints (nil before 5.0).
		Keyed            map[string]float64 `json:"keyed_constraints"`
		TrialConstraints map[string]float64 `json:"trial_constraints"`
		Start            *string            `json:"datetime_start"`
		Complete         *string            `json:"datetime_complete"`
		FailReason       *string            `json:"fail_reason"`
		UserAttrs        map[string]any     `json:"user_attrs"`
	}
	BestTrials    []int `json:"best_trials"`
	Feasible      []int
	FeasibleFront []int `json:"feasible_front"`
	Continued     struct{ Number, Trials int }
}

// An exported study opens in Optuna (Debian's python3-optuna, 3.1.0, in
// CI): the same trials in the same states, the directions, each complete
// trial's parameters and values, the best trial's score, the feasible
// trials and, by Optuna's own Pareto logic, the feasible Pareto front;
// study.best_trials is that front from Optuna 4.0 (earlier releases ignore
// constraints: then it is the front of every complete trial). Optuna then
// runs one more trial of the study.
func TestOptunaOpensTheExportedStudy(t *testing.T) {
	py := optunaPython(t)
	for _, c := range []struct {
		template string
		trials   int
	}{
		{"slo-cascade", 12}, // float, int and log-float parameters
		{"joint-kv", 10},    // categoricals and a conditional parameter
	} {
		t.Run(c.template, func(t *testing.T) {
			dsn := createTemplateStudy(t, c.template, "s", c.trials)
			failed, rescue, claimed := studykit.AddUnfinished(t, dsn, "s")
			file := filepath.Join(t.TempDir(), "s.log")
			if code, out, errs := run(t, "study", "export", "s", "--storage", dsn, "--format", "optuna", "-o", file); code != 0 || out != "" {
				t.Fatalf("export: exit %d, stdout %q: %s", code, out, errs)
			}
			cmd := exec.Command(py, filepath.Join("testdata", "optuna_load.py"), file, "s")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s optuna_load.py: %v\n%s", py, err, stderr.String())
			}
			var v optunaView
			if err := json.Unmarshal(out, &v); err != nil {
				t.Fatalf("optuna_load.py: %v: %s", err, out)
			}
			t.Logf("Optuna %s opened %d trials", v.Version, len(v.Trials))

			checkOptunaView(t, openReport(t, dsn, "s"), &v, failed, rescue, claimed)
			checkOptunaTimes(t, dsn, "s", &v)
		})
	}
}

func checkOptunaView(t *testing.T, r *report.Report, v *optunaView, failed, rescue, claimed int) {
	t.Helper()
	if v.StudyName != "s" || len(v.Trials) != claimed+1 || len(r.Complete) != failed {
		t.Fatalf("study %q with %d trials; want s with %d (%d complete, 3 unfinished)", v.StudyName, len(v.Trials), claimed+1, len(r.Complete))
	}
	base, minimize := r.BaselineObjectives()
	for k, min := range minimize {
		if want := map[bool]string{true: "MINIMIZE", false: "MAXIMIZE"}[min]; v.Directions[k] != want {
			t.Fatalf("direction %d: %s, want %s", k, v.Directions[k], want)
		}
	}
	if v.UserAttrs["template"] != r.Study.Template || v.UserAttrs["workload"] != r.Study.Workload {
		t.Fatalf("study user attributes %v", v.UserAttrs)
	}
	for _, want := range []struct {
		number int
		state  string
	}{{failed, "FAIL"}, {rescue, "RUNNING"}, {claimed, "RUNNING"}} {
		if got := v.Trials[want.number]; got.State != want.state || got.Number != want.number {
			t.Fatalf("trial %d: %s (number %d), want %s", want.number, got.State, got.Number, want.state)
		}
	}
	if len(v.Trials[claimed].Params) != 0 || len(v.Trials[rescue].Params) == 0 || v.Trials[failed].FailReason == nil {
		t.Fatalf("unfinished trials: claimed params %v, rescue params %v, failed reason %v",
			v.Trials[claimed].Params, v.Trials[rescue].Params, v.Trials[failed].FailReason)
	}
	var feasible, pareto []int
	all := make([][]float64, len(r.Complete))
	for i, c := range r.Complete {
		got := v.Trials[c.Number]
		want := map[string]any{}
		for name, value := range r.ParamMap(c.Params) {
			if value != nil {
				want[name] = value
			}
		}
		if got.State != "COMPLETE" || !slices.Equal(got.Values, c.Objectives) || !reflect.DeepEqual(got.Params, want) {
			t.Fatalf("trial %d in Optuna: %s %v %v; want COMPLETE %v %v", c.Number, got.State, got.Values, got.Params, c.Objectives, want)
		}
		if search.Feasible(c.Violation) {
			feasible = append(feasible, c.Number)
		}
		checkOptunaConstraints(t, r, c.Number, got.Constraints, got.Keyed, got.TrialConstraints)
		all[i] = search.Normalize(c.Objectives, base, minimize)
	}
	for _, i := range r.Pareto {
		pareto = append(pareto, r.Complete[i].Number)
	}
	var front []int
	for _, i := range search.ParetoFront(all) {
		front = append(front, r.Complete[i].Number)
	}
	if !slices.Equal(v.Feasible, feasible) || !slices.Equal(v.FeasibleFront, pareto) {
		t.Fatalf("Optuna: feasible %v, their Pareto front %v; ours %v, %v", v.Feasible, v.FeasibleFront, feasible, pareto)
	}
	if major, _ := strconv.Atoi(strings.Split(v.Version, ".")[0]); major < 4 {
		pareto = front // Optuna 3.x's best_trials ignores constraints
	}
	if !slices.Equal(v.BestTrials, pareto) {
		t.Fatalf("Optuna %s: best_trials %v, want %v", v.Version, v.BestTrials, pareto)
	}
	best, ok := r.BestTrial()
	if !ok || v.Trials[best].UserAttrs["score"] != r.ByNumber(best).Score || !slices.Contains(v.FeasibleFront, best) {
		t.Fatalf("best trial %d: Optuna has score %v (ours %v), feasible front %v", best, v.Trials[best].UserAttrs["score"], r.ByNumber(best).Score, v.FeasibleFront)
	}
	if v.Continued.Number != claimed+1 || v.Continued.Trials != claimed+2 {
		t.Fatalf("Optuna's next trial: number %d of %d, want %d of %d", v.Continued.Number, v.Continued.Trials, claimed+1, claimed+2)
	}
}

// A robust study's pruned trials (--prune) open in Optuna as PRUNED,
// without values, and Optuna's feasible set and Pareto front, which only
// complete trials enter, are ours.
func TestOptunaOpensAPrunedStudy(t *testing.T) {
	py := optunaPython(t)
	dsn := filepath.Join(t.TempDir(), "p.db")
	if code, _, errs := run(t, "study", "create", "slo-cascade", "--trials", "10", "--name", "p", "--storage", dsn, "--workers", "1",
		"--seeds", "42,43", "--regime", "base,near-capacity", "--prune"); code != 0 {
		t.Fatal(errs)
	}
	file := filepath.Join(t.TempDir(), "p.log")
	if code, out, errs := run(t, "study", "export", "p", "--storage", dsn, "--format", "optuna", "-o", file); code != 0 || out != "" {
		t.Fatalf("export: exit %d, stdout %q: %s", code, out, errs)
	}
	out, err := exec.Command(py, filepath.Join("testdata", "optuna_load.py"), file, "p").Output()
	if err != nil {
		t.Fatalf("%s optuna_load.py: %v", py, err)
	}
	var v optunaView
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("optuna_load.py: %v: %s", err, out)
	}
	r := openReport(t, dsn, "p")
	if len(r.Pruned) == 0 || len(v.Trials) < 10 {
		t.Fatalf("%d pruned trials, %d in Optuna: want some pruned of 10", len(r.Pruned), len(v.Trials))
	}
	for _, c := range r.Pruned {
		if got := v.Trials[c.Number]; got.State != "PRUNED" || got.Values != nil || len(got.Params) == 0 {
			t.Errorf("pruned trial %d in Optuna: %s, values %v, params %v; want PRUNED with params, no values", c.Number, got.State, got.Values, got.Params)
		}
	}
	var feasible, pareto []int
	for _, c := range r.Complete {
		if got := v.Trials[c.Number]; got.State != "COMPLETE" || !slices.Equal(got.Values, c.Objectives) {
			t.Errorf("complete trial %d in Optuna: %s %v, want COMPLETE %v", c.Number, got.State, got.Values, c.Objectives)
		}
		if search.Feasible(c.Violation) {
			feasible = append(feasible, c.Number)
		}
	}
	for _, i := range r.Pareto {
		pareto = append(pareto, r.Complete[i].Number)
	}
	if !slices.Equal(v.Feasible, feasible) || !slices.Equal(v.FeasibleFront, pareto) {
		t.Errorf("Optuna: feasible %v, front %v; ours %v, %v", v.Feasible, v.FeasibleFront, feasible, pareto)
	}
}

// openReport loads study name's report from dsn, the store closed when
// the test ends.
func openReport(t *testing.T, dsn, name string) *report.Report {
	t.Helper()
	st, err := storage.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	reg, _ := testkit.Builtins(t)
	r, err := report.Load(st, reg, name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// checkOptunaConstraints: trial number's constraints are written both as
// Optuna 3.x's list and as Optuna 5's one "constraints:<words>" attribute
// per template constraint, with the same values; Optuna 5 reads the two
// into one dict of twice as many entries, each shortfall twice.
func checkOptunaConstraints(t *testing.T, r *report.Report, number int, list []float64, keyed, five map[string]float64) {
	t.Helper()
	cons := r.Template.Constraints
	if len(list) != len(cons) || len(keyed) != len(cons) {
		t.Fatalf("trial %d: constraints list %v, keyed %v; want %d of each", number, list, keyed, len(cons))
	}
	for k, c := range cons {
		if v, ok := keyed[c.Words()]; !ok || v != list[k] {
			t.Fatalf("trial %d: constraint %q keyed %v (present %v), list %v", number, c.Words(), v, ok, list[k])
		}
		if five != nil && (five[c.Words()] != list[k] || five[strconv.Itoa(k)] != list[k] || len(five) != 2*len(cons)) {
			t.Fatalf("trial %d: Optuna 5's trial.constraints %v; want %q and %d both %v", number, five, c.Words(), k, list[k])
		}
	}
}

// checkOptunaTimes: each trial's datetimes as Optuna read them are the
// instants stored, to the microsecond: timezone-aware in UTC ("+00:00")
// up to Optuna 4.x, which keeps the datetime as written, naive local time
// from 5.0, which converts.
func checkOptunaTimes(t *testing.T, dsn, name string, v *optunaView) {
	t.Helper()
	_, trials := storedTrials(t, dsn, name)
	major, _ := strconv.Atoi(strings.Split(v.Version, ".")[0])
	read := func(s string) time.Time {
		layout := "2006-01-02T15:04:05.999999-07:00"
		if major >= 5 {
			got, err := time.ParseInLocation("2006-01-02T15:04:05.999999", s, time.Local)
			if err != nil {
				t.Fatalf("Optuna %s: datetime %q: %v (want naive local time)", v.Version, s, err)
			}
			return got
		}
		if !strings.HasSuffix(s, "+00:00") {
			t.Fatalf("Optuna %s: datetime %q, want UTC with +00:00", v.Version, s)
		}
		got, err := time.Parse(layout, s)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for _, tr := range trials {
		got := v.Trials[tr.Number]
		if got.Start == nil || !read(*got.Start).Equal(tr.StartedAt.Truncate(time.Microsecond)) {
			t.Fatalf("trial %d: Optuna's datetime_start %v, stored %v", tr.Number, got.Start, tr.StartedAt)
		}
		if tr.FinishedAt != nil && (got.Complete == nil || !read(*got.Complete).Equal(tr.FinishedAt.Truncate(time.Microsecond))) {
			t.Fatalf("trial %d: Optuna's datetime_complete %v, stored %v", tr.Number, got.Complete, tr.FinishedAt)
		}
	}
}
