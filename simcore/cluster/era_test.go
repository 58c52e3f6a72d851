package cluster

import (
	"strings"
	"testing"

	"optimize/simcore"
	"optimize/simcore/latency"
	"optimize/simcore/route"
	"optimize/simcore/simtest"
)

func runEra(t *testing.T, cfg Config, reqs []*simcore.Request) (*Engine, *simtest.SliceSource) {
	t.Helper()
	src := simtest.NewSliceSource(reqs)
	eng, err := New(cfg, src)
	if err != nil {
		t.Fatal(err)
	}
	for eng.stepOnce() {
	}
	return eng, src
}

// TestAugustSingleRequestCountsEveryOutputToken: the one-request case of
// TestSingleRequestArithmetic in the August era changes only the output
// token count, 128 instead of 127 (the prefill's token counts), and with it
// tokens/s; every latency and the departure stay exactly as they were.
func TestAugustSingleRequestCountsEveryOutputToken(t *testing.T) {
	cfg := testConfig(1, 132139)
	cfg.Era = simcore.EraAugust2026
	r := simtest.Request(1_000_000, 256, 128, 16, nil, 1)
	eng, src := runEra(t, cfg, []*simcore.Request{r})
	s := eng.summarize()
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"TTFT ms", s.TTFT.Mean, 15.739},
		{"E2E ms", s.E2E.Mean, 1122.925},
		{"output tokens", s.OutputTokens, 128},
		{"tokens/s", s.TokensPerSec, 128 / 1.891885},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v exactly", c.name, c.got, c.want)
		}
	}
	if src.Left[0] != 1_891_885 {
		t.Errorf("request left at %d µs, want 1891885", src.Left[0])
	}
}

// TestAugustCountsOutputOfCompletedRequests: in a preemption-heavy run the
// August era counts exactly Σ output over the (all completed) requests;
// the March era counts every decode step, a victim's re-decodes again, so
// more than Σ (output − 1).
func TestAugustCountsOutputOfCompletedRequests(t *testing.T) {
	reqs := func() []*simcore.Request {
		var reqs []*simcore.Request
		for i := 0; i < 200; i++ {
			reqs = append(reqs, simtest.Request(int64(i*200), 150+int32(i%5)*40, 80+int32(i%9)*25, 16, nil, uint64(i+1)))
		}
		return reqs
	}
	var outputs float64
	for _, r := range reqs() {
		outputs += float64(r.OutputLen)
	}
	march, _ := runEra(t, testConfig(1, 90), reqs())
	cfg := testConfig(1, 90)
	cfg.Era = simcore.EraAugust2026
	august, _ := runEra(t, cfg, reqs())
	m, a := march.summarize(), august.summarize()
	if m.Preemptions < 10 || a.Preemptions < 10 || a.Completed != 200 || m.Completed != 200 {
		t.Fatalf("preemptions %v / %v, completed %v / %v: want ≥ 10 and all 200", m.Preemptions, a.Preemptions, m.Completed, a.Completed)
	}
	if a.OutputTokens != outputs {
		t.Errorf("August output tokens = %v, want Σ output = %v", a.OutputTokens, outputs)
	}
	if !(m.OutputTokens > outputs-200) {
		t.Errorf("March output tokens = %v, want above Σ(output − 1) = %v (re-decodes count again)", m.OutputTokens, outputs-200)
	}
}

// TestAugustQueuedBeforeStepAtSameTime: an event's sub orders a queued
// request (0) before a step (1) of the same instance at the same time,
// even when the step was scheduled first; the March era's events (all 0)
// keep schedule order.
func TestAugustQueuedBeforeStepAtSameTime(t *testing.T) {
	step := event{time: 100, seq: 1, rank: rankInstance0, kind: evStep, sub: 1}
	queued := event{time: 100, seq: 2, rank: rankInstance0, kind: evQueued}
	if !queued.before(&step) || step.before(&queued) {
		t.Error("August: the queued request must come before the step")
	}
	step.sub = 0
	if queued.before(&step) || !step.before(&queued) {
		t.Error("March: the step scheduled first must come first")
	}
	later := event{time: 99, seq: 3, rank: rankInstance0, kind: evStep, sub: 1}
	if !later.before(&queued) {
		t.Error("an earlier time must come first whatever its sub")
	}
}

