package route

import (
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"optimize/simcore"
)

func mustNew(t testing.TB, cfg Config, n int, rng *rand.Rand) Router {
	t.Helper()
	r, err := New(cfg, n, rng)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRoundRobin_CyclesInInstanceOrder(t *testing.T) {
	for _, policy := range []string{"", "round-robin"} {
		r := mustNew(t, Config{Policy: policy}, 3, nil)
		snaps := []Snapshot{{InFlight: 9}, {}, {}}
		var got []int
		for range 7 {
			got = append(got, r.Route(&simcore.Request{}, snaps, 0))
		}
		want := []int{0, 1, 2, 0, 1, 2, 0}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("policy %q: sequence %v, want %v", policy, got, want)
			}
		}
	}
}

func TestLeastLoaded_PicksMinimumEffectiveLoad(t *testing.T) {
	tests := []struct {
		name  string
		snaps []Snapshot
		want  int
	}{
		{"single instance", []Snapshot{{QueueDepth: 4}}, 0},
		{"min by in-flight", []Snapshot{{InFlight: 3}, {InFlight: 1}, {InFlight: 2}}, 1},
		{"sums all three terms", []Snapshot{{QueueDepth: 1, BatchSize: 1, InFlight: 2}, {InFlight: 5}, {BatchSize: 3}}, 2},
		{"last index", []Snapshot{{BatchSize: 1}, {BatchSize: 1}, {}}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := mustNew(t, Config{Policy: "least-loaded"}, len(tc.snaps), rand.New(rand.NewSource(1)))
			if got := r.Route(&simcore.Request{}, tc.snaps, 0); got != tc.want {
				t.Fatalf("chose %d, want %d", got, tc.want)
			}
		})
	}
}

func TestWeighted_PicksArgmaxOfNormalisedSum(t *testing.T) {
	snaps := []Snapshot{
		{InFlight: 4, KVUtilization: 0.1}, // qd 0,   kv 0.9
		{InFlight: 0, KVUtilization: 0.9}, // qd 1,   kv 0.1
		{InFlight: 2, KVUtilization: 0.0}, // qd 0.5, kv 1
	}
	tests := []struct {
		name    string
		scorers []ScorerWeight
		want    int
	}{
		{"queue-depth alone", []ScorerWeight{{"queue-depth", 1}}, 1},
		{"kv-utilization alone", []ScorerWeight{{"kv-utilization", 5}}, 2},
		// Composites are given per instance in the comments.
		{"kv dominates", []ScorerWeight{{"queue-depth", 1}, {"kv-utilization", 4}}, 2},             // 0.72, 0.28, 0.9
		{"qd dominates", []ScorerWeight{{"queue-depth", 4}, {"kv-utilization", 1}}, 1},             // 0.18, 0.82, 0.6
		{"load-balance", []ScorerWeight{{"load-balance", 1}, {"kv-utilization", 1}}, 2},            // 0.55, 0.55, 0.67
		{"defaults without prefix history", nil, 2},                                                // 2/7·(0.9, 1.1, 1.5)
		{"weights are relative", []ScorerWeight{{"queue-depth", 400}, {"kv-utilization", 100}}, 1}, // as 4:1
		{"prefix-affinity without history defers", []ScorerWeight{{"prefix-affinity", 9}, {"queue-depth", 1}}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := mustNew(t, Config{Policy: "weighted", Scorers: tc.scorers}, len(snaps), rand.New(rand.NewSource(1)))
			if got := r.Route(inputBlocks(1, 2, 3), snaps, 0); got != tc.want {
				t.Fatalf("chose %d, want %d", got, tc.want)
			}
		})
	}
}

func TestWeighted_NormalisesWeightsInGivenOrder(t *testing.T) {
	got := normalisedWeights(DefaultScorers())
	want := []float64{3.0 / 7, 2.0 / 7, 2.0 / 7}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("weights %v, want %v", got, want)
		}
	}
}

