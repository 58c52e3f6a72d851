package cluster

import (
	"math"
	"slices"
	"strings"
	"testing"

	"optimize/simcore"
	"optimize/simcore/latency"
	"optimize/simcore/metrics"
	"optimize/simcore/workload"
)

// pdRamp is a prefill-heavy ramp: 2,000-token prompts and 16 output
// tokens, 4 req/s for 40 s with a peak of 40 req/s more from 10 s to
// 20 s.
func pdRamp(n int) *workload.Spec {
	client := func(id string, frac float64, from, to int64) workload.Client {
		return workload.Client{ID: id, RateFraction: frac, Arrival: workload.Arrival{Process: "poisson"},
			Input:     workload.Distribution{Type: "gaussian", Params: map[string]float64{"mean": 2000, "std_dev": 200, "min": 1000, "max": 3000}},
			Output:    workload.Distribution{Type: "gaussian", Params: map[string]float64{"mean": 16, "std_dev": 4, "min": 4, "max": 32}},
			Lifecycle: &workload.Lifecycle{Windows: []workload.Window{{StartUs: from, EndUs: to}}}}
	}
	return &workload.Spec{Version: "2", Seed: 7, AggregateRate: 104, NumRequests: int64(n), Clients: []workload.Client{
		client("base", 1, 0, 40_000_000), client("peak", 25, 10_000_000, 20_000_000)}}
}

// runPDScale runs pdRamp on 1 prefill and 1 decode instance (TP1, 4,000
// KV blocks each) with the autoscaler ticking every 0.5 s over one 8-GPU
// node, instances loading for 2 s, a scale-down window of downWindow µs.
func runPDScale(t *testing.T, era simcore.Era, minReplicas int, downWindow float64, tweak ...func(*Config)) metrics.Summary {
	t.Helper()
	cfg := Defaults()
	inWorld(&cfg, latency.KindTrainedPhysics)
	cfg.Era = era
	cfg.NumInstances, cfg.TotalKVBlocks, cfg.TP = 2, 4000, 1
	cfg.PD = PDConfig{Prefill: 1, Decode: 1, Decider: PDAlways, TransferBandwidth: 25, TransferBaseLatency: 0.05}
	cfg.Autoscale = Autoscale{IntervalUs: 500_000, ScaleDownWindowUs: downWindow, MinReplicas: minReplicas,
		LoadingDelay: Delay{Mean: 2}, WarmStart: true,
		Pools: []NodePool{{Name: "h100", GPUType: "H100", GPUsPerNode: 8, GPUMemoryGiB: 80, InitialNodes: 1, MaxNodes: 1}}}
	for _, f := range tweak {
		f(&cfg)
	}
	return runSpec(t, cfg, pdRamp(5000), 7)
}

// llm-d's behaviour (era 7fd7a88d): each pool role is a scale target of
// its own. The peak (~100 req/s of 2,000-token prompts, from 10 s to
// 20 s) queues prefills on the one prefill instance: the prefill pool
// grows to 2 and, 5 s after the peak, shrinks back to 1; the decode pool
// likewise on its own decision. No pool ever has 0 routable instances,
// so no request is rejected (~1,200 arrive) and none is dropped; the
// added prefill instance is a prefill one (its TP, its pool) and serves
// more than a tenth of the prefills; GPU-hours by role add up to the
// run's.
func TestPDAutoscalerScalesEachPool(t *testing.T) {
	s := runPDScale(t, simcore.EraMarch2026, 0, 5_000_000)
	a := s.Autoscaler
	if s.Rejected != 0 || s.Dropped != 0 || s.Completed < 1100 {
		t.Fatalf("completed %v, rejected %v, dropped %v; want ~1,200 completed, none rejected or dropped", s.Completed, s.Rejected, s.Dropped)
	}
	most := map[string]int{}
	for _, p := range a.Replicas {
		if p.Prefill < 1 || p.Decode < 1 {
			t.Fatalf("a pool with no routable instance at %v ms: %+v", p.AtMs, p)
		}
		most["prefill"], most["decode"] = max(most["prefill"], p.Prefill), max(most["decode"], p.Decode)
	}
	last := a.Replicas[len(a.Replicas)-1]
	if most["prefill"] != 2 || last.Prefill != 1 || last.Decode != 1 {
		t.Errorf("prefill pool at most %d, at the end %d prefill, %d decode; want 2, then back to 1 and 1 (%+v)", most["prefill"], last.Prefill, last.Decode, a.Replicas)
	}
	if len(a.Roles) != 2 || a.Roles[0].Role != "prefill" || a.Roles[0].ScaleUps < 1 || a.Roles[0].ScaleDowns < 1 {
		t.Errorf("roles %+v; want prefill first, with an instance added and one drained", a.Roles)
	}
	var gpuHours float64
	for _, r := range a.Roles {
		gpuHours += r.GPUHours
	}
	if s.GPUHours == nil || math.Abs(gpuHours-*s.GPUHours) > 1e-12 {
		t.Errorf("GPU-hours by role sum to %v, the run's %v", gpuHours, s.GPUHours)
	}
	var prefills, added int64
	for _, in := range a.Instances {
		if in.Role == "prefill" {
			prefills += in.Completed
		}
		if strings.Contains(in.Name, "-prefill-") {
			if in.Role != "prefill" {
				t.Errorf("%s has role %q", in.Name, in.Role)
			}
			added += in.Completed
		}
	}
	if prefills != int64(s.Completed) || 10*added < prefills {
		t.Errorf("added prefill instances served %d of %d prefills; want more than a tenth, of all %v requests", added, prefills, s.Completed)
	}
}