// TestMaxModelLenDropsWhatDoesNotFit: with a 1024-token window a request
// of input + output = 1024 runs, one of 1025 and one whose input alone is
// 1024 are dropped at the wait queue; without a window all three run.
func TestMaxModelLenDropsWhatDoesNotFit(t *testing.T) {
	reqs := func() []*simcore.Request {
		return []*simcore.Request{
			simtest.Request(0, 1000, 24, 16, nil, 1),
			simtest.Request(10, 1000, 25, 16, nil, 2),
			simtest.Request(20, 1024, 1, 16, nil, 3),
		}
	}
	cfg := testConfig(1, 1000)
	cfg.MaxModelLen = 1024
	eng, _ := runEra(t, cfg, reqs())
	if s := eng.summarize(); s.Completed != 1 || s.Dropped != 2 {
		t.Errorf("window 1024: completed %v, dropped %v; want 1 and 2", s.Completed, s.Dropped)
	}
	eng, _ = runEra(t, testConfig(1, 1000), reqs())
	if s := eng.summarize(); s.Completed != 3 || s.Dropped != 0 {
		t.Errorf("no window: completed %v, dropped %v; want 3 and 0", s.Completed, s.Dropped)
	}
}

// TestEraAndWindowValidation: unknown eras and negative windows are
// one-line errors naming the setting.
func TestEraAndWindowValidation(t *testing.T) {
	cfg := testConfig(1, 100)
	cfg.Era = "2026-05"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "era") || !strings.Contains(err.Error(), "f90a1e3a") {
		t.Errorf("era 2026-05: error %v, want one naming era and the allowed values", err)
	}
	cfg = testConfig(1, 100)
	cfg.MaxModelLen = -1
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "max_model_len") {
		t.Errorf("window −1: error %v, want one naming max_model_len", err)
	}
}

// TestAugustJoinsStepAtItsQueuedTime: A (input 256) reaches the queue at
// 2500 µs and prefills until 13934 µs, when its first decode step is due;
// B (input 256, arriving at 11434 µs) reaches the queue at 13934 µs too.
// In the August era B joins that step (scheduling delay 2500 µs, like A's);
// in the March era the step, scheduled first, runs first, and B waits for
// A's decode step (6913 µs) as well: mean delays 2.5 ms vs (2500 + 9413)/2.
func TestAugustJoinsStepAtItsQueuedTime(t *testing.T) {
	reqs := func() []*simcore.Request {
		return []*simcore.Request{
			simtest.Request(0, 256, 8, 16, nil, 1),
			simtest.Request(11434, 256, 8, 16, nil, 2),
		}
	}
	march, _ := runEra(t, testConfig(1, 1000), reqs())
	cfg := testConfig(1, 1000)
	cfg.Era = simcore.EraAugust2026
	august, _ := runEra(t, cfg, reqs())
	if got := august.summarize().SchedulingDelay.Mean; got != 2.5 {
		t.Errorf("August mean scheduling delay %v ms, want 2.5", got)
	}
	if got := march.summarize().SchedulingDelay.Mean; got != 5.9565 {
		t.Errorf("March mean scheduling delay %v ms, want 5.9565", got)
	}
}

