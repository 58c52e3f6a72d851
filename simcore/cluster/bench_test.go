package cluster

import (
	"fmt"
	"os"
	"testing"

	"optimize/simcore/latency"
	"optimize/simcore/route"
	"optimize/simcore/sched"
	"optimize/simcore/workload"
)

// baselineConfig is the llm-d-parity baseline on 8 instances.
func baselineConfig() Config {
	c := testConfig(8, 132139)
	c.Routing = route.Config{
		Policy:              "weighted",
		Scorers:             []route.ScorerWeight{{Name: "prefix-affinity", Weight: 3}, {Name: "queue-depth", Weight: 2}, {Name: "kv-utilization", Weight: 2}},
		PrefixIndexCapacity: 10000,
	}
	c.PrefillThreshold = 256
	return c
}

// BenchmarkBaseline runs the whole simulation (workload generation
// included) of the baseline's workload (orthogonal-slo) scaled to n requests.
// Simulated requests per second = n / (ns/op · 1e-9).
func BenchmarkBaseline(b *testing.B) {
	spec, err := builtinWorkloads.Spec("orthogonal-slo")
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1_000, 10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("requests=%d", n), func(b *testing.B) {
			if n >= 1_000_000 && testing.Short() {
				b.Skip("1M requests in -short mode")
			}
			runBench(b, spec, baselineConfig(), n)
		})
	}
}

// BenchmarkBaselineTrainedPhysics is BenchmarkBaseline in BLIS f90a1e3a's
// world: the same cluster and workload, llama-3.1-8b on H100 at TP2 priced
// by the trained-physics model, its KV capacity derived from memory
// (64,431 blocks by vLLM's rule) and the f90a1e3a era's mechanics.
func BenchmarkBaselineTrainedPhysics(b *testing.B) {
	spec, err := builtinWorkloads.Spec("orthogonal-slo")
	if err != nil {
		b.Fatal(err)
	}
	cfg := baselineConfig()
	inWorld(&cfg, latency.KindTrainedPhysics)
	cfg.TotalKVBlocks = 0
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("requests=%d", n), func(b *testing.B) { runBench(b, spec, cfg, n) })
	}
}

// BenchmarkOverloadScheduler runs sustained overload — the baseline's
// workload single-turn, 1,000,000 requests at its 2,000 req/s on 8
// instances, so the backlog grows all run — under FCFS and under
// priority-FCFS with slo-tiered priorities, whose queue is kept in heaps:
// the two walls should stay within 2× of each other.
func BenchmarkOverloadScheduler(b *testing.B) {
	spec, err := builtinWorkloads.Spec("orthogonal-slo")
	if err != nil {
		b.Fatal(err)
	}
	for i := range spec.Clients {
		if r := spec.Clients[i].Reasoning; r != nil && r.MultiTurn != nil {
			multi := *r.MultiTurn
			multi.MaxRounds = 1
			reasoning := *r
			reasoning.MultiTurn = &multi
			spec.Clients[i].Reasoning = &reasoning
		}
	}
	for _, sc := range []struct{ name, scheduler, policy string }{{"fcfs", "fcfs", "constant"}, {"priority-fcfs/slo-tiered", "priority-fcfs", sched.SLOTiered}} {
		b.Run(sc.name, func(b *testing.B) {
			if testing.Short() {
				b.Skip("1M requests in -short mode")
			}
			cfg := baselineConfig()
			cfg.Scheduler, cfg.Priority = sc.scheduler, sched.PolicyConfig{Name: sc.policy}
			runBench(b, spec, cfg, 1_000_000)
		})
	}
}

// runBench simulates n requests of spec under cfg b.N times and reports
// simulated requests per second.
func runBench(b *testing.B, spec *workload.Spec, cfg Config, n int) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		src, err := workload.NewGenerator(spec, workload.Options{Seed: 42, BlockSize: 16, NumRequests: n})
		if err != nil {
			b.Fatal(err)
		}
		eng, err := New(cfg, src)
		if err != nil {
			b.Fatal(err)
		}
		if s := eng.Run(); int(s.Completed) != n {
			b.Fatalf("completed %v of %d", s.Completed, n)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// builtinWorkloads are the binary's built-in workloads, read from the
// source tree (the simulator does not embed them).
var builtinWorkloads = workload.Library{FS: os.DirFS("../../data"), Dir: "workloads"}

// BenchmarkPD runs 100,000 requests of the baseline's workload on 16
// instances in BLIS f90a1e3a's world (trained-physics, TP2) aggregated,
// and disaggregated 8 prefill : 8 decode with every request split: the
// P/D cluster's simulated requests per second should stay at least half
// the aggregated one's. Split, the baseline's load overruns the decode
// instances' KV (each transfer reserves its whole prompt, shared prefix
// included), so some requests are dropped: every request must complete
// or be dropped.
func BenchmarkPD(b *testing.B) {
	spec, err := builtinWorkloads.Spec("orthogonal-slo")
	if err != nil {
		b.Fatal(err)
	}
	agg := baselineConfig()
	inWorld(&agg, latency.KindTrainedPhysics)
	agg.TotalKVBlocks = 0
	agg.NumInstances = 16
	pd := agg
	pd.PD.Prefill, pd.PD.Decode, pd.PD.Decider = 8, 8, PDAlways
	for _, c := range []struct {
		name string
		cfg  Config
	}{{"aggregated/requests=100000", agg}, {"pd=8P8D/requests=100000", pd}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				s := runRequests(b, c.cfg, spec, 42, 100_000)
				if s.Completed+s.Dropped != 100_000 {
					b.Fatalf("completed %v and dropped %v of 100000", s.Completed, s.Dropped)
				}
			}
			b.ReportMetric(100_000*float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}
