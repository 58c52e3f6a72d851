package studies_test

import (
	"testing"

	"optimize/internal/testkit/studykit"
	"optimize/simcore/metrics"
	"optimize/strategies"
	"optimize/studies/report"
)

// robustRuns runs a robust study of template in regimes on seed 42 with
// the given sampler and returns its report and each trial's mean summary
// per scenario ("" is the study's own), by trial number.
func robustRuns(t *testing.T, template, sampler string, trials int, regimes ...string) (*report.Report, map[int]map[string]metrics.Summary) {
	t.Helper()
	env := studykit.TempEnv(t, 2)
	o := studykit.Study(template, "robust-"+template, trials)
	o.Seeds, o.Sampler = []int64{42}, sampler
	o.Robust = strategies.Robust{Regimes: append([]string{strategies.BaseRegime}, regimes...)}
	r := studykit.RunStudy(t, env, o)
	row, err := env.Store.StudyByName(o.Name)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := env.Store.Trials(row.ID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]map[string]metrics.Summary{}
	for _, tr := range rows {
		runs, err := env.Store.ScenarioMetrics(tr.ID)
		if err != nil {
			t.Fatal(err)
		}
		out[tr.Number] = map[string]metrics.Summary{}
		for _, run := range runs {
			out[tr.Number][run.Scenario] = run.Metrics
		}
	}
	if len(r.Complete) != trials {
		t.Fatalf("%s: %d complete trials, want %d", template, len(r.Complete), trials)
	}
	rj, err := r.Robust(&r.Complete[r.Best])
	if err != nil || rj == nil || len(rj.Scenarios) != 1+len(regimes) {
		t.Fatalf("%s: per-scenario table %+v, %v; want %d scenarios", template, rj, err, 1+len(regimes))
	}
	return r, out
}

// A robust pd-split study varies the KV link as a regime: the first five
// grid points, aggregated on 8 GPUs and 1 to 4 prefill instances with the
// rest decoding (TP1), run at the workload's own point and with the link
// at 5 GB/s. Aggregated has no link, so both scenarios run alike to the
// microsecond; a split cluster's mean TTFT grows by about the longer
// transfers (a ~4,096-token prompt's KV, 0.5 GB on llama-3.1-8b, takes
// 21 ms at 25 GB/s and 107 ms at 5).
func TestRobustPDSplitVariesTheLink(t *testing.T) {
	r, runs := robustRuns(t, "pd-split", "grid", 5, "slow-kv-link")
	for _, c := range r.Complete {
		base, slow := runs[c.Number][""], runs[c.Number]["slow-kv-link"]
		split := r.ParamMap(c.Params)["serving"] == "disaggregated"
		t.Logf("trial %d (%v): TTFT mean %.1f ms, with the slow link %.1f ms", c.Number, r.ParamMap(c.Params)["serving"], base.TTFT.Mean, slow.TTFT.Mean)
		switch {
		case !split && slow.TTFT != base.TTFT:
			t.Errorf("trial %d, aggregated: TTFT %+v with the slow link, %+v without; want the same", c.Number, slow.TTFT, base.TTFT)
		case split && slow.TTFT.Mean < base.TTFT.Mean+50:
			t.Errorf("trial %d, split: TTFT mean %.1f ms with the slow link, %.1f without; want at least 50 ms more", c.Number, slow.TTFT.Mean, base.TTFT.Mean)
		}
	}
}

// A robust autoscale study runs at the ramp and at 1.2 × its rate: the
// autoscaler keeps at least as many GPUs in use under the heavier ramp
// (its mean GPU count, cost_per_hour / price), more unless both sit at
// the pool's maximum, and every scenario reports.
func TestRobustAutoscaleAcrossRates(t *testing.T) {
	r, runs := robustRuns(t, "autoscale", "tpe", 2, "rate-1.2x")
	more := 0
	for _, c := range r.Complete {
		base, heavy := runs[c.Number][""], runs[c.Number]["rate-1.2x"]
		if base.GPUHours == nil || heavy.GPUHours == nil {
			t.Fatalf("trial %d: no gpu_hours (the autoscaler did not run)", c.Number)
		}
		t.Logf("trial %d: mean GPUs %.2f, at 1.2 × the rate %.2f", c.Number, *base.GPUCount, *heavy.GPUCount)
		if *heavy.GPUCount < *base.GPUCount {
			t.Errorf("trial %d: mean GPUs %.3f at 1.2 × the rate, %.3f at the ramp's; want at least as many", c.Number, *heavy.GPUCount, *base.GPUCount)
		}
		if *heavy.GPUCount > *base.GPUCount {
			more++
		}
	}
	if more == 0 {
		t.Error("no trial keeps more GPUs at 1.2 × the rate")
	}
}
