package route

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"optimize/simcore"
	"optimize/simcore/kv"
)

// Every expected value below is computed from llm-d's formula (ebab68792),
// stated with each case.

func scoreOf(t *testing.T, s Scorer, r *simcore.Request, snaps []Snapshot) []float64 {
	t.Helper()
	out := make([]float64, len(snaps))
	s.Score(r, snaps, out)
	return out
}

func near(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-12 {
			return false
		}
	}
	return true
}

func TestLLMDLoadScorers_FollowLLMDFormulas(t *testing.T) {
	half := 0.5
	tests := []struct {
		name  string
		s     Scorer
		snaps []Snapshot
		want  []float64
	}{
		// queue-scorer: (max − q)/(max − min) over WaitingQueueSize, 1 when all equal.
		{"queue-scorer", llmdQueue{}, []Snapshot{{QueueDepth: 3, BatchSize: 50}, {QueueDepth: 7}, {QueueDepth: 5}, {QueueDepth: 7}},
			[]float64{1, 0, 0.5, 0}},
		{"queue-scorer, all equal", llmdQueue{}, []Snapshot{{QueueDepth: 4}, {QueueDepth: 4, InFlight: 9}}, []float64{1, 1}},
		// running-requests-size-scorer: the same over RunningRequestsSize.
		{"running-requests-size-scorer", llmdRunningRequests{}, []Snapshot{{BatchSize: 2, QueueDepth: 9}, {BatchSize: 2}, {BatchSize: 6}},
			[]float64{1, 1, 0}},
		// kv-cache-utilization-scorer: 1 − KVCacheUsagePercent.
		{"kv-cache-utilization-scorer", kvUtilization{}, []Snapshot{{KVUtilization: 0.25}, {KVUtilization: 0.9}}, []float64{0.75, 0.1}},
		// active-request-scorer: n <= idleThreshold → 1, else (max − n)/max × maxBusyScore.
		{"active-request-scorer, defaults", newLLMDActiveRequest(&LLMDParams{}),
			[]Snapshot{{InFlight: 0}, {InFlight: 2}, {InFlight: 4}, {InFlight: 8}}, []float64{1, 6.0 / 8, 4.0 / 8, 0}},
		{"active-request-scorer, idleThreshold 2, maxBusyScore 0.5", newLLMDActiveRequest(&LLMDParams{ActiveIdleThreshold: 2, ActiveMaxBusyScore: &half}),
			[]Snapshot{{InFlight: 0}, {InFlight: 2}, {InFlight: 4}, {InFlight: 8}}, []float64{1, 1, 4.0 / 8 * 0.5, 0}},
		// load-aware-scorer: q = 0 → 0.5, else 0.5 × (1 − min(q, T)/T).
		{"load-aware-scorer, T 128", llmdLoadAware{threshold: 128}, []Snapshot{{QueueDepth: 0}, {QueueDepth: 64}, {QueueDepth: 200}},
			[]float64{0.5, 0.5 * (1 - 64.0/128), 0}},
		{"load-aware-scorer, T 10", llmdLoadAware{threshold: 10}, []Snapshot{{QueueDepth: 5}}, []float64{0.25}},
	}
	for _, tc := range tests {
		if got := scoreOf(t, tc.s, nil, tc.snaps); !near(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
	// Out-of-range maxBusyScore is ignored, as llm-d does: 1.
	bad := 1.5
	if got := (&LLMDParams{ActiveMaxBusyScore: &bad}).ActiveMaxBusyScoreInEffect(); got != 1 {
		t.Errorf("maxBusyScore 1.5 reads %v, want 1", got)
	}
}

// prefixPrompt is a request of input tokens whose first 16 KV blocks (256
// tokens at 16 a block) are a prompt shared by every prefixPrompt, the rest
// its own stream uid.
func prefixPrompt(input int32, uid uint64) *simcore.Request {
	shared := make([]uint64, 16)
	for i := range shared {
		shared[i] = 1000 + uint64(i)
	}
	r := &simcore.Request{InputLen: input}
	r.Content = kv.NewContent(shared, uid, int(input), 0, 16, 16)
	return r
}

func TestPrefixCacheScorer_FollowsLLMDsApproximateIndex(t *testing.T) {
	// Auto-tuned: B = max(64, 16) = 64 tokens. A (300 tokens) has
	// ceil(300/64) = 5 blocks, the last partial; B (320) has 5 full ones.
	// Both share blocks 0-3 (tokens 0-255, the shared prompt); block 4 is
	// each one's own.
	cfg := &Config{KVBlockSize: 16}
	x := newLLMDPrefixIndex(cfg, 3)
	s := &llmdPrefixScorer{index: x, lengthScale: DefaultLLMDMatchLengthScaleTokens}
	snaps := make([]Snapshot, 3)
	a, b, c := prefixPrompt(300, 1), prefixPrompt(320, 2), prefixPrompt(128, 3)
	if got := scoreOf(t, s, a, snaps); !near(got, []float64{0, 0, 0}) {
		t.Fatalf("empty index: %v", got)
	}
	x.Observe(a, 1)
	x.Observe(scoreOf2(s, c, snaps), 0) // C: 2 blocks, both shared, on instance 0
	// score = matched / total: instance 1 holds blocks 0-3 of B's 5 → 4/5;
	// instance 0 holds 0-1; the walk stops at block 4, which nobody holds.
	if got := scoreOf(t, s, b, snaps); !near(got, []float64{2.0 / 5, 4.0 / 5, 0}) {
		t.Errorf("matched/total: got %v, want [0.4 0.8 0]", got)
	}
	x.Observe(b, 2)

	// matchLengthWeight w, scale S: (1 − w)·m/n + w·min(1, m·B/S)².
	// Instance 2 now holds all 5 of B's blocks: m = 5, n = 5.
	s2 := &llmdPrefixScorer{index: x, lengthWeight: 0.5, lengthScale: 8192}
	l := min(1, 5*64.0/8192)
	if got := scoreOf(t, s2, prefixPrompt(320, 2), snaps); !near(got[2:], []float64{0.5*l*l + 0.5*1}) {
		t.Errorf("with matchLengthWeight 0.5: got %v, want %v", got[2], 0.5*l*l+0.5)
	}
}

func scoreOf2(s Scorer, r *simcore.Request, snaps []Snapshot) *simcore.Request {
	s.Score(r, snaps, make([]float64, len(snaps)))
	return r
}

func TestPrefixCacheScorer_CapsAndLRU(t *testing.T) {
	snaps := make([]Snapshot, 2)
	// maxPrefixTokensToMatch 128 → 128/64 = 2 blocks hashed: B matches 2/2.
	tokens := 128
	cfg := &Config{KVBlockSize: 16, LLMD: LLMDParams{Prefix: LLMDPrefixParams{MaxPrefixTokensToMatch: &tokens}}}
	x := newLLMDPrefixIndex(cfg, 2)
	s := &llmdPrefixScorer{index: x, lengthScale: 8192}
	x.Observe(prefixPrompt(300, 1), 1)
	if got := scoreOf(t, s, prefixPrompt(320, 2), snaps); !near(got, []float64{0, 1}) {
		t.Errorf("2 blocks hashed: got %v, want [0 1]", got)
	}

	// autoTune off, lruCapacityPerServer 3: A's 5 blocks go in in order,
	// so only blocks 2-4 stay; B's walk stops at block 0, held by nobody.
	off := false
	cfg = &Config{KVBlockSize: 16, KVBlocksPerInstance: 1 << 20,
		LLMD: LLMDParams{Prefix: LLMDPrefixParams{AutoTune: &off, BlockSizeTokens: 64, LRUCapacityPerServer: 3}}}
	x = newLLMDPrefixIndex(cfg, 2)
	s = &llmdPrefixScorer{index: x, lengthScale: 8192}
	x.Observe(prefixPrompt(300, 1), 1)
	if got := scoreOf(t, s, prefixPrompt(320, 2), snaps); !near(got, []float64{0, 0}) {
		t.Errorf("evicted first blocks: got %v, want [0 0]", got)
	}
	// llm-d's cap is floor(maxPrefixTokensToMatch / B) blocks: 1-63 tokens
	// at B = 64 is 0 blocks and hashes nothing (prefix-cache-scorer scores
	// 0, the request is never warm); 64 is one block.
	for _, c := range []struct {
		tokens int
		want   []float64
	}{{1, []float64{0, 0}}, {63, []float64{0, 0}}, {64, []float64{0, 1}}} {
		tokens := c.tokens
		cfg := &Config{KVBlockSize: 16, LLMD: LLMDParams{Prefix: LLMDPrefixParams{MaxPrefixTokensToMatch: &tokens}}}
		x := newLLMDPrefixIndex(cfg, 2)
		s := &llmdPrefixScorer{index: x, lengthScale: 8192}
		x.Observe(prefixPrompt(300, 1), 1)
		if got := scoreOf(t, s, prefixPrompt(320, 2), snaps); !near(got, c.want) || x.anyMatch(prefixPrompt(320, 3)) != (c.tokens >= 64) {
			t.Errorf("maxPrefixTokensToMatch %d: got %v, want %v", c.tokens, got, c.want)
		}
	}
	// blockSizeTokens below 64 is raised to 64, as llm-d does.
	cfg.LLMD.Prefix.BlockSizeTokens = 16
	if x := newLLMDPrefixIndex(cfg, 2); x.block != 64 {
		t.Errorf("block size %d, want 64", x.block)
	}
}

func TestNoHitLRU_RanksColdRequestsByLRU(t *testing.T) {
	// Requests of no input hash no block, so every one is cold.
	s := newLLMDNoHitLRU(newLLMDPrefixIndex(&Config{KVBlockSize: 16}, 4), DefaultNoHitLRUSize, 4)
	snaps := make([]Snapshot, 4)
	r := &simcore.Request{}
	// Rank k of N = 4 scores 1 − k/3: never used first in instance order,
	// then used ones least recent first.
	steps := []struct {
		chosen int
		want   []float64
	}{
		{2, []float64{1, 2.0 / 3, 1.0 / 3, 0}}, // none used yet
		{0, []float64{1, 2.0 / 3, 0, 1.0 / 3}}, // never 0,1,3; used 2 (rank 3)
		{3, []float64{0, 1, 1.0 / 3, 2.0 / 3}}, // never 1,3; used 2 (rank 2), 0 (rank 3)
	}
	for _, st := range steps {
		if got := scoreOf(t, s, r, snaps); !near(got, st.want) {
			t.Fatalf("got %v, want %v", got, st.want)
		}
		s.Observe(r, st.chosen)
	}
	// Never used: 1 (rank 0); used, least recent first: 2, 0, 3 (ranks 1-3).
	if got := scoreOf(t, s, r, snaps); !near(got, []float64{1.0 / 3, 1, 2.0 / 3, 0}) {
		t.Errorf("got %v", got)
	}

	// A warm request (some instance holds its first block) scores 0.5
	// everywhere and leaves the LRU alone.
	x := newLLMDPrefixIndex(&Config{KVBlockSize: 16}, 4)
	x.Observe(prefixPrompt(300, 1), 3)
	warm := newLLMDNoHitLRU(x, DefaultNoHitLRUSize, 4)
	if got := scoreOf(t, warm, prefixPrompt(320, 2), snaps); !near(got, []float64{0.5, 0.5, 0.5, 0.5}) {
		t.Errorf("warm: got %v", got)
	}
	warm.Observe(prefixPrompt(320, 2), 1)
	if len(warm.lru) != 0 {
		t.Errorf("a warm request moved the LRU: %v", warm.lru)
	}
}

func TestNoHitLRU_AloneRoutesAsRoundRobinWhenItsProducerHashesNothing(t *testing.T) {
	// llm-d's approx-prefix-cache-producer hashes floor(maxPrefixTokensToMatch
	// / B) blocks, B >= 64: a cap of 1 token is 0 blocks, so no request ever
	// matches, every one is cold, and the LRU cycles through the endpoints.
	const n = 5
	one := 1
	rr := mustNew(t, Config{Policy: "round-robin"}, n, nil)
	lru := mustNew(t, Config{Policy: "weighted", Picker: "max-score-picker", Scorers: []ScorerWeight{{"no-hit-lru-scorer", 1}},
		LLMD: LLMDParams{Prefix: LLMDPrefixParams{MaxPrefixTokensToMatch: &one}}}, n, rand.New(rand.NewSource(1)))
	snaps := make([]Snapshot, n)
	for k := range 3 * n {
		r := prefixPrompt(300, uint64(k+1))
		if a, b := rr.Route(r, snaps, 0), lru.Route(r, snaps, 0); a != b {
			t.Fatalf("request %d: round-robin %d, no-hit-lru %d", k, a, b)
		}
	}
}

// freshPrompt is a prompt of input tokens sharing no block with
// prefixPrompt's or another fresh prompt's.
func freshPrompt(input int32, uid uint64) *simcore.Request {
	r := &simcore.Request{InputLen: input}
	r.Content = kv.NewContent(nil, 1<<40+uid, int(input), 0, 16, 0)
	return r
}

func TestNoHitLRU_WithTheEPPsAutomaticProducer(t *testing.T) {
	// A config of no-hit-lru-scorer alone: llm-d's loader adds
	// approx-prefix-cache-producer with its defaults (auto-tuned B =
	// max(16, 64) = 64 tokens, up to 131072/64 blocks), so a request whose
	// first 64-token block an endpoint served is warm. Hand computation, 4
	// endpoints:
	//   1. A (300 tokens, shared first 256): cold, nothing used, ranks 0-3
	//      score 1, 2/3, 1/3, 0: endpoint 0; A's 5 blocks indexed at 0.
	//   2. B (same first 256 tokens): warm (endpoint 0 holds block 0):
	//      0.5 everywhere, so max-score-picker's tie-break draws uniformly;
	//      the LRU does not move.
	//   3. C (fresh): cold; never used 1, 2, 3 score 1, 2/3, 1/3, used 0
	//      (rank 3) scores 0: endpoint 1, whatever B drew.
	counts := make([]int, 4)
	for seed := range int64(400) {
		rt := mustNew(t, Config{Policy: "weighted", Picker: "max-score-picker", Scorers: []ScorerWeight{{"no-hit-lru-scorer", 1}}, KVBlockSize: 16},
			4, rand.New(rand.NewSource(seed)))
		snaps := make([]Snapshot, 4)
		if got := rt.Route(prefixPrompt(300, 1), snaps, 0); got != 0 {
			t.Fatalf("seed %d: cold A went to %d, want 0", seed, got)
		}
		counts[rt.Route(prefixPrompt(320, 2), snaps, 0)]++
		if got := rt.Route(freshPrompt(300, 3), snaps, 0); got != 1 {
			t.Fatalf("seed %d: cold C went to %d, want 1 (the LRU ignores the warm B)", seed, got)
		}
	}
	// Warm B: uniform over 4, 100 expected each of 400; ±40 is > 4 sd.
	for i, c := range counts {
		if c < 60 || c > 140 {
			t.Errorf("warm B chose endpoint %d %d times of 400, want about 100 (uniform tie-break): %v", i, c, counts)
		}
	}
}

func TestSessionAffinityScorer_PinsLaterRounds(t *testing.T) {
	// encoded_endpoint_header: the endpoint the session last went to scores 1, the others 0.
	rt := mustNew(t, Config{Policy: "weighted", Picker: "max-score-picker",
		Scorers: []ScorerWeight{{"session-affinity-scorer", 1}, {"queue-scorer", 0.5}}}, 3, nil)
	r := &simcore.Request{Session: 5}
	if got := rt.Route(r, []Snapshot{{QueueDepth: 3}, {QueueDepth: 3}, {QueueDepth: 0}}, 0); got != 2 {
		t.Fatalf("first round went to %d, want 2 (shortest queue)", got)
	}
	// Later: 1·1 + 0.5·0 = 1 on instance 2 beats 0 + 0.5·1 on instance 0.
	if got := rt.Route(r, []Snapshot{{QueueDepth: 0}, {QueueDepth: 3}, {QueueDepth: 3}}, 0); got != 2 {
		t.Fatalf("second round went to %d, want 2", got)
	}
}

func TestPrecisePrefixCacheScorer_IsLLMDsLongestPrefixOverTotal(t *testing.T) {
	// score = leading blocks the instance's cache holds / input blocks.
	rt := mustNew(t, Config{Policy: "weighted", Picker: "max-score-picker", Scorers: []ScorerWeight{{"precise-prefix-cache-scorer", 1}}}, 2, nil)
	sink := rt.(KVEventSink)
	for _, h := range []uint64{10, 11} {
		sink.KVEvent(1, h, true, 0)
	}
	if got := rt.Route(inputBlocks(10, 11, 12, 13), make([]Snapshot, 2), 0); got != 1 {
		t.Fatalf("chose %d, want 1 (2/4 against 0/4)", got)
	}
}

func TestMaxScorePicker_RawWeightsAndRandomnessOnlyOnTies(t *testing.T) {
	cfg := Config{Policy: "weighted", Picker: "max-score-picker",
		Scorers: []ScorerWeight{{"queue-scorer", 2}, {"load-aware-scorer", 1}}}
	rt := mustNew(t, cfg, 3, nil).(*weighted)
	if rt.weights[0] != 2 || rt.weights[1] != 1 {
		t.Fatalf("weights %v, want the raw 2 and 1", rt.weights)
	}
	// No tie: the RNG is not drawn from.
	rng := rand.New(rand.NewSource(7))
	rt = mustNew(t, cfg, 3, rng).(*weighted)
	snaps := []Snapshot{{QueueDepth: 8}, {QueueDepth: 0}, {QueueDepth: 4}}
	for range 10 {
		if got := rt.Route(&simcore.Request{}, snaps, 0); got != 1 {
			t.Fatalf("chose %d, want 1", got)
		}
	}
	if rng.Int63() != rand.New(rand.NewSource(7)).Int63() {
		t.Error("max-score-picker drew from the RNG without a tie")
	}
	// A three-way tie: uniform, each about a third of 3,000.
	assertUniform(t, rt, make([]Snapshot, 3), "a three-way tie")
}

func TestRandomPicker_IgnoresScores(t *testing.T) {
	rt := mustNew(t, Config{Policy: "weighted", Picker: "random-picker", Scorers: []ScorerWeight{{"queue-scorer", 1}}}, 3,
		rand.New(rand.NewSource(3)))
	snaps := []Snapshot{{QueueDepth: 0}, {QueueDepth: 50}, {QueueDepth: 100}}
	assertUniform(t, rt, snaps, "random-picker ignores the scores")
}

func TestWeightedRandomPicker_ProbabilityProportionalToScore(t *testing.T) {
	// A-Res keys u^(1/score): instance i wins with probability score_i / Σ score.
	// queue-scorer over queues 0, 1, 2 gives 1, 0.5, 0: 2/3, 1/3, never.
	rt := mustNew(t, Config{Policy: "weighted", Picker: "weighted-random-picker", Scorers: []ScorerWeight{{"queue-scorer", 1}}}, 3,
		rand.New(rand.NewSource(5)))
	snaps := []Snapshot{{QueueDepth: 0}, {QueueDepth: 1}, {QueueDepth: 2}}
	counts := make([]int, 3)
	const n = 30000
	for range n {
		counts[rt.Route(&simcore.Request{}, snaps, 0)]++
	}
	if counts[2] != 0 || math.Abs(float64(counts[0])/n-2.0/3) > 0.015 {
		t.Errorf("counts %v, want about %d, %d, 0", counts, 2*n/3, n/3)
	}
	// Every score 0: uniform, as random-picker.
	rt = mustNew(t, Config{Policy: "weighted", Picker: "weighted-random-picker", Scorers: []ScorerWeight{{"load-aware-scorer", 1}}}, 3,
		rand.New(rand.NewSource(5)))
	full := []Snapshot{{QueueDepth: 500}, {QueueDepth: 500}, {QueueDepth: 500}}
	assertUniform(t, rt, full, "every score 0")
}

func TestPicker_UnknownIsAOneLineError(t *testing.T) {
	_, err := New(Config{Policy: "weighted", Picker: "best"}, 2, nil)
	if err == nil || err.Error() != `routing.picker: unknown value "best" (allowed: blis, max-score-picker, random-picker, weighted-random-picker)` {
		t.Errorf("err = %v", err)
	}
}

func TestLLMDPluginType(t *testing.T) {
	for scorer, want := range map[string]string{
		"queue-scorer": "queue-scorer", "kv-utilization": "kv-cache-utilization-scorer", "precise-prefix": "precise-prefix-cache-scorer",
		"prefix-affinity": "", "queue-depth": "", "no-such": "",
	} {
		if got := LLMDPluginType(scorer); got != want {
			t.Errorf("LLMDPluginType(%q) = %q, want %q", scorer, got, want)
		}
	}
}

func TestLLMDScorers_DoNotAllocate(t *testing.T) {
	rt := mustNew(t, Config{Policy: "weighted", Picker: "max-score-picker", KVBlockSize: 16, Scorers: []ScorerWeight{
		{"queue-scorer", 2}, {"kv-cache-utilization-scorer", 2}, {"prefix-cache-scorer", 3}, {"no-hit-lru-scorer", 1},
		{"active-request-scorer", 1}, {"load-aware-scorer", 1}, {"running-requests-size-scorer", 1}}}, 4, rand.New(rand.NewSource(1)))
	snaps := make([]Snapshot, 4)
	reqs := make([]*simcore.Request, 8)
	for i := range reqs {
		reqs[i] = prefixPrompt(300, uint64(i%4+1))
	}
	for _, r := range reqs { // warm the scratch buffers and the LRUs
		rt.Route(r, snaps, 0)
	}
	k := 0
	if a := testing.AllocsPerRun(200, func() { rt.Route(reqs[k%len(reqs)], snaps, 0); k++ }); a != 0 {
		t.Errorf("%v allocations per routing decision, want 0", a)
	}
}

// A profile of no scorer (empty, not nil) is llm-d's too: every instance
// scores 0, so max-score-picker's tie-break spreads requests uniformly;
// BLIS's picker, which divides by the weights' sum, refuses it.
func TestEmptyProfile_LLMDPickersChooseUniformlyBLISRefuses(t *testing.T) {
	rt := mustNew(t, Config{Policy: "weighted", Picker: "max-score-picker", Scorers: []ScorerWeight{}}, 3, rand.New(rand.NewSource(9)))
	snaps := []Snapshot{{QueueDepth: 0}, {QueueDepth: 50}, {QueueDepth: 100}}
	assertUniform(t, rt, snaps, "no scorer reads the queues")
	_, err := New(Config{Policy: "weighted", Scorers: []ScorerWeight{}}, 3, nil)
	if err == nil || !strings.Contains(err.Error(), "routing.picker blis needs a scorer") {
		t.Errorf("blis with no scorer: %v", err)
	}
}

// assertUniform routes 3,000 requests against snaps and checks that each
// of the 3 instances gets about a third (850 to 1,150), as a uniform
// choice does (why says what makes it uniform).
func assertUniform(t *testing.T, rt Router, snaps []Snapshot, why string) {
	t.Helper()
	counts := make([]int, len(snaps))
	for range 3000 {
		counts[rt.Route(&simcore.Request{}, snaps, 0)]++
	}
	for i, c := range counts {
		if c < 850 || c > 1150 {
			t.Errorf("%s: instance %d chosen %d of 3000, want about 1000", why, i, c)
		}
	}
}
