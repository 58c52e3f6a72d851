package settings

import (
	"fmt"
	"strings"

	"optimize/simcore/admit"
	"optimize/simcore/batch"
	"optimize/simcore/cluster"
	"optimize/simcore/keys"
	"optimize/simcore/latency"
	"optimize/simcore/sched"
)

// The production column of the settings table: each setting's llm-d or
// vLLM counterpart, by key, or by key prefix (ending in ".") for a family.
// The routing.weight.* rows (and the llm-d scorer rows beside them) carry
// theirs in the table itself. Names follow vLLM's `vllm serve` arguments
// and the llm-d Router's plugin types at commit ebab68792 (2026-08-21).

// RoundRobinScorer is the one scorer of the llm-d profile that routes
// round-robin: with a prefix producer that hashes no block every request
// is a cache miss, and no-hit-lru-scorer then prefers the endpoint that
// served a cold request least recently, which cycles through the
// endpoints.
const RoundRobinScorer = "no-hit-lru-scorer"

// DefaultPicker is the picker llm-d's config loader adds to a profile
// that names none.
const DefaultPicker = "max-score-picker"

func productionColumn() []struct {
	key string
	c   Counterpart
} {
	return []struct {
		key string
		c   Counterpart
	}{
		// The world and the run.
		{"model", withSpelling(vllm("--model", Exact, ""), huggingFaceID)},
		{keys.TP, vllm("--tensor-parallel-size", Exact, "")},
		{"gpu", simulationOnly("the GPUs the vLLM pods are scheduled on")},
		{keys.NumInstances, simulationOnly("the replicas of the vLLM Deployment the InferencePool selects")},
		{LatencyModelKey, simulationOnly("how the simulator times a step; production measures it")},
		{keys.LatencyAlpha + ".", simulationOnly("a coefficient of the simulated step time")},
		{keys.LatencyBeta + ".", simulationOnly("a coefficient of the simulated step time")},
		{keys.PhysicsAlpha + ".", simulationOnly("a coefficient of the simulated step time")},
		{keys.PhysicsBeta + ".", simulationOnly("a coefficient of the simulated step time")},
		{keys.Era, simulationOnly("which BLIS behaviour the simulator reproduces")},
		{"cost.gpu_hour.", simulationOnly("a price, for the cost metrics; no vLLM or llm-d setting")},
		{keys.RunHorizon, simulationOnly("simulation only: when the simulated run stops")},
		{"slo.", simulationOnly("the latency target the run's attainment is measured against; production's SLO monitoring")},
		{keys.KVTotalBlocks, withLimit(vllm("--num-gpu-blocks-override", Exact, ""), vllmBlocks)},
		{keys.KVBlockSize, vllm("--block-size", Exact, "")},
		{keys.MaxModelLen, Counterpart{System: SystemVLLM, Name: "--max-model-len", Fidelity: Exact,
			Values: []ValueCounterpart{{Value: "0", Fidelity: Exact, Note: "no context window: vLLM's default, the model's"}}}},
		{keys.GPUMemoryUtilization, vllm("--gpu-memory-utilization", Exact, "")},
		{keys.KVCapacityRule, Counterpart{System: SystemVLLM, Name: "num_gpu_blocks", Fidelity: WorldFact,
			Note: "how vLLM sizes its KV cache at start-up (it logs num_gpu_blocks); nothing to write",
			Values: []ValueCounterpart{
				{Value: "vllm", Fidelity: WorldFact, Note: "vLLM's own rule: nothing to write"},
				{Value: "blis-f90a1e3a", Fidelity: NoCounterpart, Note: "BLIS's estimate, TP times vLLM's blocks at TP > 1: no vLLM sizes its cache so"}}}},

		// Batch formation and chunking.
		{keys.MaxRunning, vllm("--max-num-seqs", Exact, "")},
		{keys.MaxScheduledTokens, vllm("--max-num-batched-tokens", Exact, "")},
		{keys.LongPrefillThreshold, vllm("--long-prefill-token-threshold", Exact, "with --enable-chunked-prefill; 0 is vLLM's default, no cap per request")},
		{keys.PrefillThreshold + ".", Counterpart{Inherits: keys.LongPrefillThreshold, Fidelity: NoCounterpart,
			Note: "vLLM has one prefill chunk cap for every request; a per-class cap needs a vLLM scheduler change that reads the request's class"}},

		// The CPU KV tier.
		{keys.KVCPUBlocks, Counterpart{System: SystemVLLM, Name: "--kv-offloading-size", Fidelity: Approximate, Scale: cpuTierGiB,
			Note:   "GiB of CPU memory for vLLM's native KV offloading (with --kv-offloading-backend native), converted at the model's KV bytes per block; vLLM stores blocks to CPU as they are computed and loads them back on a prefix hit, where the simulator moves idle cached blocks above kv.offload_threshold",
			Values: []ValueCounterpart{{Value: "0", Fidelity: Exact, Note: "no CPU tier: vLLM's default"}}}},
		{keys.KVOffloadThreshold, none("vLLM's offloading connector has no utilisation threshold; offloading only above a GPU use would need an OffloadingSpec of its own")},
		{keys.KVTransferBandwidth, simulationOnly("the host link's measured CPU→GPU rate")},
		{keys.KVTransferBaseLatency, simulationOnly("the host link's measured latency per block")},

		// Routing.
		{keys.RoutingPolicy, Counterpart{System: SystemLLMD, Name: "profile", Param: ParamProfile, Fidelity: Exact, Values: []ValueCounterpart{
			{Value: "round-robin", Production: RoundRobinScorer, Fidelity: Exact,
				Note: "a profile of only no-hit-lru-scorer (weight 1) and max-score-picker, with approx-prefix-cache-producer at maxPrefixTokensToMatch 1 (below the 64-token block, so it hashes nothing; without it llm-d's loader adds one that does): every request is a miss, and least recently used first cycles through the endpoints; with P/D each profile (prefill, decode) has its own, as each pool counts on its own here outside era f90a1e3a (BLIS f90a1e3a shares one counter between the pools), and while the autoscaler adds and drains instances the turn resumes after the instance chosen last (BLIS: the counter modulo the routable instances)"},
			{Value: "least-loaded", Production: "queue-scorer", Fidelity: Approximate,
				Note: "queue-scorer alone (the waiting queue, min-max normalised) with max-score-picker; BLIS's least-loaded counts waiting + running + in-flight requests"},
			{Value: "weighted", Fidelity: Exact, Note: "the profile of the routing.weight.* scorers and the picker"},
		}}},
		{keys.PrefixIndexCapacity, none("the router-side prefix record of BLIS's prefix-affinity and slo-priority scorers, which have no llm-d plugin; llm-d's prefix-cache-scorer keeps its own LRU (lruCapacityPerServer)")},
		{keys.CacheSignalDelay, simulationOnly("the age of the KV events the precise prefix scorer sees; production's is the event stream's latency")},
		{keys.TokenLoadThreshold, none("a parameter of this project's token-load scorer, which has no llm-d plugin of the same arithmetic")},
		{keys.SnapshotRefresh, simulationOnly("how stale the load and KV metrics are; the EPP's is its metrics refresh interval (its --refresh-metrics-interval flag, outside the EndpointPickerConfig)")},
		{keys.KVPressureTransferScale, none("this project's kv-pressure scorers: an llm-d scorer plugin reading vLLM's CPU-tier transfer metrics would have to be built")},
		{keys.KVPressureThrashWeight, none("this project's kv-pressure scorers: an llm-d scorer plugin reading vLLM's CPU-tier transfer metrics would have to be built")},
		{keys.KVPressureSLOScale + ".", none("this project's kv-pressure-slo scorer: an llm-d scorer plugin reading the request's class and vLLM's transfer metrics would have to be built")},
		{keys.SLOPriorityBlend + ".", none("this project's slo-priority scorer: an llm-d scorer plugin blending prefix and queue scores by the request's class would have to be built")},

		// Scheduling, priority, preemption.
		{keys.Scheduler, Counterpart{System: SystemVLLM, Name: "--scheduling-policy", Fidelity: NoCounterpart, Values: []ValueCounterpart{
			{Value: sched.FCFS, Production: "fcfs", Fidelity: Exact},
			{Value: sched.PriorityFCFS, Production: "priority", Fidelity: Approximate,
				Note: "under priority.policy slo-class the export turns on llm-d flow control (featureGates: flowControl), one priority band per class, FCFS within a band, which holds requests at the gateway in class order while the pool is saturated (utilization-detector: a waiting queue of 5 or KV use 0.8); the simulator orders each vLLM's waiting queue. vLLM's own priority order reads the request's priority field (lower first), which llm-d does not set"},
			{Value: sched.SJF, Fidelity: NoCounterpart, Note: "vLLM has no shortest-input-first order; a scheduling policy of its own would have to be added"},
			{Value: sched.SLODeadline, Fidelity: NoCounterpart, Note: "vLLM has no deadline order; a scheduling policy reading the class's TTFT target would have to be added"},
		}}},
		{keys.PreemptionPolicy, Counterpart{System: SystemVLLM, Fidelity: NoCounterpart, Values: []ValueCounterpart{
			{Value: batch.PreemptFCFS, Fidelity: Exact, Note: "vLLM's default: the most recently scheduled running request is preempted"},
			{Value: batch.PreemptPriority, Fidelity: NoCounterpart, Note: "vLLM preempts by priority only under --scheduling-policy priority, where it also orders the queue by it; a separate victim policy needs a vLLM change"},
		}}},
		{keys.PriorityPolicy, Counterpart{Fidelity: NoCounterpart, Values: []ValueCounterpart{
			{Value: sched.Constant, Fidelity: Exact, Note: "every request the same priority: vLLM's default"},
			{Value: sched.ByClass, Fidelity: Approximate, Note: "a fixed priority per class: objectives.yaml gives each class an InferenceObjective, and under priority-fcfs llm-d's flow control serves each as a priority band, at the gateway while the pool is saturated"},
			{Value: sched.SLOBased, Fidelity: NoCounterpart, Note: "priority growing with the wait, whatever the class: flow control's bands are fixed per InferenceObjective; an EPP ordering policy that ages requests would have to be built"},
			{Value: sched.SLOTiered, Fidelity: Approximate, Note: "its class base priorities are the InferenceObjectives' priorities, served by flow control as bands; the growth with the wait (priority.urgency_threshold_ms.*, priority.age_weight_per_ms) has no counterpart, so production orders by class alone"},
			{Value: sched.SLOAdaptive, Fidelity: Approximate, Note: "its class base priorities are the InferenceObjectives' priorities, served by flow control as bands; the scaling by the queue length (priority.load_threshold) has no counterpart, so production orders by class alone"},
		}}},
		{keys.PriorityBase + ".", Counterpart{System: SystemLLMD, Name: LLMDObjective, Param: "spec.priority", Fidelity: Approximate, Integer: true,
			Note: "the class's InferenceObjective priority (objectives.yaml), a whole number, distinct per class in the simulated order; flow control's priority bands (epp-config.yaml) serve higher first"}},
		{keys.PriorityUrgency + ".", none("priority aging: vLLM's priority is fixed per request; a vLLM scheduler that ages requests would have to be built")},
		{keys.PriorityAgeWeight, none("priority aging: vLLM's priority is fixed per request; a vLLM scheduler that ages requests would have to be built")},
		{keys.PriorityLoad, none("load-scaled class priority: a vLLM scheduler reading its own queue would have to be built")},
		{"priority.bridge", none("the router handing the class priority to the instance: the request's priority field, set by the client or gateway")},

		// Admission.
		{keys.AdmissionPolicy, Counterpart{System: SystemLLMD, Name: "admitter", Param: ParamType, Fidelity: NoCounterpart, Values: []ValueCounterpart{
			{Value: "always-admit", Fidelity: Exact, Note: "no admitter plugin: llm-d admits every request"},
			{Value: admit.Probabilistic, Production: "probabilistic-admitter", Fidelity: Exact,
				Note: "rejects requests of negative priority (objectives.yaml gives sheddable, batch and background one) with probability min(saturation^power · k, 1)"},
			{Value: "token-bucket", Fidelity: NoCounterpart, Note: "llm-d has no token-bucket admitter; an admitter plugin would have to be built"},
			{Value: "reject-all", Fidelity: NoCounterpart, Note: "a test policy: nothing in production rejects every request"},
			{Value: admit.SLOGated, Fidelity: NoCounterpart, Note: "llm-d's flow control queues by priority but sheds no class at a queue depth; an admitter plugin would have to be built"},
		}}},
		{"admission.token_bucket.", none("llm-d has no token-bucket admitter; an admitter plugin would have to be built")},
		{keys.SLOGate + ".", none("llm-d has no per-class queue-depth gate; an admitter plugin would have to be built")},
		{keys.ProbQueueDepth, Counterpart{System: SystemLLMD, Name: "probabilistic-admitter", Param: "queueDepthThreshold", Fidelity: Exact, Integer: true}},
		{keys.ProbKVUtil, Counterpart{System: SystemLLMD, Name: "probabilistic-admitter", Param: "kvCacheUtilThreshold", Fidelity: Exact}},
		{keys.ProbPower, Counterpart{System: SystemLLMD, Name: "probabilistic-admitter", Param: "power", Fidelity: Exact}},
		{keys.ProbK, Counterpart{System: SystemLLMD, Name: "probabilistic-admitter", Param: "k", Fidelity: Exact}},
	}
}

