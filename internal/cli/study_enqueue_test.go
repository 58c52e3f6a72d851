package cli

import (
	"encoding/json"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"optimize/studies/report"
)

// enqueueVector is an slo-cascade vector with two floats off the
// sampler's grid (critical_base's step is 0.019, age_weight_per_ms's a
// log step): an enqueued trial runs them as given.
var enqueueVector = map[string]string{
	"critical_base": "12.3456789", "standard_base": "4", "age_weight_per_ms": "0.0123456789",
	"sheddable_urgency_ms": "150", "critical_blend": "0.35", "critical_prefill_chunk": "300",
}

func enqueueArgs(dsn, name string, v map[string]string) []string {
	args := []string{"study", "enqueue", name, "--storage", dsn}
	for k, x := range v {
		args = append(args, "--param", k+"="+x)
	}
	return args
}

// checkEnqueued asserts that trial c of r ran exactly v and that its
// objectives, violations and score are evaluate's for v, to the bit.
func checkEnqueued(t *testing.T, r *report.Report, c *report.Result, v map[string]string, got evaluateOut) {
	t.Helper()
	params := r.ParamMap(c.Params)
	for k, x := range v {
		if p, ok := params[k].(float64); !ok || search12(p) != x {
			t.Errorf("trial %d %s = %v, enqueued %s", c.Number, k, params[k], x)
		}
	}
	for k, o := range r.Template.Objectives {
		if g := got.Objectives[o.Name]; g == nil || math.Float64bits(*g) != math.Float64bits(c.Objectives[k]) {
			t.Errorf("trial %d %s: stored %v, evaluate %v", c.Number, o.Name, c.Objectives[k], g)
		}
	}
	if math.Float64bits(got.Score) != math.Float64bits(c.Score) || math.Float64bits(got.Violation) != math.Float64bits(c.Violation) {
		t.Errorf("trial %d: stored score %v violation %v, evaluate %v %v", c.Number, c.Score, c.Violation, got.Score, got.Violation)
	}
}

func search12(x float64) string {
	b, _ := json.Marshal(x)
	return string(b)
}

// An enqueued vector is the study's next trial and one of its total; on a
// finished study the total grows by one and resume runs just it. Both
// trials hold exactly the enqueued parameters (off-grid floats included)
// and evaluate's objectives and score for them, bit for bit.
func TestStudyEnqueueRunsTheVectorAsTheNextTrial(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "q.db")
	if code, _, errs := run(t, "study", "create", "slo-cascade", "--trials", "2", "--seeds", "42", "--name", "q",
		"--storage", dsn, "--workers", "0"); code != 0 {
		t.Fatalf("create: %s", errs)
	}
	code, out, errs := run(t, enqueueArgs(dsn, "q", enqueueVector)...)
	if code != 0 || !strings.Contains(out, "total stays 2 trials") {
		t.Fatalf("enqueue on a study with room: exit %d: %s%s", code, out, errs)
	}
	if code, _, errs := run(t, "study", "resume", "q", "--storage", dsn, "--workers", "1"); code != 0 {
		t.Fatalf("resume: %s", errs)
	}
	second := map[string]string{}
	for k, v := range enqueueVector {
		second[k] = v
	}
	second["critical_base"], second["sheddable_urgency_ms"] = "3.33", "777.7"
	code, out, errs = run(t, enqueueArgs(dsn, "q", second)...)
	if code != 0 || !strings.Contains(out, "grows 2 → 3 trials") {
		t.Fatalf("enqueue on a finished study: exit %d: %s%s", code, out, errs)
	}
	if code, _, errs := run(t, "study", "resume", "q", "--storage", dsn, "--workers", "1"); code != 0 {
		t.Fatalf("resume: %s", errs)
	}
	r := openReport(t, dsn, "q")
	if len(r.Complete) != 3 || r.Complete[0].Number != 0 || r.Complete[2].Number != 2 {
		t.Fatalf("%d complete trials, want 3 numbered 0–2", len(r.Complete))
	}
	var in strings.Builder
	for _, v := range []map[string]string{enqueueVector, second} {
		m := map[string]json.Number{}
		for k, x := range v {
			m[k] = json.Number(x)
		}
		line, _ := json.Marshal(m)
		in.Write(append(line, '\n'))
	}
	code, _, got, errs := evaluateRun(t, in.String(), "slo-cascade", "--seeds", "42")
	if code != 0 || len(got) != 2 {
		t.Fatalf("evaluate: exit %d: %s", code, errs)
	}
	checkEnqueued(t, r, &r.Complete[0], enqueueVector, got[0])
	checkEnqueued(t, r, &r.Complete[2], second, got[1])
	if r.Complete[1].Score == r.Complete[0].Score {
		t.Errorf("trial 1 (the sampler's) scored as trial 0 (enqueued): the queue ran twice?")
	}
}

