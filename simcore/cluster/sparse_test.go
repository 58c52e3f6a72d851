package cluster

import (
	"reflect"
	"testing"

	"optimize/simcore/batch"
	"optimize/simcore/latency"
	"optimize/simcore/route"
	"optimize/simcore/sched"
	"optimize/simcore/workload"
)

// Sparse steps (idle decodes advanced by the step count, only due requests
// visited) must give exactly what visiting every request every step gives,
// in the steps that fall back to the dense rule too: a short token budget,
// short KV with preemptions, priority preemption, the CPU tier, and
// open-loop sessions, whose rounds share a stream at once (so a decode
// block's registration cannot wait for the request's next visit).
func TestSparseStepsMatchDense(t *testing.T) {
	cases := []struct {
		name     string
		cfg      func() Config
		fallback bool // the sparse run must fall back at least once (else never)
		preempt  bool // and preempt
		openLoop bool
	}{
		{"baseline", baselineConfig, false, false, false},
		{"short token budget", func() Config {
			c := baselineConfig()
			c.MaxScheduledTokens, c.MaxRunning = 300, 64
			return c
		}, true, false, false},
		{"short KV", func() Config {
			c := testConfig(2, 700)
			c.PrefillThreshold = 128
			return c
		}, true, true, false},
		{"priority preemption", func() Config {
			c := testConfig(2, 700)
			c.Scheduler = "priority-fcfs"
			c.Priority = sched.PolicyConfig{Name: sched.SLOTiered}
			c.PreemptionPolicy = batch.PreemptPriority
			return c
		}, true, true, false},
		{"CPU tier", func() Config {
			c := testConfig(4, 2000)
			c.KVCPUBlocks, c.KVOffloadThreshold, c.KVTransferBandwidth, c.KVTransferBaseLatency = 3000, 0.8, 10, 100
			c.Routing = route.Config{Policy: "weighted", Scorers: []route.ScorerWeight{{Name: "kv-pressure", Weight: 2}, {Name: "prefix-affinity", Weight: 3}}, PrefixIndexCapacity: 10000}
			return c
		}, true, false, false},
		{"open-loop sessions, short KV", func() Config {
			c := testConfig(2, 900)
			c.PrefillThreshold = 128
			return c
		}, true, true, true},
	}
	for _, tc := range cases {
		for _, kind := range []string{latency.KindBlackbox, latency.KindTrainedPhysics} {
			t.Run(tc.name+"/"+kind, func(t *testing.T) {
				cfg := tc.cfg
				if kind == latency.KindTrainedPhysics {
					// A decode's step time reads its context: the idle
					// decodes' contexts must add up as the visited ones'.
					cfg = func() Config {
						c := tc.cfg()
						inWorld(&c, latency.KindTrainedPhysics)
						return c
					}
				}
				sparseMatchesDense(t, tc.openLoop, tc.preempt, tc.fallback, cfg)
			})
		}
	}
}

func sparseMatchesDense(t *testing.T, openLoop, preempt, wantFallback bool, cfg func() Config) {
	{
		tc := struct {
			openLoop, preempt, fallback bool
			cfg                         func() Config
		}{openLoop, preempt, wantFallback, cfg}
		{
			spec, err := builtinWorkloads.Spec("orthogonal-slo")
			if err != nil {
				t.Fatal(err)
			}
			if tc.openLoop {
				for i := range spec.Clients {
					spec.Clients[i].ClosedLoop = new(bool)
				}
			}
			// run reports the summary, the steps that fell back, and whether
			// any request was ever left idle between events.
			run := func(dense bool) (any, int64, bool) {
				src, err := workload.NewGenerator(spec, workload.Options{Seed: 42, BlockSize: 16, NumRequests: 1500})
				if err != nil {
					t.Fatal(err)
				}
				eng, err := New(tc.cfg(), src)
				if err != nil {
					t.Fatal(err)
				}
				for _, in := range eng.instances {
					in.dense = dense
				}
				idle := false
				for eng.stepOnce() {
					for _, in := range eng.instances {
						for _, b := range in.since {
							idle = idle || b >= 0
						}
					}
				}
				s := eng.summarize()
				var fallback int64
				for _, in := range eng.instances {
					fallback += in.fallback
				}
				if tc.preempt && s.Preemptions == 0 {
					t.Fatalf("no preemption: the case does not test what it should")
				}
				return s, fallback, idle
			}
			sparse, fallback, idle := run(false)
			dense, _, denseIdle := run(true)
			if !reflect.DeepEqual(sparse, dense) {
				t.Fatalf("sparse and dense steps differ:\nsparse %+v\ndense  %+v", sparse, dense)
			}
			if tc.fallback != (fallback > 0) {
				t.Fatalf("the sparse run fell back in %d steps; want fallbacks: %v", fallback, tc.fallback)
			}
			// Equal results prove nothing if no request was ever idle.
			if !idle || denseIdle {
				t.Fatalf("requests left idle: sparse run %v, dense run %v; want true, false", idle, denseIdle)
			}
		}
	}
}
