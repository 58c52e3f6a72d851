package settings

import (
	"errors"
	"math"
	"testing"

	"optimize/simcore"
	"optimize/simcore/cluster"
	"optimize/simcore/errtext"
	"optimize/simcore/route"
	"optimize/simcore/sched"
)

// Every value the simulator rejects is reported as an errtext.Setting
// naming a key of the settings table, so that the CLI can name the flag
// (and a template the key) from the table alone: the simulator types no
// flag names.
func TestSimulatorErrorsNameATableKey(t *testing.T) {
	class := func(v float64) simcore.PerClass {
		var p simcore.PerClass
		p.V[simcore.SLOCritical], p.Set[simcore.SLOCritical] = v, true
		return p
	}
	cases := []struct {
		key   string
		spoil func(c *cluster.Config)
	}{
		{"num_instances", func(c *cluster.Config) { c.NumInstances = 0 }},
		{"kv.total_blocks", func(c *cluster.Config) { c.TotalKVBlocks = -1 }},
		{"model", func(c *cluster.Config) { c.Model = "nope/model" }},
		{"gpu", func(c *cluster.Config) { c.GPU = "B200" }},
		{"latency.model", func(c *cluster.Config) { c.GPU, c.LatencyModel = "A100-80", "blackbox" }},
		{"latency.model", func(c *cluster.Config) { c.LatencyModel = "analytic" }},
		{"tp", func(c *cluster.Config) { c.TP, c.LatencyModel = 3, "trained-physics" }},
		{"gpu_memory_utilization", func(c *cluster.Config) { c.GPUMemoryUtilization, c.LatencyModel = 1.5, "roofline" }},
		{"tp", func(c *cluster.Config) {
			c.Model, c.TP, c.LatencyModel = "meta-llama/llama-3.1-70b-instruct", 1, "trained-physics"
		}},
		{"era", func(c *cluster.Config) { c.Era = "2026-05" }},
		{"max_model_len", func(c *cluster.Config) { c.MaxModelLen = -1 }},
		{"kv.total_blocks", func(c *cluster.Config) { c.TotalKVBlocks = math.MaxInt32 + 1 }},
		{"kv.block_size", func(c *cluster.Config) { c.BlockSize = 0 }},
		{"batch.max_num_running_reqs", func(c *cluster.Config) { c.MaxRunning = 0 }},
		{"batch.max_num_scheduled_tokens", func(c *cluster.Config) { c.MaxScheduledTokens = 0 }},
		{"routing.snapshot_refresh_us", func(c *cluster.Config) { c.SnapshotRefresh = -2 }},
		{"run.horizon_us", func(c *cluster.Config) { c.Horizon = -1 }},
		{"kv.cpu_blocks", func(c *cluster.Config) { c.KVCPUBlocks = -1 }},
		{"kv.offload_threshold", func(c *cluster.Config) { c.KVOffloadThreshold = 2 }},
		{"kv.transfer_bandwidth", func(c *cluster.Config) { c.KVTransferBandwidth = 0 }},
		{"kv.transfer_base_latency_us", func(c *cluster.Config) { c.KVTransferBaseLatency = -1 }},
		{"batch.long_prefill_token_threshold", func(c *cluster.Config) { c.PrefillThreshold = -1 }},
		{"batch.prefill_threshold.critical", func(c *cluster.Config) { c.SLOPrefillThreshold = class(-1) }},
		{"preemption.policy", func(c *cluster.Config) { c.PreemptionPolicy = "lifo" }},
		{"slo.ttft_target_ms.critical", func(c *cluster.Config) { c.SLOTTFT = class(-1) }},
		{"slo.itl_target_ms.critical", func(c *cluster.Config) { c.SLOITL = class(0) }},
		{"slo.e2e_target_ms.critical", func(c *cluster.Config) { c.SLOE2E = class(math.Inf(1)) }},
		{"latency.alpha.1", func(c *cluster.Config) { c.Coefficients.Alpha[1], c.Coefficients.AlphaSet[1] = -1, true }},
		{"latency.beta.2", func(c *cluster.Config) { c.Coefficients.Beta[2], c.Coefficients.BetaSet[2] = math.NaN(), true }},
		{"routing.prefix_index_capacity", func(c *cluster.Config) { c.Routing.PrefixIndexCapacity = -1 }},
		{"routing.cache_signal_delay_us", func(c *cluster.Config) { c.Routing.CacheSignalDelay = -2 }},
		{"routing.token_load.threshold_tokens", func(c *cluster.Config) { c.Routing.TokenLoadThreshold = -1 }},
		{"routing.kv_pressure.transfer_scale", func(c *cluster.Config) { c.Routing.KVPressureTransferScale = -1 }},
		{"routing.kv_pressure.thrash_weight", func(c *cluster.Config) { c.Routing.KVPressureThrashWeight = -1 }},
		{"routing.slo_priority_blend.critical", func(c *cluster.Config) { c.Routing.SLOPriorityBlend = class(2) }},
		{"routing.kv_pressure_slo_scale.critical", func(c *cluster.Config) { c.Routing.KVPressureSLOScale = class(-1) }},
		{"priority.policy", func(c *cluster.Config) { c.Priority.Name = "urgent" }},
		{"priority.load_threshold", func(c *cluster.Config) { c.Priority.LoadThreshold = -1 }},
		{"priority.age_weight_per_ms", func(c *cluster.Config) { c.Priority.AgeWeightPerMs = -1 }},
		{"priority.base.critical", func(c *cluster.Config) { c.Priority.Base = class(math.NaN()) }},
		{"priority.urgency_threshold_ms.critical", func(c *cluster.Config) { c.Priority.UrgencyThresholdMs = class(-1) }},
		{"admission.policy", func(c *cluster.Config) { c.Admission.Policy = "nope" }},
		{"admission.policy", func(c *cluster.Config) { c.Admission.Policy = "slo-gated" }},
		{"admission.token_bucket.capacity", func(c *cluster.Config) { c.Admission.BucketCapacity = -1 }},
		{"admission.token_bucket.refill_rate", func(c *cluster.Config) { c.Admission.RefillRate = -1 }},
		{"admission.slo_gate.critical", func(c *cluster.Config) { c.Admission.SLOGate = class(-1) }},
		{"admission.probabilistic.queue_depth_threshold", func(c *cluster.Config) { c.Admission.Probabilistic.QueueDepthThreshold = -1 }},
		{"admission.probabilistic.kv_util_threshold", func(c *cluster.Config) { c.Admission.Probabilistic.KVUtilThreshold = 2 }},
		{"admission.probabilistic.power", func(c *cluster.Config) { c.Admission.Probabilistic.Power = -1 }},
		{"admission.probabilistic.k", func(c *cluster.Config) { c.Admission.Probabilistic.K = -1 }},
	}
	std, err := Standard()
	if err != nil {
		t.Fatal(err)
	}
	check := func(name, want string, err error) {
		t.Helper()
		var bad *errtext.Setting
		if !errors.As(err, &bad) {
			t.Errorf("%s: error %v does not name a setting", name, err)
			return
		}
		if _, ok := Lookup(bad.Key); !ok || bad.Key != want || err.Error() != bad.Error() {
			t.Errorf("%s: error %q names %q, want the table key %q and nothing in front", name, err, bad.Key, want)
		}
	}
	for _, c := range cases {
		cfg := std
		c.spoil(&cfg)
		check(c.key, c.key, CheckConfig(&cfg))
	}
	// The routing policy and the scheduler are checked when the engine
	// builds them.
	_, err = route.New(route.Config{Policy: "random"}, 2, nil)
	check("unknown routing policy", "routing.policy", err)
	_, err = sched.NewScheduler("lifo", simcore.PerClass{})
	check("unknown scheduler", "scheduler", err)
	_, err = sched.NewScheduler(sched.SLODeadline, simcore.PerClass{})
	check("slo-deadline without a target", "scheduler", err)
	_, err = sched.NewScheduler(sched.SLODeadline, class(1e13))
	check("slo-deadline target too large", "slo.ttft_target_ms.critical", err)
}
