package cli

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"optimize/storage"
	"optimize/strategies"
)

// createStudy runs a small slo-cascade study in a temporary database.
func createStudy(t *testing.T, trials string) (dsn string) {
	t.Helper()
	dsn = filepath.Join(t.TempDir(), "s.db")
	code, _, errs := run(t, "study", "create", "slo-cascade", "--trials", trials, "--name", "t1",
		"--storage", dsn, "--workers", "2")
	if code != 0 {
		t.Fatalf("create: exit %d: %s", code, errs)
	}
	return dsn
}

// `show --output json` has exactly the documented shape.
func TestStudyShowJSONAndExport(t *testing.T) {
	dsn := createStudy(t, "8")
	code, out, errs := run(t, "study", "show", "t1", "--storage", dsn, "--output", "json")
	if code != 0 {
		t.Fatalf("show: exit %d: %s", code, errs)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"name", "template", "state", "trials_total", "trials_complete", "baseline", "best", "pareto", "hypervolume"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("show JSON lacks %q", k)
		}
	}
	var typed struct {
		State          string
		TrialsComplete int  `json:"trials_complete"`
		TrialsFeasible *int `json:"trials_feasible"`
		Baseline       map[string]any
		Best           struct {
			Trial    int
			Params   map[string]any
			Metrics  map[string]any
			Deltas   map[string]any
			Feasible *bool
		}
		Pareto      []struct{ Trial int }
		Hypervolume float64
	}
	if err := json.Unmarshal([]byte(out), &typed); err != nil {
		t.Fatal(err)
	}
	if typed.State != "complete" || typed.TrialsComplete != 8 || len(typed.Pareto) == 0 || typed.Hypervolume <= 0 {
		t.Fatalf("show: %+v", typed)
	}
	// The count of feasible trials is the study's; the best trial's
	// "feasible" is the glossary's property of that trial, a boolean.
	if typed.TrialsFeasible == nil || *typed.TrialsFeasible < 0 || *typed.TrialsFeasible > 8 || typed.Best.Feasible == nil ||
		(*typed.Best.Feasible && *typed.TrialsFeasible == 0) {
		t.Errorf("show JSON: trials_feasible %v, best.feasible %v; want a count in 0..8 and a boolean, true only if some trial is feasible", typed.TrialsFeasible, typed.Best.Feasible)
	}
	for _, k := range []string{"ttft_ms", "e2e_ms", "tokens_per_sec", "per_slo", "slo_gap"} {
		if typed.Baseline[k] == nil || typed.Best.Metrics[k] == nil || typed.Best.Deltas[k] == nil {
			t.Errorf("metric %q missing from baseline, best metrics or deltas", k)
		}
	}
	base := typed.Baseline["tokens_per_sec"].(float64)
	best := typed.Best.Metrics["tokens_per_sec"].(float64)
	if d := typed.Best.Deltas["tokens_per_sec"].(float64); d != (best-base)/base {
		t.Errorf("delta %v, want (best−baseline)/baseline = %v", d, (best-base)/base)
	}

	code, out, errs = run(t, "study", "show", "t1", "--storage", dsn)
	reg, err := strategies.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	tpl, _ := reg.Get("slo-cascade")
	if code != 0 || strings.Count(out, " importance ") != len(tpl.Params) || !strings.Contains(out, "Pareto front:") {
		t.Fatalf("show text: exit %d, %s\n%s", code, errs, out)
	}
	code, out, errs = run(t, "study", "show", "t1", "--storage", dsn, "--explain")
	if i, j := strings.Index(out, "Pareto front:"), strings.Index(out, "\nGlossary\n"); code != 0 || i < 0 || j < i {
		t.Fatalf("show --explain: exit %d, want the report then the glossary: %s\n%s", code, errs, out)
	}

	code, out, errs = run(t, "study", "export", "t1", "--storage", dsn, "--pareto", "--format", "csv")
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, errs)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+len(typed.Pareto) || recs[0][0] != "trial" || !strings.Contains(strings.Join(recs[0], ","), "critical_ttft_p99_delta") {
		t.Fatalf("export: %d rows for %d Pareto trials, header %v", len(recs), len(typed.Pareto), recs[0])
	}
}

