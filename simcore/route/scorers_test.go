package route

import (
	"math"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"

	"optimize/simcore"
	"optimize/simcore/kv"
)

func TestEffectiveLoad_SumsQueueBatchAndInFlight(t *testing.T) {
	s := Snapshot{QueueDepth: 3, BatchSize: 5, InFlight: 8}
	if got := s.EffectiveLoad(); got != 16 {
		t.Fatalf("EffectiveLoad = %d, want 16", got)
	}
}

func TestScorers_ValuesOnHandBuiltSnapshots(t *testing.T) {
	snaps := []Snapshot{
		{QueueDepth: 2, BatchSize: 3, InFlight: 5, KVUtilization: 0.25}, // load 10
		{QueueDepth: 0, BatchSize: 0, InFlight: 0, KVUtilization: 0},    // load 0
		{QueueDepth: 1, BatchSize: 1, InFlight: 3, KVUtilization: 1},    // load 5
		{QueueDepth: 0, BatchSize: 1, InFlight: 1, KVUtilization: 0.9},  // load 2
	}
	equalLoads := []Snapshot{{InFlight: 4, KVUtilization: 0.5}, {QueueDepth: 2, InFlight: 2}, {BatchSize: 4}}
	tests := []struct {
		name   string
		scorer string
		snaps  []Snapshot
		want   []float64
	}{
		{"queue-depth min-max", "queue-depth", snaps, []float64{0, 1, 0.5, 0.8}},
		{"queue-depth all equal scores 1", "queue-depth", equalLoads, []float64{1, 1, 1}},
		{"queue-depth single instance", "queue-depth", snaps[:1], []float64{1}},
		{"kv-utilization", "kv-utilization", snaps, []float64{0.75, 1, 0, 1 - 0.9}},
		{"load-balance", "load-balance", snaps, []float64{1.0 / 11, 1, 1.0 / 6, 1.0 / 3}},
		{"load-balance equal loads", "load-balance", equalLoads, []float64{0.2, 0.2, 0.2}},
		{"prefix-affinity empty index", "prefix-affinity", snaps, []float64{0, 0, 0, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kind, ok := findScorer(tc.scorer)
			if !ok {
				t.Fatalf("scorer %q missing from the table", tc.scorer)
			}
			s := kind.build(&profileParts{cfg: &Config{}, instances: len(tc.snaps)})
			out := make([]float64, len(tc.snaps))
			s.Score(inputBlocks(1, 2), tc.snaps, out)
			for i := range out {
				if math.Abs(out[i]-tc.want[i]) > 1e-12 {
					t.Fatalf("scores = %v, want %v", out, tc.want)
				}
			}
		})
	}
}

func TestPrefixAffinity_ScoresLeadingRunShare(t *testing.T) {
	p := newPrefixAffinity(nil, 3, 100)
	p.Observe(inputBlocks(10, 11, 12, 13), 0)
	p.Observe(inputBlocks(10, 11), 1)
	p.Observe(inputBlocks(99, 11, 12, 13), 2) // shares blocks, not the first
	tests := []struct {
		name   string
		blocks []uint64
		want   []float64
	}{
		{"full match on 0, half on 1, none on 2", []uint64{10, 11, 12, 13}, []float64{1, 0.5, 0}},
		{"hit after a miss does not count", []uint64{10, 50, 12, 13}, []float64{0.25, 0.25, 0}},
		{"first block missing", []uint64{50, 11, 12}, []float64{0, 0, 0}},
		{"longer than anything recorded", []uint64{10, 11, 12, 13, 14, 15, 16, 17}, []float64{0.5, 0.25, 0}},
		{"no full block", nil, []float64{0, 0, 0}},
	}
	snaps := make([]Snapshot, 3)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := []float64{-1, -1, -1}
			p.Score(inputBlocks(tc.blocks...), snaps, out)
			if !reflect.DeepEqual(out, tc.want) {
				t.Fatalf("scores = %v, want %v", out, tc.want)
			}
		})
	}
}

// inputBlocks returns a request whose input is exactly the given blocks,
// all of them shareable.
func inputBlocks(blocks ...uint64) *simcore.Request {
	n := int32(len(blocks))
	return &simcore.Request{Content: kv.Content{Prefix: blocks, UID: 1, Input: n, Total: n, Shared: n}}
}