// routeSequence routes count identical requests to instances with equal
// snapshots, so every decision is a tie among all of them.
func routeSequence(t *testing.T, policy string, seed int64, count int) []int {
	r := mustNew(t, Config{Policy: policy, Scorers: []ScorerWeight{{"queue-depth", 1}}}, 4, rand.New(rand.NewSource(seed)))
	snaps := make([]Snapshot, 4)
	out := make([]int, count)
	for i := range out {
		out[i] = r.Route(&simcore.Request{}, snaps, 0)
	}
	return out
}

func TestTieBreaking_UsesRouterRNG(t *testing.T) {
	for _, policy := range []string{"least-loaded", "weighted"} {
		t.Run(policy, func(t *testing.T) {
			a, b, again := routeSequence(t, policy, 1, 64), routeSequence(t, policy, 2, 64), routeSequence(t, policy, 1, 64)
			if !slices.Equal(a, again) {
				t.Fatalf("same seed chose differently:\n%v\n%v", a, again)
			}
			if slices.Equal(a, b) {
				t.Fatalf("seeds 1 and 2 chose identically: %v", a)
			}
			var used [4]bool
			for _, c := range a {
				used[c] = true
			}
			if used != [4]bool{true, true, true, true} {
				t.Fatalf("64 random ties among 4 instances left one out: %v", a)
			}
		})
	}
}

func TestTieBreaking_NilRNGPicksLowestIndex(t *testing.T) {
	for _, policy := range []string{"least-loaded", "weighted"} {
		r := mustNew(t, Config{Policy: policy}, 3, nil)
		if got := r.Route(&simcore.Request{}, []Snapshot{{InFlight: 1}, {}, {}}, 0); got != 1 {
			t.Fatalf("%s chose %d, want 1", policy, got)
		}
	}
}

// The router must draw Intn(#tied) exactly when BLIS does (more than one
// tied, collected in instance order) and never otherwise, so that the
// shared stream stays aligned with BLIS's.
func TestTieBreaking_DrawsExactlyLikeBLIS(t *testing.T) {
	cases := []struct {
		snaps []Snapshot
		tied  []int // indices tied at the best value, instance order
	}{
		{[]Snapshot{{InFlight: 1}, {}, {InFlight: 2}, {}}, []int{1, 3}},
		{[]Snapshot{{InFlight: 1}, {InFlight: 3}, {}, {InFlight: 1}}, []int{2}},
		{[]Snapshot{{}, {}, {}, {}}, []int{0, 1, 2, 3}},
		{[]Snapshot{{BatchSize: 1}, {InFlight: 1}, {QueueDepth: 1}, {InFlight: 2}}, []int{0, 1, 2}},
		{[]Snapshot{{InFlight: 5}, {InFlight: 5}, {InFlight: 4}, {InFlight: 5}}, []int{2}},
	}
	for _, policy := range []string{"least-loaded", "weighted"} {
		t.Run(policy, func(t *testing.T) {
			r := mustNew(t, Config{Policy: policy, Scorers: []ScorerWeight{{"queue-depth", 2}, {"load-balance", 1}}},
				4, rand.New(rand.NewSource(42)))
			mirror := rand.New(rand.NewSource(42))
			for round := range 50 {
				c := cases[round%len(cases)]
				want := c.tied[0]
				if len(c.tied) > 1 {
					want = c.tied[mirror.Intn(len(c.tied))]
				}
				if got := r.Route(&simcore.Request{}, c.snaps, 0); got != want {
					t.Fatalf("round %d: chose %d, want %d", round, got, want)
				}
			}
		})
	}
}

