package cluster

import (
	"testing"

	"optimize/simcore/flow"
)

// BenchmarkFlowControl runs BenchmarkBaseline's cluster and workload
// (orthogonal-slo, 100,000 requests) behind flow control's gateway queue,
// the utilization detector gating it on 50 ms snapshots, with in-flight
// eviction off and on: off, the eviction code must cost nothing.
func BenchmarkFlowControl(b *testing.B) {
	spec, err := builtinWorkloads.Spec("orthogonal-slo")
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		evict bool
	}{{"eviction=off/requests=100000", false}, {"eviction=on/requests=100000", true}} {
		cfg := baselineConfig()
		cfg.SnapshotRefresh = 50_000
		cfg.FlowControl = flow.Config{Enabled: true, Detector: flow.DetectUtilization, InFlightEviction: c.evict}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var evicted float64
			for i := 0; i < b.N; i++ {
				s := runRequests(b, cfg, spec, 42, 100_000)
				evicted = *s.Evicted
			}
			b.ReportMetric(100_000*float64(b.N)/b.Elapsed().Seconds(), "req/s")
			b.ReportMetric(evicted, "evicted")
		})
	}
}
