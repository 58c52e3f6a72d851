package workload

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"optimize/simcore"
)

// feedback is how a test's pretend engine finishes a request: when, and
// whether it completed.
type feedback func(r *simcore.Request) (simcore.Tick, bool)

// fixedService completes every request us after it arrives.
func fixedService(us simcore.Tick) feedback {
	return func(r *simcore.Request) (simcore.Tick, bool) { return r.Arrival + us, true }
}

// unevenService varies the service time with the request and rejects one
// request in eleven, so that closed-loop rounds arrive at times, and in an
// order, that a constant service time never gives.
func unevenService(us simcore.Tick) feedback {
	return func(r *simcore.Request) (simcore.Tick, bool) {
		return r.Arrival + us + simcore.Tick(r.ID%7)*1000, r.ID%11 != 3
	}
}

// drainWith pops every request, finishing each as fb says; it records
// Exclusive too, which snapshots leave out.
func drainWith(g *Generator, fb feedback) []string {
	var out []string
	for {
		r := pop(g)
		if r == nil {
			return out
		}
		out = append(out, fmt.Sprintf("%+v %v", snap(r), r.Content.Exclusive))
		at, completed := fb(r)
		g.Done(r, at, completed)
	}
}

// replaySpecs are the built-in workloads and specs for every path of
// generation: single-turn, closed- and open-loop sessions, a single
// session, lifecycle windows.
func replaySpecs(t *testing.T) map[string]*Spec {
	specs := map[string]*Spec{"single-turn": singleTurn(t)}
	for _, name := range builtins.Names() {
		spec, err := builtins.Spec(name)
		if err != nil {
			t.Fatal(err)
		}
		specs[name] = spec
	}
	openLoop := strings.Replace(closedLoopSpec, "context_growth: accumulate}", "context_growth: accumulate, closed_loop: false}", 1)
	singleSession := strings.Replace(closedLoopSpec, "context_growth: accumulate}", "single_session: true}", 1)
	windows := "    lifecycle: {windows: [{start_us: 200000, end_us: 500000}, {start_us: 1000000, end_us: 2000000}]}\n    prefix_group: p\n"
	specs["closed-loop"] = mustSpec(t, closedLoopSpec)
	specs["open-loop"] = mustSpec(t, openLoop)
	specs["single-session"] = mustSpec(t, singleSession)
	specs["windows"] = mustSpec(t, strings.Replace(closedLoopSpec, "    prefix_group: p\n", windows, 1))
	specs["single-session-windows"] = mustSpec(t, strings.Replace(singleSession, "    prefix_group: p\n", windows, 1))
	return specs
}

// A replay gives the requests of a fresh generator, request for request,
// under every feedback, whichever replay drew the arrivals first: one
// Draws serves every feedback of a spec, seed and options in turn.
func TestReplayMatchesGenerator(t *testing.T) {
	feedbacks := []feedback{fixedService(700_000), unevenService(1), fixedService(1), unevenService(50_000)}
	for name, spec := range replaySpecs(t) {
		for _, seed := range []int64{1, 42} {
			for _, opt := range []Options{
				{Seed: seed, BlockSize: 16, NumRequests: 3000},
				{Seed: seed, BlockSize: 32, NumRequests: 3000, Horizon: 3_000_000},
			} {
				d, err := NewDraws(spec, opt)
				if err != nil {
					t.Fatal(err)
				}
				for i, fb := range feedbacks {
					want := drainWith(mustGenerator(t, spec, opt), fb)
					got := drainWith(d.Generator(), fb)
					if !slices.Equal(got, want) {
						t.Fatalf("%s %+v feedback %d: replay differs from a fresh generator (%d requests, want %d)", name, opt, i, len(got), len(want))
					}
				}
			}
		}
	}
}

