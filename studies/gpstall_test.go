package studies_test

import (
	"testing"

	"optimize/internal/testkit/studykit"
)

// joint-slo's sampler seed 4 (one worker, the default sampler gp) finds
// 0.297 of the baseline's critical TTFT P99 at trial 11, a plateau: half
// its later trials score exactly that, every one with the token budget at
// its top, 2048. Without gp's stall rule (search/gpsampler.go,
// gpStallTrials) it is still there after 100 trials; with it, the
// stalled proposals try the critical base priority at its top, and from
// there a lower budget pays: 0.266 after 50 trials. One seed's
// trajectory, so any change to gp moves it; the rule's measure is over
// 80 seeds (BENCHMARKS.md, "gp leaves a plateau").
func TestGPLeavesJointSLOsPlateau(t *testing.T) {
	if testing.Short() {
		t.Skip("a 50-trial joint-slo study (a few seconds)")
	}
	o := studykit.Study("joint-slo", "seed4", 50)
	o.Sampler, o.SamplerSeed = "", 4 // the template's own, gp
	r := studykit.RunStudy(t, studykit.TempEnv(t, 1), o)
	if r.Study.Sampler != "gp" {
		t.Fatalf("sampler %q, want the default gp", r.Study.Sampler)
	}
	for _, row := range r.Table() {
		if row.Name == "critical_ttft_p99" {
			if ratio := 1 + row.Delta; ratio > 0.28 {
				t.Errorf("best critical TTFT P99 after 50 trials: %.3f of the baseline's, want at most 0.28 (the plateau is 0.297)", ratio)
			}
			return
		}
	}
	t.Fatal("no critical_ttft_p99 row")
}