// Blocks completed by output tokens (kept for a session's next round) are
// not part of the input: BLIS hashes the input tokens only.
func TestPrefixAffinity_IgnoresOutputBlocks(t *testing.T) {
	p := newPrefixAffinity(nil, 2, 100)
	withOutput := &simcore.Request{Content: kv.Content{Prefix: []uint64{1, 2, 3, 4}, UID: 1, Input: 2, Total: 4, Shared: 4}}
	p.Observe(withOutput, 0)
	if got := p.index.lruOrder(0, nil); !slices.Equal(got, []uint64{2, 1}) {
		t.Fatalf("recorded %v, want [2 1]", got)
	}
	out := make([]float64, 2)
	p.Score(withOutput, make([]Snapshot, 2), out)
	if !slices.Equal(out, []float64{1, 0}) {
		t.Fatalf("scores %v, want [1 0]: 2 of 2 input blocks", out)
	}
	p.Score(inputBlocks(1, 2, 3, 4), make([]Snapshot, 2), out)
	if !slices.Equal(out, []float64{0.5, 0}) {
		t.Fatalf("scores %v, want [0.5 0]", out)
	}
}

// Observe reuses the entries Score's match found only for the request that
// was scored: after Score(a), recording b (as long as a) must record b's
// blocks, not a's.
func TestPrefixAffinity_ObserveOfAnUnscoredRequestRecordsItsOwnBlocks(t *testing.T) {
	p := newPrefixAffinity(nil, 2, 100)
	a, b := inputBlocks(1, 2), inputBlocks(3, 4)
	snaps, out := make([]Snapshot, 2), make([]float64, 2)
	p.Observe(a, 0)
	p.Score(a, snaps, out) // finds a's entries
	p.Observe(b, 1)        // b was never scored
	for _, tc := range []struct {
		r    *simcore.Request
		want []float64
	}{{a, []float64{1, 0}}, {b, []float64{0, 1}}} {
		p.Score(tc.r, snaps, out)
		if !slices.Equal(out, tc.want) {
			t.Fatalf("%v scores %v, want %v", tc.r.Content.Prefix, out, tc.want)
		}
	}
	checkIndexInvariants(t, p.index)
}

// The block hashes are computed once per routing decision, and afresh for
// the next one even when the request is the same object, changed.
func TestRequestBlocks_OncePerDecision(t *testing.T) {
	var b requestBlocks
	r := inputBlocks(1, 2, 3)
	check := func(stage string, want ...uint64) {
		t.Helper()
		if got := b.of(r); !slices.Equal(got, want) {
			t.Fatalf("%s: hashes %v, want %v", stage, got, want)
		}
	}
	check("outside a decision", 1, 2, 3)
	r.Content.Prefix = []uint64{4, 5, 6}
	check("outside a decision, changed", 4, 5, 6)
	b.begin(r)
	check("first read", 4, 5, 6)
	r.Content.Prefix = []uint64{7, 8, 9} // never within a decision: shows the memo
	check("second read", 4, 5, 6)
	b.end()
	b.begin(r)
	check("next decision", 7, 8, 9)
	b.end()
	check("after the decision", 7, 8, 9)
}

// A router routes a request object it has seen before, changed (the engine
// recycles them), exactly as it routes a new one.
func TestWeighted_RecycledRequestsRouteAsNewOnes(t *testing.T) {
	for _, cfg := range append(strategyProfiles(), Config{Policy: "weighted"}) {
		for _, newLoad := range []func(int) *workload{newWorkload, newSessionWorkload} {
			recycled, wr := warmRouter(t, cfg, newLoad, 0)
			fresh, wf := warmRouter(t, cfg, newLoad, 0)
			wf.fresh = true
			for i := range 3000 {
				if a, b := wr.route(recycled), wf.route(fresh); a != b {
					t.Fatalf("%+v, shared %d: request %d went to %d, a new request to %d", cfg, wr.req.Content.Shared, i, a, b)
				}
			}
		}
	}
}

