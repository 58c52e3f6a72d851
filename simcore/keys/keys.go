// Package keys names the simulator's settings by their keys in the
// settings table (strategies/settings), for the errors the simulator reports
// (errtext.BadSetting): the table declares each of these settings with
// the same constant, so the simulator cannot name a key the table lacks
// (settings' TestSimulatorKeysAreTableKeys checks every constant here,
// and that no simulator error names a key by a literal). A family's
// members are keyed FAMILY.MEMBER (Member): an SLO class, or a latency
// coefficient's index.
package keys

// The world: the model, the GPU (and its price), the tensor parallelism.
const (
	Model        = "model"
	GPU          = "gpu"
	GPUHourPrice = "cost.gpu_hour" // per GPU: Member(GPUHourPrice, "H100")
)

// Cluster, KV cache and run.
const (
	NumInstances          = "num_instances"
	TP                    = "tp"
	Era                   = "era"
	MaxModelLen           = "max_model_len"
	GPUMemoryUtilization  = "gpu_memory_utilization"
	KVTotalBlocks         = "kv.total_blocks"
	KVCapacityRule        = "kv.capacity_rule"
	KVBlockSize           = "kv.block_size"
	KVCPUBlocks           = "kv.cpu_blocks"
	KVOffloadThreshold    = "kv.offload_threshold"
	KVTransferBandwidth   = "kv.transfer_bandwidth"
	KVTransferBaseLatency = "kv.transfer_base_latency_us"
	RunHorizon            = "run.horizon_us"
)

// Latency model and its coefficients (families: Member(LatencyAlpha, "0")).
const (
	LatencyModel = "latency.model"
	LatencyAlpha = "latency.alpha"
	LatencyBeta  = "latency.beta"
	// The trained-physics model's (Member(PhysicsBeta, "1a")).
	PhysicsAlpha = "latency.physics.alpha"
	PhysicsBeta  = "latency.physics.beta"
)

// Batch formation and scheduling.
const (
	MaxRunning           = "batch.max_num_running_reqs"
	MaxScheduledTokens   = "batch.max_num_scheduled_tokens"
	LongPrefillThreshold = "batch.long_prefill_token_threshold"
	PrefillThreshold     = "batch.prefill_threshold" // per SLO class
	PreemptionPolicy     = "preemption.policy"
	Scheduler            = "scheduler"
	PriorityPolicy       = "priority.policy"
	PriorityLoad         = "priority.load_threshold"
	PriorityAgeWeight    = "priority.age_weight_per_ms"
	PriorityBase         = "priority.base"                 // per SLO class
	PriorityUrgency      = "priority.urgency_threshold_ms" // per SLO class
)

// SLO targets, per SLO class.
const (
	SLOTTFT = "slo.ttft_target_ms"
	SLOITL  = "slo.itl_target_ms"
	SLOE2E  = "slo.e2e_target_ms"
)

// Routing.
const (
	RoutingPolicy           = "routing.policy"
	RoutingPicker           = "routing.picker"
	SnapshotRefresh         = "routing.snapshot_refresh_us"
	CacheSignalDelay        = "routing.cache_signal_delay_us"
	PrefixIndexCapacity     = "routing.prefix_index_capacity"
	PrefixMatchLengthWeight = "routing.prefix-cache-scorer.match_length_weight"
	TokenLoadThreshold      = "routing.token_load.threshold_tokens"
	KVPressureTransferScale = "routing.kv_pressure.transfer_scale"
	KVPressureThrashWeight  = "routing.kv_pressure.thrash_weight"
	KVPressureSLOScale      = "routing.kv_pressure_slo_scale" // per SLO class
	SLOPriorityBlend        = "routing.slo_priority_blend"    // per SLO class
)

// Admission.
const (
	AdmissionPolicy  = "admission.policy"
	BucketCapacity   = "admission.token_bucket.capacity"
	BucketRefillRate = "admission.token_bucket.refill_rate"
	SLOGate          = "admission.slo_gate" // per SLO class
	ProbQueueDepth   = "admission.probabilistic.queue_depth_threshold"
	ProbKVUtil       = "admission.probabilistic.kv_util_threshold"
	ProbPower        = "admission.probabilistic.power"
	ProbK            = "admission.probabilistic.k"
)

// Prefill/decode disaggregation.
const (
	PDPrefillInstances    = "pd.prefill_instances"
	PDDecodeInstances     = "pd.decode_instances"
	PDSharedInstances     = "pd.shared_instances"
	PDDecider             = "pd.decider"
	PDPrefixThreshold     = "pd.prefix_threshold_tokens"
	PDTransferBandwidth   = "pd.transfer_bandwidth_gbps"
	PDTransferBaseLatency = "pd.transfer_base_latency_ms"
	PDTransferContention  = "pd.transfer_contention"
	PDPrefillTP           = "pd.prefill_tp"
	PDDecodeTP            = "pd.decode_tp"
)

// Flow control: the gateway queue in front of routing.
const (
	FlowControl          = "flow_control.enabled"
	FlowDetector         = "flow_control.saturation_detector"
	FlowQueueDepth       = "flow_control.queue_depth_threshold"
	FlowKVUtil           = "flow_control.kv_cache_util_threshold"
	FlowMaxConcurrency   = "flow_control.max_concurrency"
	FlowDispatchOrder    = "flow_control.dispatch_order"
	FlowSLOTarget        = "flow_control.slo_target_us" // per SLO class
	FlowFairness         = "flow_control.fairness_policy"
	FlowPerBandCapacity  = "flow_control.per_band_capacity"
	FlowMaxQueueDepth    = "flow_control.max_queue_depth"
	FlowUsageLimit       = "flow_control.usage_limit_threshold"
	FlowRequestTTL       = "flow_control.request_ttl_us"
	FlowQueueShedding    = "flow_control.queue_shedding"
	FlowInFlightEviction = "flow_control.in_flight_eviction"
	FlowDispatchTick     = "flow_control.dispatch_tick_us"
)

// Member is the key of a family's member: family.member.
func Member(family, member string) string { return family + "." + member }

// The autoscaler (BLIS f90a1e3a's model autoscaler, llm-d's
// workload-variant-autoscaler and HPA).
const (
	AutoscaleInterval           = "autoscaler.interval_us"
	AutoscaleUpWindow           = "autoscaler.scale_up_window_us"
	AutoscaleDownWindow         = "autoscaler.scale_down_window_us"
	AutoscaleHPADelay           = "autoscaler.hpa_delay_s"
	AutoscaleHPADelayStddev     = "autoscaler.hpa_delay_stddev_s"
	AutoscaleKVThreshold        = "autoscaler.kv_cache_threshold"
	AutoscaleUpThreshold        = "autoscaler.scale_up_threshold"
	AutoscaleDownBoundary       = "autoscaler.scale_down_boundary"
	AutoscaleAvgInput           = "autoscaler.avg_input_tokens"
	AutoscaleMinReplicas        = "autoscaler.min_replicas"
	AutoscaleMaxReplicas        = "autoscaler.max_replicas"
	AutoscaleLoadingDelay       = "autoscaler.loading_delay_s"
	AutoscaleLoadingDelayStddev = "autoscaler.loading_delay_stddev_s"
	AutoscaleWarmStart          = "autoscaler.warm_start"
)
