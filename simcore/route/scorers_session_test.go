package route

import (
	"math/rand"
	"strings"
	"testing"

	"optimize/simcore"
)

// token-load is 1 − min(1, in-flight tokens / threshold): 1 when idle,
// falling linearly to 0 at the threshold and staying there above it.
func TestTokenLoad_ScoresOneMinusShareOfThreshold(t *testing.T) {
	snaps := []Snapshot{{InFlightTokens: 0}, {InFlightTokens: 25_000}, {InFlightTokens: 100_000}, {InFlightTokens: 250_000}}
	assertScores(t, scoreWith(t, "token-load", Config{TokenLoadThreshold: 100_000}, nil, snaps), []float64{1, 0.75, 0, 0})

	// The default threshold: 131,072 tokens.
	if got := (&Config{}).TokenLoadThresholdInEffect(); got != 131_072 {
		t.Fatalf("default threshold %d, want 131072", got)
	}
	half := []Snapshot{{InFlightTokens: 65_536}, {InFlightTokens: 131_072}}
	assertScores(t, scoreWith(t, "token-load", Config{}, nil, half), []float64{0.5, 0})
}

// Where queue-depth counts requests, token-load counts their tokens: one
// 4096-token request outweighs three 64-token ones.
func TestTokenLoad_RoutesByTokensNotRequests(t *testing.T) {
	snaps := []Snapshot{
		{InFlight: 1, InFlightTokens: 4096 + 128},
		{InFlight: 3, InFlightTokens: 3 * (64 + 128)},
	}
	for _, tc := range []struct {
		scorer string
		want   int
	}{{"queue-depth", 0}, {"token-load", 1}} {
		r := mustNew(t, Config{Policy: "weighted", Scorers: []ScorerWeight{{tc.scorer, 1}}}, 2, rand.New(rand.NewSource(1)))
		if got := r.Route(&simcore.Request{Session: -1}, snaps, 0); got != tc.want {
			t.Errorf("%s chose %d, want %d", tc.scorer, got, tc.want)
		}
	}
}

func TestTokenLoad_RejectsNegativeThreshold(t *testing.T) {
	_, err := New(Config{Policy: "weighted", TokenLoadThreshold: -1}, 2, nil)
	if err == nil || !strings.Contains(err.Error(), "routing.token_load.threshold_tokens: must be > 0 tokens (0 = default 131072), got -1") {
		t.Fatalf("err = %v", err)
	}
}

// round returns round k of session s (s = -1: a single request).
func round(s, k int32) *simcore.Request {
	return &simcore.Request{Session: s, Round: k, Instance: -1}
}

// A session's first round scores 0 everywhere; once routed, its later
// rounds score 1 on the instance of its latest round and 0 elsewhere.
// Single requests are never pinned.
func TestSessionAffinity_PinsLaterRoundsToTheLatestInstance(t *testing.T) {
	s := newSessionAffinity(8)
	snaps := make([]Snapshot, 3)
	out := make([]float64, 3)

	s.Score(round(7, 0), snaps, out)
	assertScores(t, out, []float64{0, 0, 0})
	s.Observe(round(7, 0), 2)
	s.Score(round(7, 1), snaps, out)
	assertScores(t, out, []float64{0, 0, 1})

	// Another session is not pinned by session 7's record.
	s.Score(round(8, 0), snaps, out)
	assertScores(t, out, []float64{0, 0, 0})

	// A round the other scorers sent elsewhere moves the pin there: that
	// instance now holds the session's whole context.
	s.Observe(round(7, 1), 0)
	s.Score(round(7, 2), snaps, out)
	assertScores(t, out, []float64{1, 0, 0})

	// Single requests (Session -1) are neither recorded nor pinned.
	s.Observe(round(-1, 0), 1)
	s.Score(round(-1, 0), snaps, out)
	assertScores(t, out, []float64{0, 0, 0})
	if n := s.record.lru.byKey.Len(); n != 1 {
		t.Fatalf("record holds %d sessions, want 1", n)
	}
}

// The record keeps the capacity most recently routed sessions: a new one
// beyond it forgets the least recent, whose next round scores as a first.
func TestSessionRecord_ForgetsTheLeastRecentBeyondCapacity(t *testing.T) {
	x := newSessionRecord(3)
	for s := range int32(3) {
		x.remember(s, s)
	}
	x.remember(0, 1) // session 0 routed again: 1 is now the least recent
	x.remember(3, 2) // full: forgets session 1
	want := map[int32]int32{0: 1, 2: 2, 3: 2}
	for s := range int32(5) {
		inst, ok := x.instanceOf(s)
		w, remembered := want[s]
		if ok != remembered || inst != w {
			t.Errorf("session %d: instance %d, %v; want %d, %v", s, inst, ok, w, remembered)
		}
	}
	if x.lru.byKey.Len() != 3 || len(x.lru.entries) != 3 {
		t.Fatalf("%d sessions in the map, %d entries; want 3 and 3", x.lru.byKey.Len(), len(x.lru.entries))
	}
	// Recency order, most recent first: 3, 0, 2.
	var order []int32
	for e := x.lru.head; e != noEntry; e = x.lru.entries[e].next {
		order = append(order, int32(x.lru.entries[e].key-1))
	}
	if len(order) != 3 || order[0] != 3 || order[1] != 0 || order[2] != 2 {
		t.Fatalf("recency order %v, want [3 0 2]", order)
	}
}

// Once full, the record reuses entries: routing new sessions allocates
// nothing.
func TestSessionRecord_FullRecordDoesNotAllocate(t *testing.T) {
	x := newSessionRecord(64)
	next := int32(0)
	step := func() {
		x.instanceOf(next)
		x.remember(next, next%4)
		next++
	}
	for range 1000 {
		step()
	}
	if allocs := testing.AllocsPerRun(2000, step); allocs != 0 {
		t.Fatalf("remember allocates %v times per call", allocs)
	}
	if x.lru.byKey.Len() != 64 {
		t.Fatalf("%d sessions remembered, want 64", x.lru.byKey.Len())
	}
}

// In the weighted router, session-affinity:3 outweighs queue-depth:2: a
// session's second round returns to its first round's instance although
// that instance is now the most loaded, while a new session goes to the
// least loaded.
func TestWeighted_SessionAffinityKeepsASessionOnItsInstance(t *testing.T) {
	r := mustNew(t, Config{Policy: "weighted", Scorers: []ScorerWeight{{"session-affinity", 3}, {"queue-depth", 2}}}, 4, rand.New(rand.NewSource(1)))
	snaps := []Snapshot{{InFlight: 2}, {InFlight: 1}, {InFlight: 3}, {InFlight: 2}}
	first := r.Route(round(5, 0), snaps, 0)
	if first != 1 {
		t.Fatalf("first round went to %d, want 1 (least loaded)", first)
	}
	snaps[1].InFlight = 4 // now the most loaded
	if got := r.Route(round(5, 1), snaps, 1); got != 1 {
		t.Fatalf("second round went to %d, want 1 (the session's instance)", got)
	}
	if got := r.Route(round(6, 0), snaps, 2); got != 0 && got != 3 {
		t.Fatalf("a new session went to %d, want 0 or 3 (least loaded)", got)
	}
}
