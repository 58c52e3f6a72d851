package cluster

import (
	"encoding/json"
	"math"
	"runtime"
	"sync"
	"testing"

	"optimize/simcore"
	"optimize/simcore/flow"
	"optimize/simcore/metrics"
	"optimize/simcore/simtest"
	"optimize/simcore/workload"
)

// One instance, the concurrency detector at 1 request per instance, a
// sheddable request at 0 and a critical one later, both of 256 input and
// 128 output tokens priced by tp2 (TestGatewayTickGrid's arithmetic: a
// lone request's TTFT is 2500 + 11434 + 1805 = 15739 µs, it runs until
// 884972 µs). With eviction, the critical request's enqueue attempt reads
// saturation 1 and evicts the sheddable one, which is running at 100 ms;
// the next tick, at 101000 µs, dispatches the critical one (queue delay
// 1000 µs). It reaches the instance at 103500 µs, where the evicted
// request's next step, at 13934 + 13·6913 = 103803 µs, is still pending
// (as in BLIS): it starts there, 303 µs later, and runs alone (TTFT
// 1000 + 303 + 15739 µs). Only the first token counts for the
// evicted request: two TTFTs, one completion. At 100 µs the sheddable
// request is still in its 2500 µs queueing delay: it is not evicted (nor
// tracked again), and the critical one waits for it as without eviction
// (until the tick at 885000 µs).
func TestGatewayEvictionArithmetic(t *testing.T) {
	for _, c := range []struct {
		name                string
		critAt              simcore.Tick
		evict               bool
		evicted, completed  float64
		delayUs, critTTFTUs float64
	}{
		{"running", 100_000, true, 1, 1, 1000, 1000 + 303 + 15739},
		{"running, eviction off", 100_000, false, 0, 2, 785_000, 785_000 + 15739},
		{"in its queueing delay", 100, true, 0, 2, 884_900, 884_900 + 15739},
	} {
		shed, crit := simtest.Request(0, 256, 128, 16, nil, 1), simtest.Request(c.critAt, 256, 128, 16, nil, 2)
		shed.SLO, crit.SLO = simcore.SLOSheddable, simcore.SLOCritical
		cfg := testConfig(1, 132139)
		cfg.FlowControl = flow.Config{Enabled: true, Detector: flow.DetectConcurrency, MaxConcurrency: 1, InFlightEviction: c.evict}
		eng, err := New(cfg, simtest.NewSliceSource([]*simcore.Request{shed, crit}))
		if err != nil {
			t.Fatal(err)
		}
		s := eng.Run()
		for _, m := range []struct {
			what      string
			got, want float64
		}{
			{"evicted", *s.Evicted, c.evicted},
			{"sheddable evicted", *s.PerSLO["sheddable"].Evicted, c.evicted},
			{"critical evicted", *s.PerSLO["critical"].Evicted, 0},
			{"completed", s.Completed, c.completed},
			{"in flight", s.InFlight, 0},
			{"TTFT mean ms", s.TTFT.Mean, (15739 + c.critTTFTUs) / 2 / 1000},
			{"critical TTFT mean ms", s.PerSLO["critical"].TTFT.Mean, c.critTTFTUs / 1000},
			{"gateway delay mean ms", *s.DelayMean, c.delayUs / 2 / 1000},
		} {
			if math.Abs(m.got-m.want) > 1e-9*math.Max(1, math.Abs(m.want)) {
				t.Errorf("%s: %s = %v, want %v", c.name, m.what, m.got, m.want)
			}
		}
	}
}

// threeClassRun runs threeClassSpec under the utilization detector (BLIS
// f90a1e3a's snapshot refresh), with or without in-flight eviction, and
// returns its summary as JSON.
func threeClassRun(t *testing.T, evict bool) string {
	t.Helper()
	spec, err := workload.ParseSpec("three-class", []byte(threeClassSpec))
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(4, 132139)
	cfg.SnapshotRefresh = 50_000
	cfg.FlowControl = flow.Config{Enabled: true, Detector: flow.DetectUtilization, InFlightEviction: evict}
	src, err := workload.NewGenerator(spec, workload.Options{Seed: 42, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := New(cfg, src)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(eng.Run())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// In overload, eviction ends sheddable requests only, and the critical
// class's TTFT P99 and the TTFT mean fall; the run is the same byte for byte at
// GOMAXPROCS 1 and with runs in parallel at GOMAXPROCS 2.
func TestGatewayEvictionDeterministicAndHelpsCritical(t *testing.T) {
	procs := runtime.GOMAXPROCS(1)
	want := threeClassRun(t, true)
	off := threeClassRun(t, false)
	runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(procs)
	got := make([]string, 4)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { got[i] = threeClassRun(t, true) })
	}
	wg.Wait()
	for i, g := range got {
		if g != want {
			t.Errorf("run %d at GOMAXPROCS 2 differs from GOMAXPROCS 1", i)
		}
	}
	var on, base metrics.Summary
	if err := json.Unmarshal([]byte(want), &on); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(off), &base); err != nil {
		t.Fatal(err)
	}
	shed := *on.PerSLO["sheddable"].Evicted
	if *on.Evicted < 20 || shed != *on.Evicted {
		t.Errorf("evicted %v, of them sheddable %v: want over 20, all sheddable", *on.Evicted, shed)
	}
	if *base.Evicted != 0 {
		t.Errorf("evicted %v without eviction", *base.Evicted)
	}
	// Measured: critical TTFT P99 293.7 ms against 310.8, TTFT mean
	// 495.9 ms against 601.1 (50 evicted).
	c, b := on.PerSLO["critical"].TTFT.P99, base.PerSLO["critical"].TTFT.P99
	if c > 0.97*b {
		t.Errorf("critical TTFT P99 %.1f ms with eviction, %.1f without: want at least 3 %% lower", c, b)
	}
	if on.TTFT.Mean > 0.9*base.TTFT.Mean {
		t.Errorf("TTFT mean %.1f ms with eviction, %.1f without: want at least 10 %% lower", on.TTFT.Mean, base.TTFT.Mean)
	}
}

// BLIS tracks no request that P/D splits, so none is evicted, mid-transfer
// or not: with every request split, the same overload evicts nothing and
// runs as without eviction; with none split, it evicts.
func TestGatewayEvictionSkipsSplitRequests(t *testing.T) {
	spec, err := workload.ParseSpec("three-class", []byte(threeClassSpec))
	if err != nil {
		t.Fatal(err)
	}
	run := func(decider string, evict bool) metrics.Summary {
		cfg := testConfig(4, 132139)
		cfg.SnapshotRefresh = 50_000
		cfg.TP = 1 // P/D sizes its transfers by TP
		cfg.PD = PDConfig{Prefill: 2, Decode: 2, Decider: decider}
		cfg.FlowControl = flow.Config{Enabled: true, Detector: flow.DetectUtilization, InFlightEviction: evict}
		return runSpec(t, cfg, spec, 42)
	}
	split, off := run(PDAlways, true), run(PDAlways, false)
	if *split.Evicted != 0 || split.Completed != off.Completed || split.TTFT.Mean != off.TTFT.Mean {
		t.Errorf("all split: evicted %v, completed %v, TTFT mean %v; want 0 and as without eviction (%v, %v)",
			*split.Evicted, split.Completed, split.TTFT.Mean, off.Completed, off.TTFT.Mean)
	}
	if whole := run(PDNever, true); *whole.Evicted < 10 { // measured: 13
		t.Errorf("none split: evicted %v, want 10 or more", *whole.Evicted)
	}
}
