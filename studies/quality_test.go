package studies

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"optimize/simcore/cluster"
	"optimize/storage"
	"optimize/strategies"
)

// testEnv opens a study environment on a fresh SQLite file.
func testEnv(t testing.TB, workers int) *Env {
	t.Helper()
	return testEnvAt(t, filepath.Join(t.TempDir(), "q.db"), workers)
}

// testEnvAt opens a study environment on dsn.
func testEnvAt(t testing.TB, dsn string, workers int) *Env {
	t.Helper()
	st, err := storage.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	reg, base := builtins(t)
	return &Env{Store: st, Registry: reg, Base: base, Progress: io.Discard, Workers: workers, Worker: WorkerID()}
}

// builtins are the built-in templates and the standard cluster.
func builtins(t testing.TB) (*strategies.Registry, cluster.Config) {
	t.Helper()
	reg, err := strategies.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	std, err := strategies.Standard()
	if err != nil {
		t.Fatal(err)
	}
	return reg, std
}

// runStudy runs a study to its total and returns its report.
func runStudy(t testing.TB, sampler string, seed int64, trials int) *Report {
	return runStudyIn(t, testEnv(t, 1), sampler, seed, trials)
}

// runStudyIn is runStudy in a given environment.
func runStudyIn(t testing.TB, env *Env, sampler string, seed int64, trials int) *Report {
	return runTemplateStudy(t, env, "slo-cascade", sampler, seed, trials)
}

// runTemplateStudy runs a study of a template, on its default workload and
// simulation seeds 42-44, to its total and returns its report.
func runTemplateStudy(t testing.TB, env *Env, template, sampler string, seed int64, trials int) *Report {
	ctx := context.Background()
	row, err := env.Create(ctx, CreateOptions{Template: template, Name: "q", Trials: trials,
		Seeds: []int64{42, 43, 44}, Sampler: sampler, SamplerSeed: seed})
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Run(ctx, row); err != nil {
		t.Fatal(err)
	}
	r, err := env.Load("q")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A study is repeatable: one worker, same sampler seed, same trials —
// every one of them, past TPE's startup trials, not just the best.
func TestStudyRepeatable(t *testing.T) {
	trials := func() []string {
		r := runStudy(t, "tpe", 5, 14)
		out := make([]string, len(r.Complete))
		for i, c := range r.Complete {
			out[i] = fmt.Sprintf("trial %d: params %v objectives %v score %v", c.Number, c.Params, c.Objectives, c.Score)
		}
		return out
	}
	a, b := trials(), trials()
	if len(a) != 14 || len(b) != 14 {
		t.Fatalf("%d and %d complete trials, want 14", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, different trials:\n%s\n%s", a[i], b[i])
		}
	}
}