// Bad requests exit 2 with one line and write nothing.
func TestStudyUsageErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "tpl")
	os.MkdirAll(bad, 0o755)
	os.WriteFile(filepath.Join(bad, "broken.yaml"), []byte("name: broken\nworkload: orthogonal-slo\nparameters:\n  - {name: x, type: float, low: 2, high: 1, default: 1, knob: priority.age_weight_per_ms}\n"), 0o644)
	dsn := filepath.Join(dir, "s.db")
	for _, c := range []struct {
		name string
		args []string
		say  string
	}{
		{"unknown template", []string{"study", "create", "nope", "--storage", dsn}, "nope"},
		{"zero trials", []string{"study", "create", "slo-cascade", "--trials", "0", "--storage", dsn}, "--trials"},
		{"absurd trials", []string{"study", "create", "slo-cascade", "--trials", "1000000000000", "--storage", dsn},
			"--trials: 1000000000000 is over the limit of 100000 trials per study (--max-trials raises it)"},
		{"absurd seeds", []string{"study", "create", "slo-cascade", "--seeds", "1-2000", "--storage", dsn},
			"--seeds: 2000 is over the limit of 1000 seeds per study or command (--max-seeds raises it)"},
		{"absurd requests", []string{"study", "create", "slo-cascade", "--workload", "orthogonal-slo@sustained-overload", "--max-requests", "5000", "--storage", dsn},
			"orthogonal-slo.yaml@sustained-overload: num_requests: 10000 is over the limit of 5000 requests per simulated run (--max-requests raises it)"},
		{"zero limit", []string{"study", "create", "slo-cascade", "--max-trials", "0", "--storage", dsn}, "--max-trials: must be ≥ 1, got 0"},
		{"malformed template", []string{"study", "create", "broken", "--storage", dsn, "--templates-dir", bad}, "broken.yaml"},
		{"unknown sampler", []string{"study", "create", "slo-cascade", "--sampler", "cmaes", "--storage", dsn}, "--sampler"},
		{"negative workers", []string{"study", "create", "slo-cascade", "--workers", "-1", "--storage", dsn}, "--workers"},
		{"zero lease", []string{"study", "create", "slo-cascade", "--lease", "0s", "--storage", dsn}, "--lease"},
		{"resume without workers", []string{"study", "resume", "ghost", "--workers", "0", "--storage", dsn}, "--workers"},
		{"zero poll", []string{"study", "wait", "ghost", "--poll", "0s", "--storage", dsn}, "--poll"},
		{"unknown study command", []string{"study", "bogus"}, `unknown command "bogus"`},
		{"unknown command", []string{"bogus"}, `unknown command "bogus"`},
		{"unknown template command", []string{"template", "bogus"}, `unknown command "bogus"`},
		{"optuna of the Pareto front", []string{"study", "export", "ghost", "--format", "optuna", "--pareto", "--storage", dsn}, "--format optuna"},
		{"optuna of one trial", []string{"study", "export", "ghost", "--format", "optuna", "--trial", "3", "--storage", dsn}, "--trial"},
		{"unknown study", []string{"study", "show", "ghost", "--storage", dsn}, "ghost"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := run(t, c.args...)
			if code != 2 || out != "" || strings.Count(strings.TrimRight(errs, "\n"), "\n") != 0 || !strings.Contains(errs, c.say) {
				t.Fatalf("exit %d, stdout %q, stderr %q (want exit 2, one line naming %q)", code, out, errs, c.say)
			}
		})
		if c.name != "unknown study" {
			if _, err := os.Stat(dsn); err == nil {
				t.Fatalf("%s: the database was written", c.name)
			}
		}
	}
}

// buildBinary compiles cmd/optimize for process-level tests.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "optimize")
	cmd := exec.Command("go", "build", "-o", bin, "optimize/cmd/optimize")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return bin
}

// A study killed with SIGKILL mid-run and resumed ends with exactly its
// total of complete trials, unique numbers, and the killed trials re-run.
func TestStudySurvivesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	dsn := filepath.Join(t.TempDir(), "k.db")
	cmd, st := startStudy(t, bin, dsn, "k", 40, 6, nil)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	row, _ := st.StudyByName("k")
	before, _ := st.Trials(row.ID)
	var killed []storage.Trial
	for _, tr := range before {
		if tr.State == storage.TrialRunning && tr.Params != nil {
			killed = append(killed, tr)
		}
	}
	st.Close()

	out, err := exec.Command(bin, "study", "resume", "k", "--storage", dsn, "--workers", "2").CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	st, _ = storage.Open(dsn)
	defer st.Close()
	after, _ := st.Trials(row.ID)
	params := map[string]bool{}
	done := finishedTrials(t, after)
	for _, tr := range done {
		params[storage.EncodeParams(tr.Params)] = true
	}
	if complete := len(done); complete != 40 {
		t.Fatalf("%d complete trials after resume, want exactly 40", complete)
	}
	for _, k := range killed {
		if !params[storage.EncodeParams(k.Params)] {
			t.Errorf("killed trial %d (params %v) was not redone", k.Number, k.Params)
		}
	}
	t.Logf("%d trials were in flight at the kill; %d trial rows in all", len(killed), len(after))
}

// finishedTrials checks a finished study's trial rows — numbers unique,
// nothing left running — and returns the complete ones.
func finishedTrials(t *testing.T, trials []storage.Trial) []storage.Trial {
	t.Helper()
	seen := map[int]bool{}
	var done []storage.Trial
	for _, tr := range trials {
		if seen[tr.Number] {
			t.Fatalf("trial number %d used twice", tr.Number)
		}
		seen[tr.Number] = true
		switch tr.State {
		case storage.TrialComplete:
			done = append(done, tr)
		case storage.TrialRunning:
			t.Errorf("trial %d still running after the study ended", tr.Number)
		}
	}
	return done
}

