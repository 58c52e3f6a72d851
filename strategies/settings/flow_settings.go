package settings

import (
	"optimize/search"
	"optimize/simcore"
	"optimize/simcore/cluster"
	"optimize/simcore/flow"
	"optimize/simcore/keys"
)

// CompFlowControl is flow control's component: the gateway queue, its
// detector and its policies.
const CompFlowControl = "flow-control"

// flowGate is llm-d's feature gate of flow control.
const flowGate = "featureGates: [flowControl]"

// LLMDFlowControl is the EndpointPickerConfig's flowControl block: the
// counterpart of every flow-control setting, Param naming its field (or
// the detector plugin's parameter) at llm-d-router ebab68792; the llm-d
// export writes them there and --epp-config reads them back.
const LLMDFlowControl = "flowControl"

// flowEnabledSetting is flow_control.enabled, declared before the
// admission policy, whose place it takes.
func flowEnabledSetting() *Setting {
	return boolField(keys.FlowControl, "flow-control", "queue admitted requests at the gateway in priority bands (one per class priority: critical 4, standard 3, batch −1, sheddable −2, background −3), one FIFO flow per tenant, and route them while the saturation detector reads the pool below the band's ceiling; replaces admission.policy", CompFlowControl,
		func(c *cluster.Config) *bool { return &c.FlowControl.Enabled }).
		production(Counterpart{System: SystemLLMD, Name: LLMDFlowControl, Fidelity: Approximate,
			Note:   "llm-d's " + flowGate + " with the flowControl block, one priority band per class band (objectives.yaml gives each class its band's priority); llm-d's dispatch loop polls continuously, where the simulator (as BLIS) attempts one dispatch per enqueue and per flow_control.dispatch_tick_us",
			Values: []ValueCounterpart{{Value: "false", Fidelity: Exact, Note: "no gateway queue: llm-d without the feature gate (its legacy admission, which the export keeps from shedding)"}}})
}

