package studies_test

import (
	"fmt"
	"testing"

	"optimize/internal/testkit/studykit"
	"optimize/studies"
	"optimize/studies/report"
)

// runStudy runs a slo-cascade study to its total in a fresh environment
// and returns its report.
func runStudy(t testing.TB, sampler string, seed int64, trials int) *report.Report {
	return runTemplateStudy(t, studykit.TempEnv(t, 1), "slo-cascade", sampler, seed, trials)
}

// runTemplateStudy runs study "q" of a template, on its default workload
// and simulation seeds 42-44, to its total and returns its report.
func runTemplateStudy(t testing.TB, env *studies.Env, template, sampler string, seed int64, trials int) *report.Report {
	o := studykit.Study(template, "q", trials)
	o.Sampler, o.SamplerSeed = sampler, seed
	return studykit.RunStudy(t, env, o)
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
