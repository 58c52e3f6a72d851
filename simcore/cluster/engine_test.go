package cluster

import (
	"os"
	"sync"
	"testing"
	"time"

	"optimize/simcore"
	"optimize/simcore/kv"
	"optimize/simcore/latency"
	"optimize/simcore/metrics"
	"optimize/simcore/route"
	"optimize/simcore/sched"
	"optimize/simcore/simtest"
	"optimize/simcore/workload"
)

// tp2 are the llama-3.1-8b H100 TP2 coefficients, as in
// data/models/llama-3.1-8b-instruct.yaml.
var tp2 = latency.Coeffs{
	Alpha: [3]float64{1601.350510688092, 3.512476196805965, 1805.5430360826988},
	Beta:  [3]float64{6910.420479880494, 17.67057489844186, 2.8377471109943855},
}

// testData is the built-in world data in the source tree, read once.
var testData = sync.OnceValue(func() *latency.Catalog {
	cat, err := latency.ReadCatalog(os.DirFS("../../data"))
	if err != nil {
		panic(err)
	}
	return cat
})

// inWorld makes c run llama-3.1-8b on H100 at TP2 priced by the latency
// model kind, from the built-in world data in the source tree.
func inWorld(c *Config, kind string) {
	c.World = latency.World{Model: "meta-llama/llama-3.1-8b-instruct", GPU: "H100", TP: 2, LatencyModel: kind,
		GPUMemoryUtilization: c.GPUMemoryUtilization, Data: testData()}
}

// testConfig is a cluster of instances with blocks KV blocks each, priced
// by tp2 given by hand (no TP: no GPUs counted, no cost).
func testConfig(instances int, blocks int64) Config {
	c := Defaults()
	c.NumInstances = instances
	c.TotalKVBlocks = blocks
	inWorld(&c, latency.KindBlackbox)
	c.TP = 0
	for i := range 3 {
		c.Coefficients.Alpha[i], c.Coefficients.Beta[i] = tp2.Alpha[i], tp2.Beta[i]
	}
	c.Coefficients.AlphaSet, c.Coefficients.BetaSet = [3]bool{true, true, true}, [3]bool{true, true, true}
	return c
}

// TestSingleRequestArithmetic checks one request (input 256, output 128,
// idle instance, arrival at t = 1 s) against tp2's formulas worked by hand,
// exactly: queueing α0 + α1·256 = 2500 µs, the prefill step β0 + β1·256 =
// 11434 µs, each of the 127 decode steps β0 + β2 = 6913 µs, α2 = 1805 µs.
// So TTFT = 2500 + 11434 + 1805 = 15739 µs, ITL = 6913 + 1805 = 8718 µs,
// E2E = TTFT + 127·ITL = 1122925 µs, and the request leaves at
// 1 s + 2500 + 11434 + 127·6913 µs = 1891885 µs.
func TestSingleRequestArithmetic(t *testing.T) {
	r := simtest.Request(1_000_000, 256, 128, 16, nil, 1)
	src := simtest.NewSliceSource([]*simcore.Request{r})
	eng, err := New(testConfig(1, 132139), src)
	if err != nil {
		t.Fatal(err)
	}
	s := eng.Run()
	checks := []struct {
		name      string
		got, want float64
	}{
		{"TTFT ms", s.TTFT.Mean, 15.739},
		{"ITL ms", s.ITL.Mean, 8.718},
		{"E2E ms", s.E2E.Mean, 1122.925},
		{"output tokens", s.OutputTokens, 127},
		{"completed", s.Completed, 1},
		{"makespan ms", s.MakespanMs, 1891.885},
		{"scheduling delay ms", s.SchedulingDelay.Mean, 2.5},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v exactly", c.name, c.got, c.want)
		}
	}
	if src.Left[0] != 1_891_885 {
		t.Errorf("request left at %d µs, want 1891885", src.Left[0])
	}
}