// With one shared system prompt, every instance soon holds the prompt's
// blocks and prefix-affinity stops telling instances apart.
func TestPrefixAffinity_SharedPromptMatchesEveryInstanceEqually(t *testing.T) {
	const instances, prefix, suffix = 8, 32, 16
	r, err := New(Config{Policy: "weighted"}, instances, rand.New(rand.NewSource(7)))
	if err != nil {
		t.Fatal(err)
	}
	w := r.(*weighted)
	snaps := make([]Snapshot, instances)
	seen := make([]bool, instances)
	next := uint64(1 << 40)
	request := func() *simcore.Request {
		blocks := make([]uint64, 0, prefix+suffix)
		for k := range prefix {
			blocks = append(blocks, uint64(k+1))
		}
		for range suffix {
			next++
			blocks = append(blocks, next)
		}
		return inputBlocks(blocks...)
	}
	for routed := 0; ; routed++ {
		if routed > 1000 {
			t.Fatalf("after %d requests some instance never got one: %v", routed, seen)
		}
		all := true
		for _, s := range seen {
			all = all && s
		}
		if all {
			break
		}
		chosen := w.Route(request(), snaps, 0)
		seen[chosen] = true
		snaps[chosen].InFlight++ // the engine's in-flight counter
	}
	out := make([]float64, instances)
	w.scorers[0].Score(request(), snaps, out)
	for i, v := range out {
		if v != float64(prefix)/float64(prefix+suffix) {
			t.Fatalf("instance %d prefix score %v, want %v for all: %v", i, v, 32.0/48, out)
		}
	}
}

func TestParseScorers(t *testing.T) {
	tests := []struct {
		in      string
		want    []ScorerWeight
		wantErr string
	}{
		{in: "", want: nil},
		{in: "  ", want: nil},
		{in: "prefix-affinity:3,queue-depth:2", want: []ScorerWeight{{"prefix-affinity", 3}, {"queue-depth", 2}}},
		{in: " load-balance : 0.5 , kv-utilization:1e1", want: []ScorerWeight{{"load-balance", 0.5}, {"kv-utilization", 10}}},
		{in: "queue-depth", wantErr: `malformed scorer "queue-depth": want name:weight`},
		{in: "queue-depth:2,", wantErr: `malformed scorer ""`},
		{in: "queue-dept:2", wantErr: `unknown scorer "queue-dept" (allowed: active-request-scorer, kv-cache-utilization-scorer, kv-pressure, kv-pressure-slo, kv-utilization, load-aware-scorer, load-balance, no-hit-lru-scorer, precise-prefix, precise-prefix-cache-scorer, prefix-affinity, prefix-cache-scorer, queue-depth, queue-scorer, running-requests-size-scorer, session-affinity, session-affinity-scorer, slo-priority, token-load)`},
		{in: "queue-depth:2,queue-depth:1", wantErr: `duplicate scorer "queue-depth"`},
		{in: "queue-depth:abc", wantErr: `scorer "queue-depth": weight "abc" is not a number`},
		{in: "queue-depth:-1", wantErr: `scorer "queue-depth": weight -1 must be a finite number > 0`},
		{in: "queue-depth:0", wantErr: `weight 0 must be a finite number > 0`},
		{in: "queue-depth:NaN", wantErr: `weight NaN must be`},
		{in: "queue-depth:+Inf", wantErr: `weight +Inf must be`},
		{in: "queue-depth:1e308,load-balance:1e308", wantErr: `sum to +Inf`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseScorers(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Fatalf("error spans lines: %q", err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestNames_AreSortedOrDefaultFirstAndBuildable(t *testing.T) {
	if got := ScorerNames(); !reflect.DeepEqual(got, []string{"active-request-scorer", "kv-cache-utilization-scorer", "kv-pressure", "kv-pressure-slo", "kv-utilization",
		"load-aware-scorer", "load-balance", "no-hit-lru-scorer", "precise-prefix", "precise-prefix-cache-scorer", "prefix-affinity",
		"prefix-cache-scorer", "queue-depth", "queue-scorer", "running-requests-size-scorer", "session-affinity", "session-affinity-scorer",
		"slo-priority", "token-load"}) {
		t.Fatalf("ScorerNames = %v", got)
	}
	if got := PolicyNames(); !reflect.DeepEqual(got, []string{"round-robin", "least-loaded", "weighted"}) {
		t.Fatalf("PolicyNames = %v", got)
	}
	for _, p := range PolicyNames() {
		for _, s := range ScorerNames() {
			if _, err := New(Config{Policy: p, Scorers: []ScorerWeight{{s, 1}}}, 2, nil); err != nil {
				t.Fatalf("policy %s scorer %s: %v", p, s, err)
			}
		}
	}
}
