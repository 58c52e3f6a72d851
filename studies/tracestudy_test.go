package studies_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"optimize/internal/testkit"
	"optimize/internal/testkit/studykit"
	"optimize/simcore/errtext"
	"optimize/simcore/workload"
	"optimize/storage"
	"optimize/studies"
)

// A study on a trace tunes on windows of its first half, one per seed,
// and validate replays windows of its second half: disjoint from and
// later than every window the study saw, reported by window.
func TestTraceStudyIsHeldOutInTime(t *testing.T) {
	testkit.Datasets(t)
	env := studykit.TempEnv(t, 2)
	ctx := context.Background()
	const asked = "mooncake-conversation?window=0s-8m&seed-window=40s&slo-mix=critical=0.2,standard=0.5,sheddable=0.3"
	// The trace carries no latency targets, and slo-cascade bounds every
	// class's SLO attainment: the study gives them, as --set would.
	targets := []storage.ConfigFile{{Kind: storage.KindSettings, Path: "--set",
		Data: "slo.ttft_target_ms.critical: 500\nslo.ttft_target_ms.standard: 2000\nslo.ttft_target_ms.sheddable: 10000\n"}}
	o := studies.CreateOptions{Template: "slo-cascade", Name: "tr", Trials: 4, Seeds: []int64{42, 43}, Sampler: "random", SamplerSeed: 1, Workload: asked, BaseFrom: targets}
	r := studykit.RunStudy(t, env, o)
	if r.Study.Workload != asked { // its span and window length given, nothing to write out
		t.Fatalf("stored workload %q, want %q", r.Study.Workload, asked)
	}
	// Each seed replays its own window, not the same rows with another
	// SLO mix: the two baselines saw different prompts.
	if a, b := r.BaseSeeds[0].InputTokens, r.BaseSeeds[1].InputTokens; a == b || a == 0 {
		t.Errorf("seeds 42 and 43 replayed %v and %v input tokens: want two different windows", a, b)
	}
	tw := r.StudyTraceWindows()
	if tw == nil || len(tw.Seeds) != 2 || tw.Seeds[1].Span != "40s-1m20s" {
		t.Fatalf("study windows %+v: want seed 43 on 40s-1m20s", tw)
	}
	var show bytes.Buffer
	r.WriteTable(&show)
	if !strings.Contains(show.String(), "seed 42 → window 1 (0s-40s)") || !strings.Contains(show.String(), "held out for study validate: windows 7–12") {
		t.Errorf("study show does not name the windows:\n%s", show.String())
	}

	v, err := env.Validate(ctx, "tr", studies.ValidateOptions{Trial: -1})
	if err != nil {
		t.Fatal(err)
	}
	if !v.Windows || len(v.Seeds) != 6 || len(v.WindowSpans) != 6 {
		t.Fatalf("validation windows %v (%v): want the second half's 6 windows of 40 s", v.Seeds, v.WindowSpans)
	}
	var lastStudied int64
	for _, s := range tw.Seeds {
		w, _ := workload.ParseTraceWindow(s.Span)
		lastStudied = max(lastStudied, w.End)
	}
	for i, span := range v.WindowSpans {
		w, err := workload.ParseTraceWindow(span)
		if err != nil {
			t.Fatal(err)
		}
		if w.Start < 4*60e6 || w.Start < lastStudied || w.End > 8*60e6 {
			t.Errorf("held-out window %d is %s: want it in the second half (4m-8m), after the study's windows (to %d µs)", v.Seeds[i], span, lastStudied)
		}
	}
	c := v.Candidates[0]
	if e := c.Objectives[r.Template.Objectives[r.Template.Primary].Name]; e.Seeds != 6 || !strings.Contains(c.Detail, "/6 windows") {
		t.Errorf("primary objective over %d held-out windows, detail %q: want 6 windows", e.Seeds, c.Detail)
	}
	var text bytes.Buffer
	v.WriteText(&text, r.Template)
	if !strings.Contains(text.String(), "Held-out validation: trace windows 7–12 (4m0s-8m0s)") {
		t.Errorf("validate text does not name the windows:\n%s", text.String())
	}

	// Held-out data of a trace study are windows of the second half.
	for _, bad := range []struct {
		o    studies.ValidateOptions
		want string
	}{
		{studies.ValidateOptions{Trial: -1, Seeds: []int64{100, 101}}, "--windows"},
		{studies.ValidateOptions{Trial: -1, Windows: []int64{2, 8}}, "window 2 is not held out"},
		{studies.ValidateOptions{Trial: -1, Windows: []int64{8}}, "at least 2"},
	} {
		_, err := env.Validate(ctx, "tr", bad.o)
		if _, usage := err.(errtext.UsageError); !usage || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("validate %+v: %v, want a usage error naming %q", bad.o, err, bad.want)
		}
	}
}
