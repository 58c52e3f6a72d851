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

// One instance, the concurrency detector at 1 request per instance, and
// two requests of 256 input and 128 output tokens at 0 and 100 µs, priced
// by tp2 (TestSingleRequestArithmetic's arithmetic). The first is
// dispatched at once and runs: queueing 2500 µs, prefill 11434 µs, then
// 127 decode steps of 6913 µs; its last step starts at 2500 + 11434 +
// 126·6913 = 884972 µs, and it leaves the in-flight count there. The
// second waits: its enqueue attempt and every dispatch tick (on the grid
// 1000, 2000, … µs from the first attempt at 0) read saturation 1, until
// the tick at 885000 µs, the first after 884972. Its queue delay is
// 885000 − 100 = 884900 µs, and its TTFT that plus 2500 + 11434 + 1805 µs
// (queueing, prefill, α2) = 900639 µs.
func TestGatewayTickGrid(t *testing.T) {
	reqs := []*simcore.Request{simtest.Request(0, 256, 128, 16, nil, 1), simtest.Request(100, 256, 128, 16, nil, 2)}
	cfg := testConfig(1, 132139)
	cfg.FlowControl = flow.Config{Enabled: true, Detector: flow.DetectConcurrency, MaxConcurrency: 1}
	eng, err := New(cfg, simtest.NewSliceSource(reqs))
	if err != nil {
		t.Fatal(err)
	}
	s := eng.Run()
	const delayUs, ttft2 = 884900.0, 900639.0
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"completed", s.Completed, 2},
		{"TTFT mean ms", s.TTFT.Mean, (15739 + ttft2) / 2 / 1000},
		{"gateway delay mean ms", *s.DelayMean, delayUs / 2 / 1000},
		{"gateway delay P99 ms", *s.DelayP99, 0.99 * delayUs / 1000}, // linear between 0 and 884900
		{"gateway rejected", *s.GatewayNumbers.Rejected, 0},
	} {
		if math.Abs(c.got-c.want) > 1e-9*math.Max(1, math.Abs(c.want)) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// A TTL shorter than the first request's service expires the second
// while it waits; it is counted per class, and the first is not.
func TestGatewayTTLPerClass(t *testing.T) {
	first, second := simtest.Request(0, 256, 128, 16, nil, 1), simtest.Request(100, 256, 128, 16, nil, 2)
	first.SLO, second.SLO = simcore.SLOCritical, simcore.SLOSheddable
	cfg := testConfig(1, 132139)
	cfg.FlowControl = flow.Config{Enabled: true, Detector: flow.DetectConcurrency, MaxConcurrency: 1, RequestTTL: 50_000}
	eng, err := New(cfg, simtest.NewSliceSource([]*simcore.Request{first, second}))
	if err != nil {
		t.Fatal(err)
	}
	s := eng.Run()
	if s.Completed != 1 || *s.Expired != 1 || s.InFlight != 0 {
		t.Errorf("completed %v, expired %v, in flight %v; want 1, 1, 0", s.Completed, *s.Expired, s.InFlight)
	}
	if got := *s.PerSLO["sheddable"].Expired; got != 1 {
		t.Errorf("sheddable expired %v, want 1", got)
	}
	if got := *s.PerSLO["critical"].Expired; got != 0 {
		t.Errorf("critical expired %v, want 0", got)
	}
}

// threeClassSpec is three classes in three tenants in overload on 4
// instances (BLIS f90a1e3a's flow-control example, 600 requests).
const threeClassSpec = `version: "2"
seed: 42
aggregate_rate: 800
num_requests: 600
clients:
  - {id: crit, tenant_id: tenant-a, slo_class: critical, rate_fraction: 0.2, arrival: {process: poisson},
     input_distribution: {type: gaussian, params: {mean: 512, std_dev: 128, min: 64, max: 1024}},
     output_distribution: {type: exponential, params: {mean: 128}}}
  - {id: std, tenant_id: tenant-b, slo_class: standard, rate_fraction: 0.5, arrival: {process: poisson},
     input_distribution: {type: gaussian, params: {mean: 512, std_dev: 128, min: 64, max: 1024}},
     output_distribution: {type: exponential, params: {mean: 128}}}
  - {id: shed, tenant_id: tenant-b, slo_class: sheddable, rate_fraction: 0.3, arrival: {process: gamma, cv: 2.0},
     input_distribution: {type: gaussian, params: {mean: 1024, std_dev: 256, min: 128, max: 2048}},
     output_distribution: {type: exponential, params: {mean: 256}}}
`

// Flow control draws nothing and keeps no map order: the same run gives
// the same summary, byte for byte, at GOMAXPROCS 1 and with runs in
// parallel at GOMAXPROCS 2.
func TestGatewayDeterministic(t *testing.T) {
	spec, err := workload.ParseSpec("three-class", []byte(threeClassSpec))
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(4, 132139)
	cfg.SnapshotRefresh = 50_000
	cfg.FlowControl = flow.Config{Enabled: true, Detector: flow.DetectUtilization, Fairness: flow.FairRoundRobin,
		MaxQueueDepth: 100, QueueShedding: true, RequestTTL: 2_000_000, UsageLimit: 0.8}
	run := func() string {
		src, err := workload.NewGenerator(spec, workload.Options{Seed: 42, BlockSize: 16})
		if err != nil {
			t.Fatal(err)
		}
		eng, err := New(cfg, src)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(eng.Run())
		return string(b)
	}
	procs := runtime.GOMAXPROCS(1)
	want := run()
	runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(procs)
	got := make([]string, 4)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { got[i] = run() })
	}
	wg.Wait()
	for i, g := range got {
		if g != want {
			t.Errorf("run %d at GOMAXPROCS 2 differs from GOMAXPROCS 1", i)
		}
	}
	var s metrics.Summary
	if err := json.Unmarshal([]byte(want), &s); err != nil {
		t.Fatal(err)
	}
	if *s.Shed == 0 || *s.GatewayNumbers.Rejected+*s.Shed+*s.Expired == 0 || s.Completed == 0 {
		t.Errorf("the run should shed and complete: %s", want)
	}
}