// flowSettings are flow control's settings but flow_control.enabled; they
// have an effect only with it.
func flowSettings(enabled *Setting) []*Setting {
	on := oneOf(enabled, "true")
	var out []*Setting
	add := func(s *Setting) *Setting {
		out = append(out, s)
		return s
	}
	detector := add(choiceField(keys.FlowDetector, "saturation-detector", flow.DetectorNames(),
		"saturation detector gating dispatch: never (0, every request passes; BLIS's default), utilization (mean over instances of max(wait queue / queue_depth_threshold, KV use / kv_cache_util_threshold), from the routing snapshots) or concurrency (in-flight requests / (instances × max_concurrency))", CompFlowControl,
		func(c *cluster.Config) *string { return &c.FlowControl.Detector }).when(on).
		production(Counterpart{System: SystemLLMD, Name: LLMDFlowControl, Param: "saturationDetector.pluginRef", Fidelity: Exact, Values: []ValueCounterpart{
			{Value: flow.DetectNever, Fidelity: Approximate, Note: "no llm-d detector never saturates: a utilization-detector with thresholds no endpoint reaches; llm-d's default detector is utilization-detector"},
			{Value: flow.DetectUtilization, Production: "utilization-detector", Fidelity: Exact},
			{Value: flow.DetectConcurrency, Production: "concurrency-detector", Fidelity: Exact},
		}}))
	utilization := allOf(on, oneOf(detector, flow.DetectUtilization))
	add(floatField(keys.FlowQueueDepth, "queue-depth-threshold", 0.001, huge, "requests", "utilization detector: an instance's wait-queue length that counts as saturated", CompFlowControl, flow.DefaultQueueDepthThreshold,
		func(c *cluster.Config) *float64 { return &c.FlowControl.QueueDepthThreshold }).when(utilization).
		production(Counterpart{System: SystemLLMD, Name: LLMDFlowControl, Param: "utilization-detector queueDepthThreshold", Fidelity: Exact, Integer: true}))
	add(floatField(keys.FlowKVUtil, "kv-cache-util-threshold", 0.001, huge, "fraction", "utilization detector: an instance's GPU KV use that counts as saturated", CompFlowControl, flow.DefaultKVUtilThreshold,
		func(c *cluster.Config) *float64 { return &c.FlowControl.KVUtilThreshold }).when(utilization).
		production(Counterpart{System: SystemLLMD, Name: LLMDFlowControl, Param: "utilization-detector kvCacheUtilThreshold", Fidelity: Exact}))
	add(intField(keys.FlowMaxConcurrency, "max-concurrency", 1, maxInt32, "requests", "concurrency detector: in-flight requests per instance that count as saturated", CompFlowControl,
		func(c *cluster.Config) *int { return &c.FlowControl.MaxConcurrency }).zeroMeans(flow.DefaultMaxConcurrency).
		when(allOf(on, oneOf(detector, flow.DetectConcurrency))).
		production(Counterpart{System: SystemLLMD, Name: LLMDFlowControl, Param: "concurrency-detector maxConcurrency", Fidelity: Exact}))
	order := add(choiceField(keys.FlowDispatchOrder, "dispatch-order", flow.OrderNames(),
		"order inside a tenant's flow: fifo and priority both serve the flow's oldest request (bands are always served highest first), slo-deadline the earliest enqueue time + its class's flow_control.slo_target_us", CompFlowControl,
		func(c *cluster.Config) *string { return &c.FlowControl.DispatchOrder }).when(on).
		production(Counterpart{System: SystemLLMD, Name: LLMDFlowControl, Param: "priorityBands[].orderingPolicyRef", Fidelity: Exact, Values: []ValueCounterpart{
			{Value: flow.OrderFIFO, Production: "fcfs-ordering-policy", Fidelity: Exact},
			{Value: flow.OrderPriority, Production: "fcfs-ordering-policy", Fidelity: Exact, Note: "bands carry the priority; within a flow llm-d's fcfs-ordering-policy"},
			{Value: flow.OrderSLODeadline, Production: "slo-deadline-ordering-policy", Fidelity: Approximate, Note: "llm-d reads the deadline from the request's objective; the simulator from the class's target"},
		}}))
	for _, s := range perClass(keys.FlowSLOTarget, "slo-targets", search.Int, 1, huge, "µs", "slo-deadline dispatch: the class's target, added to the enqueue time to give its deadline", CompFlowControl,
		func(c *cluster.Config) *simcore.PerClass { return &c.FlowControl.SLOTargets }, nil, "no deadline: served after the flow's requests that have one") {
		add(s.when(allOf(on, oneOf(order, flow.OrderSLODeadline))).
			production(Counterpart{System: SystemLLMD, Name: LLMDFlowControl, Param: "slo-deadline-ordering-policy", Fidelity: Approximate, Note: "llm-d's SLO deadline comes from the request's objective, not one target per class"}))
	}
	add(choiceField(keys.FlowFairness, "fairness-policy", flow.FairnessNames(),
		"which tenant's flow of a band goes next: global-strict (the oldest head) or round-robin (tenants in name order after the last served)", CompFlowControl,
		func(c *cluster.Config) *string { return &c.FlowControl.Fairness }).when(on).
		production(Counterpart{System: SystemLLMD, Name: LLMDFlowControl, Param: "priorityBands[].fairnessPolicyRef", Fidelity: Exact, Values: []ValueCounterpart{
			{Value: flow.FairGlobalStrict, Production: "global-strict-fairness-policy", Fidelity: Exact},
			{Value: flow.FairRoundRobin, Production: "round-robin-fairness-policy", Fidelity: Exact},
		}}))
	depth := add(intField(keys.FlowMaxQueueDepth, "max-gateway-queue-depth", 0, maxInt32, "requests", "requests queued in all bands at most (0 = unlimited); a request past it is rejected, or sheds a lower one (flow_control.queue_shedding)", CompFlowControl,
		func(c *cluster.Config) *int { return &c.FlowControl.MaxQueueDepth }).when(on).
		production(Counterpart{System: SystemLLMD, Name: LLMDFlowControl, Param: "maxRequests", Fidelity: Exact}))
	add(intField(keys.FlowPerBandCapacity, "per-band-capacity", 0, maxInt32, "requests", "requests queued in one band at most (0 = unlimited); a request past it is rejected", CompFlowControl,
		func(c *cluster.Config) *int { return &c.FlowControl.PerBandCapacity }).when(on).
		production(Counterpart{System: SystemLLMD, Name: LLMDFlowControl, Param: "priorityBands[].maxRequests", Fidelity: Exact, Note: "one value for every band (flowControl.defaultPriorityBand.maxRequests)"}))
	add(floatField(keys.FlowUsageLimit, "usage-limit-threshold", 0.001, 1, "fraction", "saturation ceiling of the lowest band; the ceilings fall linearly from 1 for the highest band over the bands created so far (1 = every band dispatches below saturation 1)", CompFlowControl, flow.DefaultUsageLimit,
		func(c *cluster.Config) *float64 { return &c.FlowControl.UsageLimit }).when(on).
		production(Counterpart{System: SystemLLMD, Name: LLMDFlowControl, Param: "usageLimitPolicyPluginRef", Fidelity: Approximate, Note: "llm-d's static-usage-limit-policy (threshold) gives every band one ceiling and priority-holdback-policy ramps them by priority; the simulator ramps linearly by band position, as BLIS"}))
	add(int64Field(keys.FlowRequestTTL, "request-ttl", 0, huge, "µs", "longest wait in the gateway queue before the request expires (0 = no limit)", CompFlowControl,
		func(c *cluster.Config) *int64 { return &c.FlowControl.RequestTTL }).when(on).
		production(Counterpart{System: SystemLLMD, Name: LLMDFlowControl, Param: "defaultRequestTTL", Fidelity: Approximate,
			Values: []ValueCounterpart{{Value: "0", Production: "0s", Fidelity: Exact, Note: "no limit"}},
			Note:   "a duration; llm-d's default is 60s where the simulator's (BLIS's) is none"}))
	add(boolField(keys.FlowQueueShedding, "queue-shedding", "a full queue drops its newest request of the lowest sheddable band (priority < 0) for a request of higher priority instead of rejecting it", CompFlowControl,
		func(c *cluster.Config) *bool { return &c.FlowControl.QueueShedding }).when(allOf(on, positive(depth))).
		production(none("BLIS's own: llm-d rejects a request past flowControl.maxRequests; shedding a queued one would need a flow-control change")))
	add(boolField(keys.FlowInFlightEviction, "in-flight-eviction", "a dispatch attempt that reads saturation ≥ 1 while a non-sheddable request waits dispatches nothing and evicts one routed sheddable request instead (the lowest band's, then the one dispatched last): it leaves its instance's wait queue or running batch, freeing its KV blocks and batch slot, and counts as evicted (a first token it already had stays in the TTFT figures)", CompFlowControl,
		func(c *cluster.Config) *bool { return &c.FlowControl.InFlightEviction }).when(on).
		production(none("BLIS-only, llm-d has no in-flight eviction: its flow control never ends a request it dispatched; a model server would need an abort of the running request")))
	add(int64Field(keys.FlowDispatchTick, "dispatch-tick-interval", 0, huge, "µs", "interval of the periodic dispatch attempt while requests wait (one request per attempt; every enqueue attempts one too; 0 = 1000, as BLIS)", CompFlowControl,
		func(c *cluster.Config) *int64 { return &c.FlowControl.DispatchTick }).zeroMeans(flow.DefaultTick).when(on).
		production(simulationOnly("how often the simulated dispatcher looks; llm-d's dispatch loop polls every 1 ms when idle")))
	return out
}

// flowUtilization holds while flow control gates by the utilization
// detector, which reads the periodic snapshot signals.
func flowUtilization() Rule {
	return Rule{
		Text: keys.FlowControl + " is true and " + keys.FlowDetector + " is " + flow.DetectUtilization,
		holds: func(c *cluster.Config) bool {
			return c.FlowControl.Enabled && c.FlowControl.Detector == flow.DetectUtilization
		},
		state: func(c *cluster.Config) string {
			if !c.FlowControl.Enabled {
				return keys.FlowControl + " is false"
			}
			return keys.FlowDetector + " is " + c.FlowControl.WithDefaults().Detector
		},
	}
}
