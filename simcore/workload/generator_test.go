package workload

import (
	"slices"
	"strings"
	"testing"
	"unsafe"

	"optimize/simcore"
)

// snapshot is a copy of a request's descriptive fields (requests are
// recycled, so tests must not keep the pointers).
type snapshot struct {
	ID                  int64
	Session             int32
	Arrival             simcore.Tick
	InputLen, OutputLen int32
	Client, Round       int32
	SLO                 simcore.SLOClass
	Blocks              []uint64
}

func snap(r *simcore.Request) snapshot {
	return snapshot{r.ID, r.Session, r.Arrival, r.InputLen, r.OutputLen, r.Client, r.Round, r.SLO, blocksOf(r)}
}

func mustSpec(t testing.TB, doc string) *Spec {
	t.Helper()
	spec, err := ParseSpec("test.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func mustGenerator(t testing.TB, spec *Spec, opt Options) *Generator {
	t.Helper()
	g, err := NewGenerator(spec, opt)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// drain pops every request, completing each one serviceUs after it arrives
// (rounds of closed-loop sessions are completed in arrival order, which is
// a valid engine behaviour when serviceUs is constant).
// pop hands src a fresh request to fill, as the engine does; nil when the
// source has none.
func pop(src simcore.Source) *simcore.Request {
	r := new(simcore.Request)
	r.Reset()
	if !src.Pop(r) {
		return nil
	}
	return r
}

func drain(g *Generator, serviceUs simcore.Tick) []snapshot {
	var out []snapshot
	for {
		if _, ok := g.Peek(); !ok {
			return out
		}
		r := pop(g)
		out = append(out, snap(r))
		g.Done(r, r.Arrival+serviceUs, true)
	}
}

func singleTurn(t testing.TB) *Spec {
	spec, err := builtins.Spec("orthogonal-slo")
	if err != nil {
		t.Fatal(err)
	}
	for i := range spec.Clients {
		spec.Clients[i].Reasoning = nil
	}
	return spec
}

func TestDeterminism(t *testing.T) {
	spec, _ := builtins.Spec("orthogonal-slo")
	opt := Options{Seed: 42, BlockSize: 16, NumRequests: 3000}
	a := drain(mustGenerator(t, spec, opt), 200_000)
	b := drain(mustGenerator(t, spec, opt), 200_000)
	if len(a) != 3000 || !slices.EqualFunc(a, b, snapshotEqual) {
		t.Fatalf("same seed, different sequences (len %d, %d)", len(a), len(b))
	}
	opt.Seed = 43
	c := drain(mustGenerator(t, spec, opt), 200_000)
	if slices.EqualFunc(a, c, snapshotEqual) {
		t.Fatal("different seeds, same sequence")
	}
}

func snapshotEqual(a, b snapshot) bool {
	return a.ID == b.ID && a.Session == b.Session && a.Arrival == b.Arrival && a.InputLen == b.InputLen &&
		a.OutputLen == b.OutputLen && a.Client == b.Client && a.Round == b.Round && a.SLO == b.SLO &&
		slices.Equal(a.Blocks, b.Blocks)
}

func TestArrivalOrderAndIDs(t *testing.T) {
	spec, _ := builtins.Spec("orthogonal-slo")
	reqs := drain(mustGenerator(t, spec, Options{Seed: 1, BlockSize: 16, NumRequests: 5000}), 100_000)
	rounds := 0
	for i, r := range reqs {
		if r.ID != int64(i) {
			t.Fatalf("request %d has ID %d", i, r.ID)
		}
		if i > 0 && r.Arrival < reqs[i-1].Arrival {
			t.Fatalf("arrival %d < previous %d at %d", r.Arrival, reqs[i-1].Arrival, i)
		}
		if len(r.Blocks) != int(r.InputLen+r.OutputLen)/16 {
			t.Fatalf("request %d: %d blocks for %d tokens", i, len(r.Blocks), r.InputLen)
		}
		if r.Round > 0 {
			rounds++
		}
	}
	if rounds == 0 {
		t.Error("no later rounds with a 100 ms service time")
	}
}

func TestNumRequestsKeepsEarliest(t *testing.T) {
	spec := singleTurn(t)
	all := drain(mustGenerator(t, spec, Options{Seed: 42, BlockSize: 16, NumRequests: 2000}), 1)
	some := drain(mustGenerator(t, spec, Options{Seed: 42, BlockSize: 16, NumRequests: 300}), 1)
	if len(some) != 300 || !slices.EqualFunc(some, all[:300], snapshotEqual) {
		t.Fatal("NumRequests 300 is not the first 300 of a longer run")
	}
}

func TestHorizon(t *testing.T) {
	spec := singleTurn(t)
	spec.NumRequests = 0
	all := drain(mustGenerator(t, spec, Options{Seed: 42, BlockSize: 16, Horizon: 400_000}), 1)
	some := drain(mustGenerator(t, spec, Options{Seed: 42, BlockSize: 16, Horizon: 200_000}), 1)
	cut, _ := slices.BinarySearchFunc(all, simcore.Tick(200_000), func(s snapshot, t simcore.Tick) int { return int(s.Arrival - t) })
	if len(some) == 0 || !slices.EqualFunc(some, all[:cut], snapshotEqual) {
		t.Fatalf("horizon 200 ms gives %d requests, want the %d arriving before it", len(some), cut)
	}
	if _, err := NewGenerator(spec, Options{Seed: 1, BlockSize: 16}); err == nil || !strings.Contains(err.Error(), "unbounded") {
		t.Errorf("unbounded workload: %v", err)
	}
}

const closedLoopSpec = `aggregate_rate: 10
num_requests: 100
clients:
  - slo_class: sheddable
    rate_fraction: 1
    arrival: {process: constant}
    input_distribution: {type: constant, params: {value: 40}}
    output_distribution: {type: constant, params: {value: 20}}
    prefix_group: p
    prefix_length: 32
    reasoning:
      multi_turn: {max_rounds: 2, think_time_us: 1000, context_growth: accumulate}
`

func TestClosedLoopRounds(t *testing.T) {
	g := mustGenerator(t, mustSpec(t, closedLoopSpec), Options{Seed: 1, BlockSize: 16})
	// Sessions start every gap (int(1e6/10) = 99999 µs, BLIS's truncation);
	// nothing but round 0 is known before Done.
	const gap = 99_999
	r0 := pop(g)
	first := snap(r0)
	if first.Round != 0 || first.Arrival != gap || first.InputLen != 32+40 || first.OutputLen != 20 {
		t.Fatalf("round 0: %+v", first)
	}
	if at, _ := g.Peek(); at != 2*gap {
		t.Fatalf("before Done the next arrival is %d, want the next session at %d", at, 2*gap)
	}
	g.Done(r0, 150_000, true)
	at, ok := g.Peek()
	if !ok || at != 151_000 {
		t.Fatalf("after Done at 150000 the next arrival is %d, want 151000 (think 1000)", at)
	}
	r1 := snap(pop(g))
	if r1.Round != 1 || r1.Session != first.Session || r1.Arrival != 151_000 {
		t.Fatalf("round 1: %+v", r1)
	}
	if want := int32(32 + 40 + 20 + 40); r1.InputLen != want {
		t.Errorf("round 1 input %d, want prefix+in0+out0+in1 = %d", r1.InputLen, want)
	}
	if len(r1.Blocks) != int(r1.InputLen+r1.OutputLen)/16 || !slices.Equal(r1.Blocks[:len(first.Blocks)], first.Blocks) {
		t.Errorf("round 1 blocks do not start with round 0's: %v vs %v", r1.Blocks, first.Blocks)
	}

	// A rejected round ends its session.
	r0b := pop(g)
	if r0b.Round != 0 || r0b.Arrival != 2*gap {
		t.Fatalf("second session: %+v", snap(r0b))
	}
	g.Done(r0b, 200_000, false)
	if r := pop(g); r.Round != 0 || r.Arrival != 3*gap {
		t.Fatalf("after a rejection got %+v, want the next session's round 0", snap(r))
	}
}

func TestOpenLoopRounds(t *testing.T) {
	doc := strings.Replace(closedLoopSpec, "context_growth: accumulate}", "context_growth: accumulate, closed_loop: false}", 1)
	reqs := drain(mustGenerator(t, mustSpec(t, doc), Options{Seed: 1, BlockSize: 16, NumRequests: 4}), 0)
	// Round 1 arrives at start + think + output of round 0, without waiting.
	want := []simcore.Tick{99_999, 99_999 + 1020, 2 * 99_999, 2*99_999 + 1020}
	for i, r := range reqs {
		if r.Arrival != want[i] || r.Round != int32(i%2) {
			t.Errorf("request %d: arrival %d round %d, want %d round %d", i, r.Arrival, r.Round, want[i], i%2)
		}
	}
}

// A stream is exclusive (no two requests of it in the system at once)
// unless an open-loop session's rounds share it.
func TestExclusiveStreams(t *testing.T) {
	single := strings.Replace(closedLoopSpec, "      multi_turn: {max_rounds: 2, think_time_us: 1000, context_growth: accumulate}\n", "", 1)
	single = strings.Replace(single, "    reasoning:\n", "", 1)
	cases := []struct {
		name string
		doc  string
		want bool
	}{
		{"closed-loop accumulating session", closedLoopSpec, true},
		{"open-loop accumulating session", strings.Replace(closedLoopSpec, "context_growth: accumulate}", "context_growth: accumulate, closed_loop: false}", 1), false},
		{"open-loop session, a stream per round", strings.Replace(closedLoopSpec, "context_growth: accumulate}", "closed_loop: false}", 1), true},
		{"single requests", single, true},
	}
	for _, tc := range cases {
		g := mustGenerator(t, mustSpec(t, tc.doc), Options{Seed: 1, BlockSize: 16, NumRequests: 4})
		for i := 0; i < 4; i++ {
			r := pop(g)
			if r == nil {
				t.Fatalf("%s: only %d requests", tc.name, i)
			}
			if r.Content.Exclusive != tc.want {
				t.Fatalf("%s: request %d (round %d) exclusive %v, want %v", tc.name, i, r.Round, r.Content.Exclusive, tc.want)
			}
			g.Done(r, r.Arrival+10, true)
		}
	}
}

func TestPrefixSharing(t *testing.T) {
	spec := singleTurn(t)
	reqs := drain(mustGenerator(t, spec, Options{Seed: 3, BlockSize: 16, NumRequests: 2}), 1)
	a, b := reqs[0].Blocks, reqs[1].Blocks
	const shared = 512 / 16
	if !slices.Equal(a[:shared], b[:shared]) {
		t.Error("the shared prefix blocks differ")
	}
	if len(a) <= shared || len(b) <= shared || a[shared] == b[shared] {
		t.Error("blocks after the prefix are equal")
	}
}

func TestSteadyStateDoesNotAllocate(t *testing.T) {
	g := mustGenerator(t, singleTurn(t), Options{Seed: 1, BlockSize: 16, NumRequests: 1 << 30})
	r := new(simcore.Request)
	step := func() {
		r.Reset()
		g.Pop(r)
		g.Done(r, r.Arrival, true)
	}
	for range 2000 {
		step()
	}
	if allocs := testing.AllocsPerRun(2000, step); allocs > 0.01 {
		t.Errorf("%.3f allocations per request", allocs)
	}
}

func TestOptionsErrors(t *testing.T) {
	spec := singleTurn(t)
	for _, opt := range []Options{{BlockSize: 0}, {BlockSize: 16, NumRequests: -1}, {BlockSize: 16, Horizon: -5}} {
		if _, err := NewGenerator(spec, opt); err == nil {
			t.Errorf("%+v: no error", opt)
		}
	}
	if _, err := NewGenerator(nil, Options{BlockSize: 16}); err == nil {
		t.Error("nil spec: no error")
	}
}

// BenchmarkGenerator pulls and recycles orthogonal-slo requests.
func BenchmarkGenerator(b *testing.B) {
	spec, err := builtins.Spec("orthogonal-slo")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		g := mustGenerator(b, spec, Options{Seed: 42, BlockSize: 16, NumRequests: 100_000})
		for {
			r := pop(g)
			if r == nil {
				break
			}
			g.Done(r, r.Arrival+50_000, true)
		}
	}
}

// blocksOf lists every block hash of r's content.
func blocksOf(r *simcore.Request) []uint64 {
	return r.Content.AppendHashes(nil, int(r.Content.Total))
}

// A million queued sessions are the generator's largest memory: a session
// stays 32 bytes and pointer-free.
func TestSessionLayout(t *testing.T) {
	if size := unsafe.Sizeof(session{}); size > 32 {
		t.Fatalf("session is %d bytes, want at most 32", size)
	}
}