// Replays of one Draws are independent: interleaved on one goroutine or
// run on several at once, each gives what a fresh generator gives.
func TestReplaysAreIndependent(t *testing.T) {
	spec, err := builtins.Spec("orthogonal-slo")
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{Seed: 7, BlockSize: 16, NumRequests: 2000}
	fb := unevenService(100_000)
	want := drainWith(mustGenerator(t, spec, opt), fb)
	d, err := NewDraws(spec, opt)
	if err != nil {
		t.Fatal(err)
	}

	a, b := d.Generator(), d.Generator()
	var gotA, gotB []string
	for {
		ra, rb := pop(a), pop(b)
		if ra == nil && rb == nil {
			break
		}
		for _, x := range []struct {
			g   *Generator
			r   *simcore.Request
			out *[]string
		}{{a, ra, &gotA}, {b, rb, &gotB}} {
			if x.r != nil {
				*x.out = append(*x.out, fmt.Sprintf("%+v %v", snap(x.r), x.r.Content.Exclusive))
				at, completed := fb(x.r)
				x.g.Done(x.r, at, completed)
			}
		}
	}
	if !slices.Equal(gotA, want) || !slices.Equal(gotB, want) {
		t.Fatal("interleaved replays differ from a fresh generator")
	}

	fresh, err := NewDraws(spec, opt)
	if err != nil {
		t.Fatal(err)
	}
	got := make([][]string, 8)
	var wg sync.WaitGroup
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = drainWith(fresh.Generator(), fb)
		}()
	}
	wg.Wait()
	for i := range got {
		if !slices.Equal(got[i], want) {
			t.Fatalf("concurrent replay %d differs from a fresh generator", i)
		}
	}
}

// A second replay draws nothing: the arrivals of the first are reused.
// A run that goes further draws only the arrivals it adds.
func TestDrawsAreReused(t *testing.T) {
	spec, err := builtins.Spec("multi-turn-kv")
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDraws(spec, Options{Seed: 42, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := d.Arrivals(); n != 0 {
		t.Fatalf("%d arrivals drawn before any replay", n)
	}
	drainWith(d.Generator(), fixedService(50_000))
	first, lengths := d.Arrivals()
	if first == 0 || lengths != 4*first {
		t.Fatalf("after one replay: %d arrivals, %d lengths (want 4 per arrival)", first, lengths)
	}
	drainWith(d.Generator(), fixedService(50_000))
	if again, _ := d.Arrivals(); again != first {
		t.Fatalf("the same replay again drew %d more arrivals", again-first)
	}
	// Rejecting every round ends every session at round 0: the 1000
	// requests take more sessions.
	drainWith(d.Generator(), func(r *simcore.Request) (simcore.Tick, bool) { return r.Arrival, false })
	if more, _ := d.Arrivals(); more <= first || more > 1000+2*feedBatch {
		t.Fatalf("a replay of 1000 single-round sessions: %d arrivals drawn (had %d)", more, first)
	}
}

func TestNewDrawsErrors(t *testing.T) {
	spec := singleTurn(t)
	for _, opt := range []Options{{BlockSize: 0}, {BlockSize: 16, NumRequests: -1}, {BlockSize: 16, Horizon: -5}} {
		if _, err := NewDraws(spec, opt); err == nil {
			t.Errorf("%+v: no error", opt)
		}
	}
	if _, err := NewDraws(nil, Options{BlockSize: 16}); err == nil {
		t.Error("nil spec: no error")
	}
	spec.NumRequests = 0
	if _, err := NewDraws(spec, Options{BlockSize: 16}); err == nil || !strings.Contains(err.Error(), "unbounded") {
		t.Errorf("unbounded workload: %v", err)
	}
}

// Replaying arrivals already drawn allocates nothing per request.
func TestReplaySteadyStateDoesNotAllocate(t *testing.T) {
	d, err := NewDraws(singleTurn(t), Options{Seed: 1, BlockSize: 16, NumRequests: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	warm := d.Generator()
	r := new(simcore.Request)
	for range 20_000 {
		r.Reset()
		warm.Pop(r)
		warm.Done(r, r.Arrival, true)
	}
	g := d.Generator()
	step := func() {
		r.Reset()
		g.Pop(r)
		g.Done(r, r.Arrival, true)
	}
	for range 2000 {
		step()
	}
	if allocs := testing.AllocsPerRun(10_000, step); allocs > 0.01 {
		t.Errorf("%.3f allocations per request", allocs)
	}
}
