package cluster

import (
	"os"
	"slices"
	"testing"

	"optimize/simcore"
	"optimize/simcore/route"
	"optimize/simcore/simtest"
	"optimize/simcore/workload"
)

// llmdDefaultRouting is llm-d's default EndpointPickerConfig (ebab68792):
// queue-scorer 2, kv-cache-utilization-scorer 2, prefix-cache-scorer 3,
// max-score-picker, the prefix index at its defaults.
func llmdDefaultRouting() route.Config {
	return route.Config{Policy: "weighted", Picker: "max-score-picker", Scorers: []route.ScorerWeight{
		{Name: "queue-scorer", Weight: 2}, {Name: "kv-cache-utilization-scorer", Weight: 2}, {Name: "prefix-cache-scorer", Weight: 3}}}
}

// countingSource counts, per instance, the requests that left the system.
type countingSource struct {
	simcore.Source
	perInstance []int
	sequence    []int32 // instance of each request, by id
}

func (c *countingSource) Done(r *simcore.Request, at simcore.Tick, completed bool) {
	if r.Instance >= 0 {
		c.perInstance[r.Instance]++
	}
	for int(r.ID) >= len(c.sequence) {
		c.sequence = append(c.sequence, -1)
	}
	c.sequence[r.ID] = r.Instance
	c.Source.Done(r, at, completed)
}

func runCounting(t *testing.T, cfg Config, src simcore.Source) *countingSource {
	t.Helper()
	cs := &countingSource{Source: src, perInstance: make([]int, cfg.NumInstances)}
	eng, err := New(cfg, cs)
	if err != nil {
		t.Fatal(err)
	}
	eng.Run()
	return cs
}

// A burst of 12 requests at t = 0 on 3 instances: every request is routed
// before any reaches a queue (the pre-queue delay α0 + α1·input is
// milliseconds), so queue-scorer and kv-cache-utilization-scorer give every
// instance 1 and add 2 + 2 = 4 everywhere; prefix-cache-scorer decides.
// Requests 0, 2, …, 10 (P) share a 512-token prompt (600 tokens each:
// ceil(600/64) = 10 blocks of 64, the first 8 shared); 1, 3, …, 11 (U)
// share nothing.
//
//   - P0: no instance holds anything: a three-way tie at 4, the router
//     draws Intn(3) = a.
//   - every U: the walk stops at its first block, held by nobody: a tie at
//     4, one Intn(3) each.
//   - P2 … P10: instance a holds blocks 0-7 of P0's prompt → 8/10 = 0.8,
//     composite 4 + 3·0.8 = 6.4 against 4: instance a, no draw.
//
// So a gets the 6 P requests plus the U draws that name it, and the draws
// are the router stream's first 7 Intn(3), made here in the same order.
func TestLLMDDefault_SmallBurstByHand(t *testing.T) {
	const blockSize = 16
	prompt := simtest.Prefix(7, 512/blockSize)
	var reqs []*simcore.Request
	for k := range 12 {
		if k%2 == 0 {
			reqs = append(reqs, simtest.Request(0, 600, 8, blockSize, prompt, uint64(k+1)))
		} else {
			reqs = append(reqs, simtest.Request(0, 600, 8, blockSize, nil, uint64(k+1)))
		}
	}
	cfg := testConfig(3, 10000)
	cfg.Routing = llmdDefaultRouting()
	got := runCounting(t, cfg, simtest.NewSliceSource(reqs))

	rng := simcore.SubsystemRNG(cfg.Seed, "router")
	want := make([]int32, 12)
	a := int32(rng.Intn(3))
	want[0] = a
	for k := 1; k < 12; k++ {
		if k%2 == 0 {
			want[k] = a
		} else {
			want[k] = int32(rng.Intn(3))
		}
	}
	if !slices.Equal(got.sequence, want) {
		t.Fatalf("instances %v, by hand %v", got.sequence, want)
	}
	if got.perInstance[a] < 6 {
		t.Errorf("instance %d (the prompt's) has %d requests, want at least the 6 sharing the prompt", a, got.perInstance[a])
	}
}

// seedsBurst is the BLIS parity workload: orthogonal-slo, open loop,
// 1,000 requests at 2,000/s, seed 42.
func seedsBurst(t *testing.T) simcore.Source {
	t.Helper()
	spec, err := workload.Library{FS: os.DirFS("../../internal/cli/testdata/blis"), Dir: "."}.Spec("orthogonal-slo.ours")
	if err != nil {
		t.Fatal(err)
	}
	src, err := workload.NewGenerator(spec, workload.Options{Seed: 42, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func seedsBurstConfig(routing route.Config) Config {
	c := baselineConfig()
	c.Routing = routing
	c.Seed = 42
	return c
}

// On the seeds' burst llm-d's default profile spreads the requests much
// less evenly than BLIS's default weighted profile (seed 42: BLIS 123-130
// per instance, llm-d 83-163): queue-scorer reads the waiting queue only,
// where BLIS's queue-depth also counts requests routed and still in the
// pre-queue delay, so during a burst llm-d's load signal lags and the
// prefix and KV scores, and the random tie-breaks, decide more often.
func TestLLMDDefault_SeedsBurstSpreadsUnlikeBLIS(t *testing.T) {
	blis := runCounting(t, seedsBurstConfig(baselineConfig().Routing), seedsBurst(t)).perInstance
	llmd := runCounting(t, seedsBurstConfig(llmdDefaultRouting()), seedsBurst(t)).perInstance
	t.Logf("per instance: BLIS %v, llm-d %v", blis, llmd)
	if sum(blis) != 1000 || sum(llmd) != 1000 {
		t.Fatalf("requests %d and %d, want 1000", sum(blis), sum(llmd))
	}
	bRange, lRange := slices.Max(blis)-slices.Min(blis), slices.Max(llmd)-slices.Min(llmd)
	if bRange > 10 || lRange < 60 {
		t.Errorf("busiest − idlest instance: BLIS %d (want <= 10), llm-d %d (want >= 60)", bRange, lRange)
	}
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// no-hit-lru-scorer alone, with a prefix producer that hashes nothing,
// sees every request as cold and cycles through its LRU: the very
// sequence of round-robin.
func TestNoHitLRU_RoutesTheSeedsBurstAsRoundRobin(t *testing.T) {
	rr := runCounting(t, seedsBurstConfig(route.Config{Policy: "round-robin"}), seedsBurst(t)).sequence
	// Its prefix producer hashing nothing (maxPrefixTokensToMatch 1, below
	// the 64-token block), every request is cold: round-robin exactly.
	one := 1
	cold := route.Config{Policy: "weighted", Picker: "max-score-picker",
		Scorers: []route.ScorerWeight{{Name: "no-hit-lru-scorer", Weight: 1}}}
	cold.LLMD.Prefix.MaxPrefixTokensToMatch = &one
	lru := runCounting(t, seedsBurstConfig(cold), seedsBurst(t)).sequence
	if len(rr) != 1000 || !slices.Equal(rr, lru) {
		t.Fatalf("sequences differ (%d and %d requests)", len(rr), len(lru))
	}
	// With the producer llm-d's loader adds at its defaults, requests that
	// share a first 64-token block with one already routed are warm and go
	// where the picker's tie-break draws: the sequence is no longer
	// round-robin's.
	warm := cold
	warm.LLMD.Prefix.MaxPrefixTokensToMatch = nil
	if seq := runCounting(t, seedsBurstConfig(warm), seedsBurst(t)).sequence; slices.Equal(rr, seq) {
		t.Error("no-hit-lru with the default producer routed the burst round-robin: no request was warm")
	}
}