// setProduction fills the column of the settings that do not carry their
// counterpart in the table itself.
func setProduction(all []*Setting) {
	column := productionColumn()
	for _, s := range all {
		if s.Production.Described() {
			continue // declared in the table itself
		}
		for _, row := range column {
			if row.key == s.Key || (strings.HasSuffix(row.key, ".") && strings.HasPrefix(s.Key, row.key)) {
				s.Production = row.c
				break
			}
		}
	}
}

// Described reports whether a counterpart says anything: a system, a
// fidelity other than the zero value's, or a note.
func (c Counterpart) Described() bool {
	return c.System != "" || c.Fidelity != NoCounterpart || c.Note != "" || c.Values != nil
}

// cpuTierGiB converts CPU-tier blocks to GiB: block size × the model's KV
// bytes per token on one GPU × TP, over 2^30.
func cpuTierGiB(c *cluster.Config) (float64, bool) {
	if c.Data == nil {
		return 0, false
	}
	m, err := c.Data.Model(c.Model)
	if err != nil {
		return 0, false
	}
	perToken, err := latency.KVBytesPerToken(m.Arch, max(c.TP, 1))
	if err != nil || perToken <= 0 {
		return 0, false
	}
	return float64(c.BlockSize) * perToken * float64(max(c.TP, 1)) / (1 << 30), true
}

