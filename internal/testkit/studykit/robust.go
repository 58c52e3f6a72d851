package studykit

import (
	"context"
	"testing"

	"optimize/strategies"
	"optimize/studies"
	"optimize/studies/report"
)

// RobustStudyWithMaxRate runs a small robust study name in env (slo-cascade,
// trials trials on seeds 42 and 43, in the workload's own operating point
// and near capacity), then `validate --max-rate` of its best trial on
// held-out seeds 100 and 101 at a 10 % tolerance, and returns its report
// with the evidence loaded.
func RobustStudyWithMaxRate(t testing.TB, env *studies.Env, name string, trials int) *report.Report {
	t.Helper()
	o := Study("slo-cascade", name, trials)
	o.Seeds = []int64{42, 43}
	o.Robust = strategies.Robust{Regimes: []string{strategies.BaseRegime, "near-capacity"}}
	RunStudy(t, env, o)
	if _, err := env.MaxRate(context.Background(), name, studies.MaxRateOptions{Trial: -1, Seeds: []int64{100, 101}, Tolerance: 0.1}); err != nil {
		t.Fatal(err)
	}
	r, err := report.Load(env.Store, env.Registry, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.LoadEvidence(r); err != nil {
		t.Fatal(err)
	}
	return r
}