func TestNew_RejectsBadConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		n       int
		wantErr string
	}{
		{"unknown policy", Config{Policy: "random"}, 2, `routing.policy: unknown value "random" (allowed: round-robin, least-loaded, weighted)`},
		{"unknown scorer", Config{Policy: "weighted", Scorers: []ScorerWeight{{"latency", 1}}}, 2, `unknown scorer "latency" (allowed: active-request-scorer, kv-cache-utilization-scorer, kv-pressure, kv-pressure-slo, kv-utilization, load-aware-scorer, load-balance, no-hit-lru-scorer, precise-prefix, precise-prefix-cache-scorer, prefix-affinity, prefix-cache-scorer, queue-depth, queue-scorer, running-requests-size-scorer, session-affinity, session-affinity-scorer, slo-priority, token-load)`},
		{"empty scorer name", Config{Policy: "weighted", Scorers: []ScorerWeight{{"", 1}}}, 2, `unknown scorer ""`},
		{"duplicate scorer", Config{Policy: "weighted", Scorers: []ScorerWeight{{"queue-depth", 1}, {"kv-utilization", 1}, {"queue-depth", 2}}}, 2, `duplicate scorer "queue-depth"`},
		{"negative weight", Config{Policy: "weighted", Scorers: []ScorerWeight{{"queue-depth", -2}}}, 2, `scorer "queue-depth": weight -2 must be a finite number > 0`},
		{"zero weight", Config{Policy: "weighted", Scorers: []ScorerWeight{{"queue-depth", 0}}}, 2, `weight 0 must be a finite number > 0`},
		{"NaN weight", Config{Policy: "weighted", Scorers: []ScorerWeight{{"load-balance", math.NaN()}}}, 2, `weight NaN`},
		{"scorer checked for other policies too", Config{Policy: "least-loaded", Scorers: []ScorerWeight{{"qd", 1}}}, 2, `unknown scorer "qd"`},
		{"negative prefix capacity", Config{Policy: "weighted", PrefixIndexCapacity: -1}, 2, `routing.prefix_index_capacity: must be > 0 blocks (0 = default 10000), got -1`},
		{"no instances", Config{}, 0, `routing needs at least 1 instance, got 0`},
		{"negative instances", Config{Policy: "weighted"}, -3, `got -3`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := New(tc.cfg, tc.n, nil)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
			}
			if r != nil || strings.Contains(err.Error(), "\n") {
				t.Fatalf("want nil router and a one-line error, got %v, %q", r, err)
			}
		})
	}
}

func TestWeighted_PrefixIndexCapacityDefaultsAndOverrides(t *testing.T) {
	for _, tc := range []struct{ configured, want int }{{0, DefaultPrefixIndexCapacity}, {2, 2}} {
		r := mustNew(t, Config{Policy: "weighted", PrefixIndexCapacity: tc.configured}, 2, nil)
		p := r.(*weighted).scorers[0].(*prefixAffinity)
		if p.index.capacity != tc.want {
			t.Fatalf("configured %d: capacity %d, want %d", tc.configured, p.index.capacity, tc.want)
		}
	}
}

func TestWeighted_ClampsScoresLikeBLIS(t *testing.T) {
	for _, tc := range []struct{ in, want float64 }{{-0.5, 0}, {0, 0}, {0.25, 0.25}, {1, 1}, {7, 1}} {
		if got := clamp01(tc.in); got != tc.want {
			t.Fatalf("clamp01(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if got := clamp01(math.NaN()); !math.IsNaN(got) {
		t.Fatalf("clamp01(NaN) = %v, want NaN (BLIS lets it through)", got)
	}
	// Out-of-range utilisation (an engine bug) must not make Route panic.
	r := mustNew(t, Config{Policy: "weighted", Scorers: []ScorerWeight{{"kv-utilization", 1}}}, 3, rand.New(rand.NewSource(1)))
	snaps := []Snapshot{{KVUtilization: math.NaN()}, {KVUtilization: 1.5}, {KVUtilization: -1}}
	if got := r.Route(&simcore.Request{}, snaps, 0); got != 2 {
		t.Fatalf("chose %d, want 2 (score clamped to 1)", got)
	}
	snaps = []Snapshot{{KVUtilization: math.NaN()}, {KVUtilization: math.NaN()}}
	if got := r.Route(&simcore.Request{}, snaps, 0); got != 0 {
		t.Fatalf("all-NaN scores chose %d, want 0", got)
	}
}