// withLimit is c with a limit on the values production takes.
func withLimit(c Counterpart, limit func(*cluster.Config) (float64, string, bool)) Counterpart {
	c.Limit = limit
	return c
}

// vllmBlocks is the most KV blocks vLLM can hold per instance in c's
// world: what it allocates from gpu_memory_utilization by its per-worker
// rule, with 5 % of room (the rule is within 1.5 % of the counts real
// vLLM logged, either side: a measured count a little above it is
// vLLM's own). vLLM's --num-gpu-blocks-override sets the count without
// checking that it fits, so a larger count (a blackbox profile's
// calibration figure, say) would run out of GPU memory: it is never
// written.
func vllmBlocks(c *cluster.Config) (float64, string, bool) {
	w, err := c.Resolve()
	if err != nil {
		return 0, "", false
	}
	n, err := latency.KVBlocks(w.Spec.Arch, w.Spec.Hardware, c.TP, c.BlockSize, c.GPUMemoryUtilization, latency.KVRuleVLLM)
	if err != nil {
		return 0, "", false
	}
	return 1.05 * float64(n), fmt.Sprintf("vLLM allocates about %d blocks of %d tokens per instance of %s on %s at TP%d at gpu_memory_utilization %g, its per-worker rule", n, c.BlockSize, w.Model, w.GPU, c.TP, c.GPUMemoryUtilization), true
}

// withSpelling is c with production's name of a value.
func withSpelling(c Counterpart, spell func(*cluster.Config, string) string) Counterpart {
	c.Spell = spell
	return c
}

// huggingFaceID is the model's id as vLLM takes it from the Hub
// ("meta-llama/Llama-3.1-8B-Instruct": the catalog's names are lower
// case), from the model file's source; "" for a model whose source is
// not the Hub.
func huggingFaceID(c *cluster.Config, model string) string {
	if c.Data == nil {
		return ""
	}
	m, err := c.Data.Model(model)
	if err != nil {
		return ""
	}
	return m.HuggingFaceID()
}
