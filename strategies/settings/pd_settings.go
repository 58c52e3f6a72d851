package settings

import (
	"optimize/simcore/cluster"
	"optimize/simcore/keys"
)

// CompPD is prefill/decode disaggregation's strategy: the decider and its
// threshold (the pools and the link are the cluster's).
const CompPD = "disaggregation"

// pdSettings declares prefill/decode disaggregation (cluster.PDConfig):
// pools of instances by index, the decider, the KV link, the pools' TP.
// llm-d runs it with a P/D profile handler (pd-profile-handler, renamed
// disagg-profile-handler) whose decider plugin is prefix-based-pd-decider,
// the prefill and decode profiles each filtering the endpoints by their
// llm-d.ai/role label (prefill-filter, decode-filter); vLLM's pods move
// the KV with NIXL (--kv-transfer-config with NixlConnector).
func pdSettings() []*Setting {
	inst := func(key, flag, doc string, field func(*cluster.Config) *int, c Counterpart) *Setting {
		return intField(key, flag, 0, 4096, "instances", doc, CompCluster, field).production(c)
	}
	prefill := inst(keys.PDPrefillInstances, "prefill-instances", "prefill/decode disaggregation: the first instances, prefill only (0 with no decode or shared instances: off)",
		func(c *cluster.Config) *int { return &c.PD.Prefill },
		simulationOnly("the replicas of the prefill vLLM Deployment: pods labelled llm-d.ai/role prefill, which llm-d's prefill-filter selects"))
	decode := inst(keys.PDDecodeInstances, "decode-instances", "prefill/decode disaggregation: the instances after the prefill ones, decode only",
		func(c *cluster.Config) *int { return &c.PD.Decode },
		simulationOnly("the replicas of the decode vLLM Deployment: pods labelled llm-d.ai/role decode, which llm-d's decode-filter selects"))
	shared := inst(keys.PDSharedInstances, "prefill-decode-instances", "prefill/decode disaggregation: the instances after the decode ones, in both pools",
		func(c *cluster.Config) *int { return &c.PD.Shared },
		simulationOnly("the replicas of a vLLM Deployment labelled llm-d.ai/role both, which llm-d's prefill and decode filters both select"))
	on := anyPositive(prefill, decode, shared)
	decider := choiceField(keys.PDDecider, "pd-decider", cluster.PDDeciderNames(),
		"which requests are split (prefill on a prefill instance, KV sent to the decode instance picked first): never, always, or prefix-threshold (more uncached input tokens on the picked decode instance than pd.prefix_threshold_tokens)", CompPD,
		func(c *cluster.Config) *string { return &c.PD.Decider }).when(on).
		production(Counterpart{System: SystemLLMD, Name: "prefix-based-pd-decider", Fidelity: Approximate,
			Note: "llm-d's disagg-profile-handler (pd-profile-handler) runs the decode profile, then the prefill profile when its decider says so",
			Values: []ValueCounterpart{
				{Value: cluster.PDNever, Fidelity: Exact, Note: "no P/D profile handler: one profile over the decode pods"},
				{Value: cluster.PDAlways, Production: "prefix-based-pd-decider", Fidelity: Approximate, Note: "nonCachedTokens 0: every request with an uncached token is split"},
				{Value: cluster.PDPrefixThreshold, Production: "prefix-based-pd-decider", Fidelity: Approximate, Note: "its nonCachedTokens is pd.prefix_threshold_tokens; llm-d reads its own prefix index of the decode pod, the simulator the pod's cache as of the last refresh (routing.cache_signal_delay_us)"},
			}})
	splits := allOf(on, oneOf(decider, cluster.PDAlways, cluster.PDPrefixThreshold))
	return []*Setting{prefill, decode, shared, decider,
		int64Field(keys.PDPrefixThreshold, "pd-prefix-threshold", 0, huge, "tokens", "prefix-threshold: split a request whose input tokens not cached on the picked decode instance exceed this", CompPD,
			func(c *cluster.Config) *int64 { return &c.PD.PrefixThreshold }).when(allOf(on, oneOf(decider, cluster.PDPrefixThreshold))).
			production(Counterpart{System: SystemLLMD, Name: "prefix-based-pd-decider", Param: "nonCachedTokens", Fidelity: Approximate,
				Note: "llm-d splits when the uncached tokens reach nonCachedTokens; BLIS f90a1e3a when they exceed it"}),
		floatField(keys.PDTransferBandwidth, "pd-transfer-bandwidth", 1e-6, huge, "GB/s", "KV transfer link rate from a prefill to a decode instance", CompCluster, cluster.DefaultPDTransferBandwidth,
			func(c *cluster.Config) *float64 { return &c.PD.TransferBandwidth }).when(splits).
			production(simulationOnly("the measured rate of the NIXL link between prefill and decode pods (vLLM --kv-transfer-config with NixlConnector)")),
		floatField(keys.PDTransferBaseLatency, "pd-transfer-base-latency", 0, huge, "ms", "fixed cost of a KV transfer", CompCluster, 0,
			func(c *cluster.Config) *float64 { return &c.PD.TransferBaseLatency }).when(splits).
			production(simulationOnly("the measured set-up latency of a NIXL transfer")),
		boolField(keys.PDTransferContention, "pd-transfer-contention", "a transfer gets 1/n of the bandwidth, n the transfers in flight when it starts (fixed for its duration)", CompCluster,
			func(c *cluster.Config) *bool { return &c.PD.TransferContention }).when(splits).
			production(simulationOnly("whether the pods' transfers share one link: the network's")),
		intField(keys.PDPrefillTP, "prefill-tp", 0, 64, "GPUs", "tensor parallelism of the prefill instances (0 = tp): their step times and KV capacity, and the KV bytes a transfer carries", CompCluster,
			func(c *cluster.Config) *int { return &c.PD.PrefillTP }).when(allOf(positive(prefill), splits)).
			production(simulationOnly("vLLM --tensor-parallel-size of the prefill Deployment, which the export does not write")),
		intField(keys.PDDecodeTP, "decode-tp", 0, 64, "GPUs", "tensor parallelism of the decode and shared instances (0 = tp): their step times and KV capacity", CompCluster,
			func(c *cluster.Config) *int { return &c.PD.DecodeTP }).when(on).
			production(simulationOnly("vLLM --tensor-parallel-size of the decode Deployment, which the export does not write")),
	}
}