// A vector the template refuses is one line naming the parameter and
// what it accepts, exit 2, and nothing is enqueued.
func TestStudyEnqueueRefusesABadVector(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "r.db")
	if code, _, errs := run(t, "study", "create", "slo-cascade", "--trials", "1", "--seeds", "42", "--name", "r",
		"--storage", dsn, "--workers", "0"); code != 0 {
		t.Fatalf("create: %s", errs)
	}
	with := func(k, v string) map[string]string {
		out := map[string]string{}
		for a, b := range enqueueVector {
			out[a] = b
		}
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
		return out
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{enqueueArgs(dsn, "r", with("critical_blend", "")), "--param: critical_blend: missing (numbers in [0, 1]); give every active parameter: "},
		{enqueueArgs(dsn, "r", with("critical_blend", "1.5")), "--param: critical_blend: 1.5 is out of range (allowed: numbers in [0, 1])"},
		{enqueueArgs(dsn, "r", with("nope", "1")), "--param: nope: template slo-cascade has no such parameter (parameters: critical_base, "},
		{enqueueArgs(dsn, "r", with("critical_prefill_chunk", "3.5")), "--param: critical_prefill_chunk: 3.5 is not a whole number"},
		{append(enqueueArgs(dsn, "r", enqueueVector), "--param", "critical_base"), `--param: "critical_base": want name=value`},
		{[]string{"study", "enqueue", "r", "--storage", dsn}, "--param: give the vector"},
		{enqueueArgs(dsn, "nosuch", enqueueVector), `study not found: "nosuch"`},
	} {
		code, _, errs := run(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q, want exit 2 and one line with %q", c.args[2:], code, errs, c.want)
		}
	}
	// joint-slo: a parameter its condition leaves inactive.
	dsn2 := filepath.Join(t.TempDir(), "j.db")
	if code, _, errs := run(t, "study", "create", "joint-slo", "--trials", "1", "--seeds", "42", "--name", "j",
		"--storage", dsn2, "--workers", "0"); code != 0 {
		t.Fatalf("create: %s", errs)
	}
	args := []string{"study", "enqueue", "j", "--storage", dsn2}
	for _, p := range []string{"prefix_affinity_weight=3", "queue_depth_weight=2", "kv_utilization_weight=2", "slo_priority_weight=0",
		"token_load_weight=0", "critical_prefill_chunk=256", "token_budget=2048", "admission=always-admit", "scheduler=fcfs", "critical_base=12"} {
		args = append(args, "--param", p)
	}
	want := "--param: critical_base: has no effect unless parameter scheduler is priority-fcfs (it is fcfs)"
	if code, _, errs := run(t, args...); code != 2 || !strings.Contains(errs, want) {
		t.Errorf("inactive parameter: exit %d, %q, want %q", code, errs, want)
	}
	if r := openReport(t, dsn, "r"); r.Study.TrialsTotal != 1 {
		t.Errorf("refused vectors grew the total to %d", r.Study.TrialsTotal)
	}
}

// A worker process (cmd/worker) picks the enqueued vector up from the
// database as the study's next trial.
func TestStudyEnqueueWorkerProcessRunsIt(t *testing.T) {
	optimizeBin, workerBin := workerBinaries(t)
	dsn := filepath.Join(t.TempDir(), "w.db")
	if out, err := exec.Command(optimizeBin, "study", "create", "slo-cascade", "--trials", "1", "--seeds", "42",
		"--name", "w", "--storage", dsn, "--workers", "0").CombinedOutput(); err != nil {
		t.Fatalf("create: %v\n%s", err, out)
	}
	if out, err := exec.Command(optimizeBin, enqueueArgs(dsn, "w", enqueueVector)...).CombinedOutput(); err != nil {
		t.Fatalf("enqueue: %v\n%s", err, out)
	}
	p := start(t, "worker", workerBin, nil, "--storage", dsn, "--study", "w", "--concurrency", "1")
	if err := <-p.done; err != nil {
		t.Fatalf("worker: %v\n%s", err, p.err.String())
	}
	r := openReport(t, dsn, "w")
	if len(r.Complete) != 1 {
		t.Fatalf("%d complete trials, want 1", len(r.Complete))
	}
	params := r.ParamMap(r.Complete[0].Params)
	for k, x := range enqueueVector {
		if p, ok := params[k].(float64); !ok || search12(p) != x {
			t.Errorf("the worker's trial %s = %v, enqueued %s", k, params[k], x)
		}
	}
}
