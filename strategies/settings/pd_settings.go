package settings

import (
	"optimize/simcore/cluster"
	"optimize/simcore/keys"
)

// CompPD is prefill/decode disaggregation's strategy: the decider and its
// threshold (the pools and the link are the cluster's).
const CompPD = "disaggregation"

// llm-d's P/D at llm-d-router ebab68792: the profile handler runs the
// decode profile, then asks its prefill decider whether to run the
// prefill profile too; each profile keeps its role's pods with a filter
// on the label llm-d.ai/role (decode-filter: decode, prefill-decode or no
// label; prefill-filter: prefill or prefill-decode). pd-profile-handler
// is the handler's deprecated name, which the loader still accepts.
const (
	PDProfileHandler       = "disagg-profile-handler"
	PDLegacyProfileHandler = "pd-profile-handler"
	PDPrefillFilter        = "prefill-filter"
	PDDecodeFilter         = "decode-filter"
	PDPrefixDecider        = "prefix-based-pd-decider"
	PDAlwaysDecider        = "always-disagg-pd-decider"
	// PDDeciderRole is the role (Counterpart.Name of a ParamType
	// setting) of the prefill decider plugin.
	PDDeciderRole = "pd-decider"
	// PDNonCachedTokens is prefix-based-pd-decider's threshold: it splits
	// a request whose tokens not cached on the decode pod are ≥ it (and
	// never when it is 0).
	PDNonCachedTokens = "nonCachedTokens"
)

// pdSettings declares prefill/decode disaggregation (cluster.PDConfig):
// pools of instances by index, the decider, the KV link, the pools' TP.
// llm-d runs it with the P/D profile handler and its decider plugin;
// vLLM's pods move the KV with NIXL (--kv-transfer-config with
// NixlConnector, kv_role kv_both on both roles).
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
		simulationOnly("the replicas of a vLLM Deployment labelled llm-d.ai/role prefill-decode, which llm-d's prefill and decode filters both select"))
	on := anyPositive(prefill, decode, shared)
	decider := choiceField(keys.PDDecider, "pd-decider", cluster.PDDeciderNames(),
		"which requests are split (prefill on a prefill instance, KV sent to the decode instance picked first): never, always, or prefix-threshold (more uncached input tokens on the picked decode instance than pd.prefix_threshold_tokens)", CompPD,
		func(c *cluster.Config) *string { return &c.PD.Decider }).when(on).
		production(Counterpart{System: SystemLLMD, Name: PDDeciderRole, Param: ParamType, Fidelity: Approximate,
			Note: "llm-d's " + PDProfileHandler + " runs the decode profile, then the prefill profile when its decider (deciders.prefill) says so",
			Values: []ValueCounterpart{
				{Value: cluster.PDNever, Fidelity: Exact, Note: "no decider: one profile over the decode pods (decode-filter)"},
				{Value: cluster.PDAlways, Production: PDAlwaysDecider, Fidelity: Exact, Note: "splits every request, as the simulator"},
				{Value: cluster.PDPrefixThreshold, Production: PDPrefixDecider, Fidelity: Approximate, Note: "llm-d reads its own prefix index of the decode pod, the simulator the pod's cache as of the last refresh (routing.cache_signal_delay_us)"},
			}})
	splits := allOf(on, oneOf(decider, cluster.PDAlways, cluster.PDPrefixThreshold))
	return []*Setting{prefill, decode, shared, decider,
		int64Field(keys.PDPrefixThreshold, "pd-prefix-threshold", 0, huge, "tokens", "prefix-threshold: split a request whose input tokens not cached on the picked decode instance exceed this", CompPD,
			func(c *cluster.Config) *int64 { return &c.PD.PrefixThreshold }).when(allOf(on, oneOf(decider, cluster.PDPrefixThreshold))).
			production(Counterpart{System: SystemLLMD, Name: PDPrefixDecider, Param: PDNonCachedTokens, Fidelity: Approximate, Offset: 1,
				Note: "the value + 1: llm-d splits when the uncached tokens are ≥ nonCachedTokens (0 turns it off), BLIS f90a1e3a when they are > the threshold; the uncached tokens are counted on llm-d's prefix index, not the pod's cache"}),
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
			production(simulationOnly("the prefill Deployment's vLLM --tensor-parallel-size, which vllm-args-prefill.txt writes (0: tp); the GPUs per pod, so the world")),
		intField(keys.PDDecodeTP, "decode-tp", 0, 64, "GPUs", "tensor parallelism of the decode and shared instances (0 = tp): their step times and KV capacity", CompCluster,
			func(c *cluster.Config) *int { return &c.PD.DecodeTP }).when(on).
			production(simulationOnly("the decode Deployment's vLLM --tensor-parallel-size, which vllm-args-decode.txt writes (0: tp); the GPUs per pod, so the world")),
	}
}