// TestConservationUnderPreemption squeezes many long requests into a tiny
// KV cache: every request must end completed, preemptions must happen, and
// no block may be lost or double-freed.
func TestConservationUnderPreemption(t *testing.T) {
	var reqs []*simcore.Request
	for i := 0; i < 400; i++ {
		reqs = append(reqs, simtest.Request(int64(i*300), 200+int32(i%7)*50, 60+int32(i%11)*20, 16, simtest.Prefix(7, 8), uint64(i+1)))
	}
	src := simtest.NewSliceSource(reqs)
	cfg := testConfig(2, 120)
	cfg.Routing = route.Config{Policy: "weighted", PrefixIndexCapacity: 10000}
	cfg.PrefillThreshold = 64
	eng, err := New(cfg, src)
	if err != nil {
		t.Fatal(err)
	}
	// Between events each instance's in-flight tokens are those of its
	// in-flight requests, each 260-760 tokens (input + output).
	for eng.stepOnce() {
		for _, inst := range eng.instances {
			if n := int64(inst.inFlight); inst.inFlightTokens < 260*n || inst.inFlightTokens > 760*n {
				t.Fatalf("instance %d: %d requests in flight with %d tokens", inst.id, n, inst.inFlightTokens)
			}
		}
	}
	s := eng.summarize()
	if s.Preemptions == 0 {
		t.Fatal("expected preemptions with 120 blocks per instance")
	}
	if s.Completed+s.Dropped != 400 || s.InFlight != 0 {
		t.Fatalf("completed %v + dropped %v != 400 (in flight %v)", s.Completed, s.Dropped, s.InFlight)
	}
	for i, left := range src.Left {
		if left < 0 {
			t.Fatalf("request %d never left", i)
		}
	}
	for _, inst := range eng.instances {
		if err := inst.kv.Check(nil); err != nil {
			t.Fatalf("instance %d: %v", inst.id, err)
		}
		if inst.kv.Used() != 0 {
			t.Fatalf("instance %d still has %d used blocks", inst.id, inst.kv.Used())
		}
		if inst.inFlight != 0 || inst.inFlightTokens != 0 {
			t.Fatalf("instance %d in-flight counters = %d requests, %d tokens", inst.id, inst.inFlight, inst.inFlightTokens)
		}
	}
}

// TestConservationMidRun checks the KV invariants between events: the
// blocks referenced by running requests are exactly the used blocks.
func TestConservationMidRun(t *testing.T) {
	var reqs []*simcore.Request
	for i := 0; i < 120; i++ {
		reqs = append(reqs, simtest.Request(int64(i*100), 300, 100, 16, simtest.Prefix(3, 10), uint64(i+1)))
	}
	cfg := testConfig(1, 90)
	eng, err := New(cfg, simtest.NewSliceSource(reqs))
	if err != nil {
		t.Fatal(err)
	}
	steps := 0
	for eng.stepOnce() {
		steps++
		inst := eng.instances[0]
		seqs := make([]*kv.Seq, 0, len(inst.running))
		for i, r := range inst.running {
			seq := r.KV // an idle request's tokens are as of when it went idle
			if b := inst.since[i]; b >= 0 {
				seq.Tokens += int32(inst.steps - b)
			}
			seqs = append(seqs, &seq)
		}
		if err := inst.kv.Check(seqs); err != nil {
			t.Fatalf("after %d events: %v", steps, err)
		}
	}
	if steps < 100 {
		t.Fatalf("only %d events ran", steps)
	}
}

func TestOversizedRequestIsDropped(t *testing.T) {
	reqs := []*simcore.Request{
		simtest.Request(0, 1000, 10, 16, nil, 1), // 63 blocks > 50
		simtest.Request(10, 100, 10, 16, nil, 2),
	}
	src := simtest.NewSliceSource(reqs)
	eng, _ := New(testConfig(1, 50), src)
	s := eng.Run()
	if s.Dropped != 1 || s.Completed != 1 {
		t.Fatalf("dropped %v completed %v, want 1 and 1", s.Dropped, s.Completed)
	}
	if src.Completed[0] || src.Left[0] < 0 {
		t.Fatal("the oversized request must be reported to the source as not completed")
	}
}

// A request whose input fits but whose output would outgrow the cache can
// never finish (it would preempt everything, itself included, forever): it
// is dropped, and one that needs exactly the whole cache completes.
func TestRequestOutgrowingTheCacheIsDropped(t *testing.T) {
	reqs := []*simcore.Request{
		simtest.Request(0, 100, 100, 16, nil, 1), // 100+99 tokens: 13 blocks > 10
		simtest.Request(10, 100, 61, 16, nil, 2), // 100+60 tokens: exactly 10 blocks
	}
	src := simtest.NewSliceSource(reqs)
	eng, err := New(testConfig(1, 10), src)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan metrics.Summary, 1)
	go func() { done <- eng.Run() }()
	select {
	case s := <-done:
		if s.Dropped != 1 || s.Completed != 1 || src.Completed[0] || !src.Completed[1] {
			t.Fatalf("dropped %v completed %v (per request %v), want the first dropped and the second completed", s.Dropped, s.Completed, src.Completed)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the run did not end: the oversized request livelocks")
	}
}

