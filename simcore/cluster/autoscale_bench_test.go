package cluster

import (
	"testing"

	"optimize/simcore/latency"
)

// BenchmarkAutoscaler runs 100,000 requests of the baseline's workload
// with the autoscaler ticking every second: on the baseline's 8
// instances (no node pools, at most 8, at least 1 routable), and on
// BenchmarkPD's 8 prefill : 8 decode in BLIS f90a1e3a's world, each pool
// role scaled on its own (at least 1 routable each). Every request must
// complete, be rejected or be dropped.
func BenchmarkAutoscaler(b *testing.B) {
	spec, err := builtinWorkloads.Spec("orthogonal-slo")
	if err != nil {
		b.Fatal(err)
	}
	agg := baselineConfig()
	agg.Autoscale = Autoscale{IntervalUs: 1_000_000, MinReplicas: 1, MaxReplicas: 8}
	pd := baselineConfig()
	inWorld(&pd, latency.KindTrainedPhysics)
	pd.TotalKVBlocks, pd.NumInstances = 0, 16
	pd.PD.Prefill, pd.PD.Decode, pd.PD.Decider = 8, 8, PDAlways
	pd.Autoscale = Autoscale{IntervalUs: 1_000_000, MinReplicas: 1, MaxReplicas: 8}
	for _, c := range []struct {
		name string
		cfg  Config
	}{{"baseline/requests=100000", agg}, {"pd=8P8D/requests=100000", pd}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				s := runRequests(b, c.cfg, spec, 42, 100_000)
				if s.Completed+s.Rejected+s.Dropped != 100_000 {
					b.Fatalf("completed %v, rejected %v, dropped %v of 100000", s.Completed, s.Rejected, s.Dropped)
				}
			}
			b.ReportMetric(100_000*float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}