// tp 2 with a prefill pool at TP1: the prefill instance the autoscaler
// adds at the peak is TP1 too (its latency model, one GPU), so the
// prefill role's GPU-hours are 1 × its instances' hours and the decode
// role's 2 ×.
func TestPDAutoscalerAddsAtTheRolesTP(t *testing.T) {
	s := runPDScale(t, simcore.EraMarch2026, 0, 5_000_000, func(c *Config) { c.TP, c.PD.PrefillTP = 2, 1 })
	a := s.Autoscaler
	hours := map[string]float64{}
	for _, in := range a.Instances {
		hours[in.Role] += (in.EndedMs - in.CreatedMs) / 3.6e6
	}
	for _, r := range a.Roles {
		gpus := map[string]float64{"prefill": 1, "decode": 2}[r.Role]
		if math.Abs(r.GPUHours-gpus*hours[r.Role]) > 1e-12 {
			t.Errorf("%s: %v GPU-hours; want %v × %v hours", r.Role, r.GPUHours, gpus, hours[r.Role])
		}
	}
	if a.Roles[0].Role != "prefill" || a.Roles[0].ScaleUps < 1 || s.Rejected != 0 {
		t.Errorf("roles %+v, rejected %v; want a prefill instance added, nothing rejected", a.Roles, s.Rejected)
	}
}

// BLIS f90a1e3a's behaviour on the same ramp (its era, no
// min_replicas). With a 60 s scale-down window nothing is drained: the
// instances added at the peak are in no pool, so they serve nothing and
// the prefill pool stays one instance. With a 5 s window the cluster,
// idle at 5 s, is drained whole (both pool's only instances) and every
// later request is rejected at routing.
func TestPDAutoscalerBLISEra(t *testing.T) {
	s := runPDScale(t, simcore.EraAugust2026, 0, 60_000_000)
	a := s.Autoscaler
	if a.ScaleUps < 1 {
		t.Fatalf("no instance added: %+v", a.Replicas)
	}
	for _, in := range a.Instances[2:] {
		if in.Role != "" || in.Completed != 0 || !strings.HasPrefix(in.Name, "autoscale-meta-llama/llama-3.1-8b-instruct-0") {
			t.Errorf("added %s: role %q, %d completed; want BLIS's name, no pool, nothing served", in.Name, in.Role, in.Completed)
		}
	}
	for _, p := range a.Replicas {
		if p.Prefill != 1 {
			t.Errorf("%d prefill instances routable at %v ms; want 1 throughout", p.Prefill, p.AtMs)
		}
	}
	s = runPDScale(t, simcore.EraAugust2026, 0, 5_000_000)
	last := s.Autoscaler.Replicas[len(s.Autoscaler.Replicas)-1]
	if last.Routable != 0 || last.Draining != 2 || s.Rejected < 1000 || s.Completed+s.Rejected+s.Dropped < 1100 {
		t.Errorf("end %+v, completed %v, rejected %v; want both drained (idle: draining for ever) and the ~1,180 later requests rejected", last, s.Completed, s.Rejected)
	}
}