// TTFT is set when the last prefill chunk runs, and only then: a request
// that finished its prefill in an earlier step and gets no token in this
// one (phase 1 of batch formation stopped before it) keeps its TTFT.
func TestTTFTIsNotRewrittenByAStepWithoutTokens(t *testing.T) {
	r := simtest.Request(0, 32, 8, 16, nil, 1)
	eng, err := New(testConfig(1, 100), simtest.NewSliceSource(nil))
	if err != nil {
		t.Fatal(err)
	}
	eng.metrics.Arrived(r)
	in := eng.instances[0]
	r.Progress, r.Computed, r.FirstToken, r.NewTokens = 32, 32, 5000, 0
	in.running, in.due, in.since, in.active = append(in.running, r), append(in.due, 0), append(in.since, -1), append(in.active, 0)
	eng.now = 90_000
	in.execute(eng, 0)
	if r.FirstToken != 5000 || r.Progress != 32 {
		t.Fatalf("TTFT %d µs and progress %d after a step without tokens, want 5000 and 32", r.FirstToken, r.Progress)
	}
}

// Priority preemption with an ageing policy must not livelock: running
// requests are ranked by their priority now, so the oldest request of a
// class is never the victim while newer ones run, as with vLLM's static
// priorities and arrival order.
func TestPriorityPreemptionWithAgeingMakesProgress(t *testing.T) {
	run := func(preemption string, horizon simcore.Tick) (metrics.Summary, simcore.Tick) {
		var reqs []*simcore.Request
		classes := []simcore.SLOClass{simcore.SLOCritical, simcore.SLOStandard, simcore.SLOSheddable}
		for i := 0; i < 300; i++ {
			r := simtest.Request(int64(i)*1000, 200+int32(i%5)*40, 80+int32(i%7)*30, 16, nil, uint64(i+1))
			r.SLO = classes[i%3]
			reqs = append(reqs, r)
		}
		cfg := testConfig(1, 60)
		cfg.Scheduler = "priority-fcfs"
		cfg.Priority = sched.PolicyConfig{Name: sched.SLOTiered}
		cfg.PreemptionPolicy = preemption
		cfg.Horizon = horizon
		eng, err := New(cfg, simtest.NewSliceSource(reqs))
		if err != nil {
			t.Fatal(err)
		}
		s := eng.Run()
		return s, eng.instances[0].clock
	}
	fcfs, fcfsEnd := run("fcfs", 0)
	if fcfs.Completed != 300 || fcfs.Preemptions == 0 {
		t.Fatalf("fcfs preemption: completed %v, preemptions %v; the test needs a preemption regime", fcfs.Completed, fcfs.Preemptions)
	}
	prio, _ := run("priority", 3*fcfsEnd)
	if prio.Completed != 300 {
		t.Fatalf("priority preemption completed %v of 300 in three times the %d µs fcfs needed (%v preemptions)", prio.Completed, fcfsEnd, prio.Preemptions)
	}
}

// The priority bridge: with a class-based policy the router hands each
// request its class's base priority; without the flag it hands none.
func TestPriorityBridgeSetsTheHint(t *testing.T) {
	for _, bridge := range []bool{false, true} {
		var reqs []*simcore.Request
		for i, cl := range []simcore.SLOClass{simcore.SLOCritical, simcore.SLOStandard, simcore.SLOSheddable} {
			r := simtest.Request(int64(i*10), 64, 4, 16, nil, uint64(i+1))
			r.SLO = cl
			reqs = append(reqs, r)
		}
		cfg := testConfig(1, 1000)
		cfg.Scheduler = "priority-fcfs"
		cfg.Priority = sched.PolicyConfig{Name: sched.SLOTiered}
		cfg.Priority.Base.V[simcore.SLOCritical], cfg.Priority.Base.Set[simcore.SLOCritical] = 42, true
		cfg.PriorityBridge = bridge
		eng, err := New(cfg, simtest.NewSliceSource(reqs))
		if err != nil {
			t.Fatal(err)
		}
		eng.Run()
		for _, r := range reqs {
			want := 0.0
			if bridge {
				want = sched.BaseFor(cfg.Priority, r.SLO)
			}
			if r.PriorityHint != want {
				t.Errorf("bridge %v, %s: hint %v, want %v", bridge, r.SLO, r.PriorityHint, want)
			}
		}
		if bridge && reqs[0].PriorityHint != 42 {
			t.Errorf("critical hint %v, want the configured base 42", reqs[0].PriorityHint)
		}
	}
}

// runSpec runs cfg on spec's requests drawn with seed (block size 16).
func runSpec(t testing.TB, cfg Config, spec *workload.Spec, seed int64) metrics.Summary {
	t.Helper()
	return runRequests(t, cfg, spec, seed, 0)
}

// runRequests is runSpec on the first n requests (0 = the spec's own).
func runRequests(t testing.TB, cfg Config, spec *workload.Spec, seed int64, n int) metrics.Summary {
	t.Helper()
	src, err := workload.NewGenerator(spec, workload.Options{Seed: seed, BlockSize: 16, NumRequests: n})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := New(cfg, src)
	if err != nil {
		t.Fatal(err)
	}
	return eng.Run()
}
