package studies_test

import (
	"context"
	"strings"
	"testing"

	"optimize/internal/testkit/studykit"
	"optimize/search"
	"optimize/strategies"
	"optimize/studies"
	"optimize/studies/report"
)

// A warm-started study's sampler learns from the earlier study's complete
// trials: they are in its history (not among its trials), and it proposes
// with TPE from its first trial instead of drawing startup points.
func TestWarmStart(t *testing.T) {
	env := studykit.TempEnv(t, 1)
	ctx := context.Background()
	first, err := env.Create(ctx, studies.CreateOptions{Template: "slo-cascade", Name: "first", Trials: 8, Seeds: []int64{42}, Sampler: "tpe", SamplerSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Run(ctx, first); err != nil {
		t.Fatal(err)
	}
	second, err := env.Create(ctx, studies.CreateOptions{Template: "slo-cascade", Name: "second", Trials: 3, Seeds: []int64{42},
		Workload: "orthogonal-slo@rate-1.2x", Sampler: "tpe", SamplerSeed: 1, From: "first"})
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Run(ctx, second); err != nil {
		t.Fatal(err)
	}
	g := env.Store.Goptuna()
	id, err := g.GetStudyIDFromName(studies.GoptunaName(second))
	if err != nil {
		t.Fatal(err)
	}
	trials, err := g.GetAllTrials(id)
	if err != nil {
		t.Fatal(err)
	}
	warm, proposed := 0, map[string]int{}
	for _, tr := range trials {
		src := tr.SystemAttrs[search.AttrSource]
		if strings.HasPrefix(src, "warm:first") {
			warm++
		} else {
			proposed[src]++
		}
	}
	if warm != 8 || proposed["tpe"] != 3 || proposed["startup"] != 0 {
		t.Errorf("history: %d warm trials (want 8), own proposals %v (want 3 tpe, no startup)", warm, proposed)
	}
	r, err := report.Load(env.Store, env.Registry, "second")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Complete) != 3 || r.Study.WarmFrom != "first" || r.JSON().WarmFrom != "first" {
		t.Errorf("second: %d complete trials, provenance %q", len(r.Complete), r.Study.WarmFrom)
	}
}

// A template that names its sampler gets it by default; otherwise the
// Gaussian process, whatever the number of objectives.
func TestDefaultSamplerFollowsTheTemplate(t *testing.T) {
	reg := studykit.TempEnv(t, 1).Registry
	for name, want := range map[string]string{"joint-slo": "gp", "slo-cascade": "gp", "capacity-joint": "gp", "capacity": "grid"} {
		tpl, err := reg.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := studies.DefaultSampler(tpl); got != want {
			t.Errorf("%s: default sampler %s, want %s", name, got, want)
		}
	}
	named := strategies.Template{Objectives: make([]strategies.Objective, 3), Sampler: "parego"}
	if got := studies.DefaultSampler(&named); got != "parego" {
		t.Errorf("a template naming parego: default sampler %s, want parego", got)
	}
}
