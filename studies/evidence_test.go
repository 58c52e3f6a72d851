package studies_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"optimize/internal/testkit"
	"optimize/internal/testkit/studykit"
	"optimize/studies"
	"optimize/studies/report"
)

// A validation of several trials runs the baseline once per workload and
// seed, not once per trial; a regime's verdict is about the gain there,
// where nothing was fitted, so it is never "overfit".
func TestValidationPlanAndRegimeVerdicts(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	ctx := context.Background()
	row, err := env.Create(ctx, studies.CreateOptions{Template: "slo-cascade", Name: "v", Trials: 8, Seeds: []int64{42}, Sampler: "random", SamplerSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Run(ctx, row); err != nil {
		t.Fatal(err)
	}
	r, err := report.Load(env.Store, env.Registry, "v")
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := env.ValidationJobs(r, []int64{100, 101}, []int{r.Complete[0].Number, r.Complete[1].Number, r.Complete[2].Number},
		[]string{"rate-0.5x"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (3 + 1) * 2 * 2; jobs != want {
		t.Errorf("%d jobs, want %d: 3 trials and one baseline, 2 workloads, 2 seeds", jobs, want)
	}
	v, err := env.Validate(ctx, "v", studies.ValidateOptions{Trial: -1, Seeds: []int64{100, 101, 102}, Regimes: []string{"rate-0.5x", "sustained-overload"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, rg := range v.Regimes {
		for _, c := range rg.Candidates {
			if c.Overfit || c.Verdict == report.VerdictOverfit || c.Verdict == report.VerdictHoldsSmaller {
				t.Errorf("%s: verdict %q (overfit %v) at a regime: %s", rg.Name, c.Verdict, c.Overfit, c.Detail)
			}
		}
	}
}

// A trial whose per-seed rows are gone cannot be shown as zeros: the
// report says which trial and why.
func TestMissingSeedRowsAreAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	env := studykit.Env(t, path, 1)
	ctx := context.Background()
	row, err := env.Create(ctx, studies.CreateOptions{Template: "slo-cascade", Name: "m", Trials: 3, Seeds: []int64{42, 43}, Sampler: "random", SamplerSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Run(ctx, row); err != nil {
		t.Fatal(err)
	}
	r, err := report.Load(env.Store, env.Registry, "m")
	if err != nil {
		t.Fatal(err)
	}
	trials, _ := env.Store.Trials(row.ID)
	best := r.Complete[r.Best].Number
	for _, tr := range trials {
		if tr.Number == best {
			testkit.DB(t, path).Exec("DELETE FROM trial_seed_rows WHERE trial_id = ?", tr.ID)
		}
	}
	r, err = report.Load(env.Store, env.Registry, "m")
	if err != nil {
		t.Fatal(err)
	}
	_ = r.JSON()
	if err := r.DetailErr(); err == nil || !strings.Contains(err.Error(), "metrics for 0 of 2 seeds") {
		t.Errorf("DetailErr %v, want the missing seeds named", err)
	}
}