// Round-robin per pool, 300 requests always split. Counting per pool (era
// 7fd7a88d; llm-d runs one picker per profile), 2 prefill : 2 decode
// gives each instance of a pool half its requests, 150. BLIS f90a1e3a's
// one counter for both pools (its era) advances twice per request, the
// decode pick taking the even values and the prefill pick the odd ones:
// 2P:2D pins every prefill to instance 1 (odd mod 2 = 1) and every
// decode to instance 2 (the decode pool's first: even mod 2 = 0); 3P:2D
// spreads the prefills evenly (1, 3, 5 mod 3 = 1, 0, 2: 100 each) and
// still sends every decode to the decode pool's first, instance 3.
func TestPDRoundRobinPerPool(t *testing.T) {
	for _, c := range []struct {
		era     simcore.Era
		prefill int
		want    []int64 // requests completed by each instance: prefills, then decodes
	}{
		{simcore.EraMarch2026, 2, []int64{150, 150, 150, 150}},
		// The trained-physics world implies era f90a1e3a's mechanics, but
		// BLIS's shared counter only comes with the era given.
		{"", 2, []int64{150, 150, 150, 150}},
		{simcore.EraAugust2026, 2, []int64{0, 300, 300, 0}},
		{simcore.EraAugust2026, 3, []int64{100, 100, 100, 300, 0}},
	} {
		cfg := Defaults()
		inWorld(&cfg, latency.KindTrainedPhysics)
		cfg.Era, cfg.NumInstances = c.era, c.prefill+2
		cfg.PD = PDConfig{Prefill: c.prefill, Decode: 2, Decider: PDAlways, TransferBandwidth: 25, TransferBaseLatency: 0.05}
		spec := &workload.Spec{Version: "2", Seed: 7, AggregateRate: 20, NumRequests: 300, Clients: []workload.Client{{
			ID: "c", RateFraction: 1, Arrival: workload.Arrival{Process: "poisson"},
			Input:  workload.Distribution{Type: "gaussian", Params: map[string]float64{"mean": 600, "std_dev": 200, "min": 50, "max": 2000}},
			Output: workload.Distribution{Type: "gaussian", Params: map[string]float64{"mean": 60, "std_dev": 30, "min": 1, "max": 200}},
		}}}
		src, err := workload.NewGenerator(spec, workload.Options{Seed: 7, BlockSize: 16})
		if err != nil {
			t.Fatal(err)
		}
		eng, err := New(cfg, src)
		if err != nil {
			t.Fatal(err)
		}
		if s := eng.Run(); s.Completed != 300 {
			t.Fatalf("%s %dP:2D: completed %v of 300", c.era, c.prefill, s.Completed)
		}
		var got []int64
		for _, in := range eng.instances {
			got = append(got, in.completed)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("era %s, %dP:2D: completed per instance %v, want %v", c.era, c.prefill, got, c.want)
		}
	}
}

// Node pools hold each pool role's instances at its own TP (llm-d's
// behaviour): on one 8-GPU node, 2 prefill at TP4 and 2 decode at TP1
// need 10 GPUs and are refused in one line naming num_instances; 2
// prefill and 2 decode at TP1 with tp 4 fit (BLIS places every instance
// at tp, 16 GPUs, and its era refuses them).
func TestPDAutoscalerPlacementByRole(t *testing.T) {
	check := func(era simcore.Era, tp, prefillTP, decodeTP int) error {
		cfg := Defaults()
		inWorld(&cfg, latency.KindTrainedPhysics)
		cfg.Era, cfg.TP, cfg.NumInstances = era, tp, 4
		cfg.PD = PDConfig{Prefill: 2, Decode: 2, PrefillTP: prefillTP, DecodeTP: decodeTP}
		cfg.Autoscale = Autoscale{IntervalUs: 1_000_000,
			Pools: []NodePool{{Name: "h100", GPUType: "H100", GPUsPerNode: 8, GPUMemoryGiB: 80, InitialNodes: 1, MaxNodes: 1}}}
		return cfg.Validate()
	}
	err := check(simcore.EraMarch2026, 1, 4, 1)
	if err == nil || !strings.Contains(err.Error(), "num_instances") || !strings.Contains(err.Error(), "instance_2 at TP1") {
		t.Errorf("2 × TP4 + 2 × TP1 on 8 GPUs: %v", err)
	}
	if err := check(simcore.EraMarch2026, 4, 1, 1); err != nil {
		t.Errorf("4 × TP1 on 8 GPUs: %v", err)
	}
	if err := check(simcore.EraAugust2026, 4, 1, 1); err == nil || !strings.Contains(err.Error(), "at TP4 do not fit") {
		t.Errorf("era f90a1e3a, 4 instances at tp 4 on 8 GPUs: %v", err)
	}
}