// TestSnapshotRefreshFollowsEra: left to the era, routing signals are
// refreshed every 50 ms in the August era (BLIS f90a1e3a's default) and
// read fresh in the March era (7fd7a88d's); an interval given, 0
// included, holds in both, and a negative one other than the era's mark is
// an error naming the setting.
func TestSnapshotRefreshFollowsEra(t *testing.T) {
	for _, c := range []struct {
		era         simcore.Era
		given, want int64
	}{
		{simcore.EraMarch2026, SnapshotRefreshOfEra, 0},
		{simcore.EraAugust2026, SnapshotRefreshOfEra, 50_000},
		{simcore.EraAugust2026, 0, 0},
		{simcore.EraMarch2026, 20_000, 20_000},
		{simcore.EraAugust2026, 20_000, 20_000},
	} {
		cfg := testConfig(4, 1000)
		cfg.Era, cfg.SnapshotRefresh = c.era, c.given
		eng, err := New(cfg, simtest.NewSliceSource(nil))
		if err != nil {
			t.Fatal(err)
		}
		if got := eng.cfg.SnapshotRefresh; got != c.want {
			t.Errorf("era %s, given %d: refresh every %d µs, want %d", c.era, c.given, got, c.want)
		}
	}
	if got := Defaults().SnapshotRefresh; got != SnapshotRefreshOfEra {
		t.Errorf("default refresh %d, want the era's (%d)", got, SnapshotRefreshOfEra)
	}
	cfg := testConfig(1, 100)
	cfg.SnapshotRefresh = -2
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "routing.snapshot_refresh_us") {
		t.Errorf("refresh −2: error %v, want one naming routing.snapshot_refresh_us", err)
	}
}

// An era given as f90a1e3a makes BLIS f90a1e3a's `blis run` defaults the
// defaults of what is left unset (trained-physics, BLIS's KV estimate, its
// weighted profile, a 50 ms cache-signal delay); set values win, and
// without the era the simulator's own defaults hold.
func TestEraGivenTakesBLISDefaults(t *testing.T) {
	base := Defaults()
	base.Model, base.GPU, base.TP, base.Data = "meta-llama/llama-3.1-8b-instruct", "H100", 1, testData()
	own := base
	w, err := own.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if w.Kind() != "blackbox" || own.KVCapacityRuleInEffect() != "vllm" || own.CacheSignalDelayInEffect() != 0 ||
		own.ScorersInEffect()[0].Name != "prefix-affinity" {
		t.Fatalf("own defaults: %s, %s, %d µs, %v", w.Kind(), own.KVCapacityRuleInEffect(), own.CacheSignalDelayInEffect(), own.ScorersInEffect())
	}
	blis := base
	blis.Era = simcore.EraAugust2026
	if w, err = blis.Resolve(); err != nil {
		t.Fatal(err)
	}
	scorers := blis.ScorersInEffect()
	if w.Kind() != "trained-physics" || blis.KVCapacityRuleInEffect() != "blis-f90a1e3a" || blis.CacheSignalDelayInEffect() != 50_000 ||
		len(scorers) != 3 || scorers[0] != (route.ScorerWeight{Name: "precise-prefix-cache-scorer", Weight: 2}) || scorers[1].Weight != 1 {
		t.Fatalf("f90a1e3a defaults: %s, %s, %d µs, %v", w.Kind(), blis.KVCapacityRuleInEffect(), blis.CacheSignalDelayInEffect(), scorers)
	}
	// The blocks are BLIS's estimate: 26,312 on H100 at TP1, the figure
	// BLIS f90a1e3a prints for this world, where vLLM's rule gives 28,796.
	own.LatencyModel = "trained-physics"
	ownBlocks, err1 := own.KVBlocks(mustResolve(t, &own))
	blisBlocks, err2 := blis.KVBlocks(mustResolve(t, &blis))
	if err1 != nil || err2 != nil || blisBlocks != 26_312 || ownBlocks != 28_796 {
		t.Fatalf("KV blocks: BLIS's %d (%v), vLLM's %d (%v); want 26312 and 28796", blisBlocks, err2, ownBlocks, err1)
	}
	set := blis
	set.LatencyModel, set.KVCapacityRule, set.Routing.CacheSignalDelay = "roofline", "vllm", 0
	set.Routing.Scorers = []route.ScorerWeight{{Name: "queue-depth", Weight: 1}}
	if w, err = set.Resolve(); err != nil || w.Kind() != "roofline" || set.KVCapacityRuleInEffect() != "vllm" ||
		set.CacheSignalDelayInEffect() != 0 || set.ScorersInEffect()[0].Name != "queue-depth" {
		t.Fatalf("set values under the era: %v %v %s %d %v", w.Kind(), err, set.KVCapacityRuleInEffect(), set.CacheSignalDelayInEffect(), set.ScorersInEffect())
	}
}

func mustResolve(t *testing.T, c *Config) latency.Resolved {
	t.Helper()
	w, err := c.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	return w
}