// waitForTrials polls the database until the study has n complete trials.
// startStudy starts `study create slo-cascade` with two workers in a
// process and returns it, with the store open, once it has after complete
// trials.
func startStudy(t *testing.T, bin, dsn, name string, trials, after int, stderr io.Writer) (*exec.Cmd, *storage.Store) {
	t.Helper()
	cmd := exec.Command(bin, "study", "create", "slo-cascade", "--trials", fmt.Sprint(trials), "--name", name, "--storage", dsn, "--workers", "2")
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	st, err := waitForTrials(dsn, name, int64(after))
	if err != nil {
		cmd.Process.Kill()
		t.Fatal(err)
	}
	return cmd, st
}

func waitForTrials(dsn, name string, n int64) (*storage.Store, error) {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		st, err := storage.Open(dsn)
		if err != nil {
			continue
		}
		row, err := st.StudyByName(name)
		if err == nil {
			if complete, _, _ := st.Counts(row.ID); complete >= n {
				return st, nil
			}
		}
		st.Close()
	}
	return nil, os.ErrDeadlineExceeded
}

// Ctrl-C stops a study cleanly: trials in flight finish and are recorded,
// nothing is left running, and resume completes the total.
func TestStudyInterruptIsClean(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	dsn := filepath.Join(t.TempDir(), "i.db")
	var stderr strings.Builder
	cmd, st := startStudy(t, bin, dsn, "i", 30, 4, &stderr)
	st.Close()
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	// The hint is a command to type: this binary as it was run and the
	// study's name (it used to say a literal NAME).
	hint := "optimize: interrupted (trials in flight were recorded): resume with `" + bin + " study resume i`\n"
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.HasSuffix(stderr.String(), hint) {
		t.Fatalf("interrupted create: %v, stderr %q (want exit 1 and the hint %q)", err, stderr.String(), hint)
	}
	st, _ = storage.Open(dsn)
	row, _ := st.StudyByName("i")
	complete, running, _ := st.Counts(row.ID)
	st.Close()
	if running != 0 || complete >= 30 {
		t.Fatalf("after Ctrl-C: %d complete, %d running (want none running, fewer than 30 complete)", complete, running)
	}
	if out, err := exec.Command(bin, "study", "resume", "i", "--storage", dsn).CombinedOutput(); err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	st, _ = storage.Open(dsn)
	defer st.Close()
	if complete, running, _ = st.Counts(row.ID); complete != 30 || running != 0 {
		t.Fatalf("after resume: %d complete, %d running", complete, running)
	}
}

// --if-absent: a create repeated with the same settings (a retried
// Kubernetes Job) succeeds and leaves the study alone; with other settings,
// or without the flag, it is a usage error naming what differs.
func TestStudyCreateIfAbsent(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "s.db")
	create := []string{"study", "create", "slo-cascade", "--name", "once", "--trials", "3", "--workers", "0", "--storage", dsn}
	for i, want := range []string{"study once created with its baseline", "study once exists already (0/3 trials complete)"} {
		code, out, errs := run(t, append(create, "--if-absent")...)
		if code != 0 || !strings.HasPrefix(out, want) {
			t.Fatalf("create %d: exit %d, stdout %q, stderr %q (want exit 0 and %q)", i+1, code, out, errs, want)
		}
	}
	for _, c := range []struct {
		args []string
		say  string
	}{
		{[]string{"--if-absent", "--trials", "4"}, "exists with --trials 3, not 4"},
		{[]string{"--if-absent", "--seeds", "42"}, "--seeds"},
		{[]string{"--if-absent", "--sampler", "random"}, "--sampler gp, not random"},
		{nil, "already exists"},
	} {
		code, out, errs := run(t, append(create, c.args...)...)
		if code != 2 || out != "" || strings.Count(strings.TrimRight(errs, "\n"), "\n") != 0 || !strings.Contains(errs, c.say) {
			t.Errorf("create %v: exit %d, stdout %q, stderr %q (want exit 2, one line saying %q)", c.args, code, out, errs, c.say)
		}
	}
}

// createTemplateStudy creates study name of template, trials trials with one
// worker, in a fresh SQLite file, and returns the file.
func createTemplateStudy(t *testing.T, template, name string, trials int) string {
	t.Helper()
	dsn := filepath.Join(t.TempDir(), name+".db")
	if code, _, errs := run(t, "study", "create", template, "--trials", strconv.Itoa(trials), "--name", name, "--storage", dsn, "--workers", "1"); code != 0 {
		t.Fatal(errs)
	}
	return dsn
}
