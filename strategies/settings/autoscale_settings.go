package settings

import (
	"optimize/simcore/cluster"
	"optimize/simcore/keys"
)

// SystemAutoscaler is the system of the autoscaler's counterparts:
// llm-d's workload-variant-autoscaler and the HorizontalPodAutoscaler
// that actuates it (neither is exported).
const SystemAutoscaler = "llm-d autoscaler"

// CompAutoscaler is the autoscaler's component: reverting it turns the
// autoscaler off.
const CompAutoscaler = "autoscaler"

// Where the autoscaler's settings live in production: llm-d's
// workload-variant-autoscaler (WVA) computes a target replica count per
// variant from its saturation analyzer's thresholds (the llm-d export's
// wva-config.yaml: ConfigMap wva-saturation-scaling-config, analyzerName
// saturation), and the Kubernetes HorizontalPodAutoscaler (or KEDA) that
// actuates it applies its own stabilization windows and replica bounds,
// which are not exported.
// WVASaturation opens the Counterpart.Name of a setting that is a field
// of the WVA's V2 saturation analyzer config (the field follows).
const WVASaturation = "WVA saturation_v2 "

const (
	wvaConfig = "wva-config.yaml: ConfigMap wva-saturation-scaling-config, key default, analyzerName saturation"
	wvaPeriod = "the WVA controller's reconcile period, not exported"
	hpaSpec   = "the HorizontalPodAutoscaler on the vLLM Deployment, not exported"
)

// autoscaleSettings declares the autoscaler's knobs; each but the
// interval has an effect only while the interval is > 0. The node pools
// (BLIS's --policy-config node_pools) are a list, not settings.
func autoscaleSettings() []*Setting {
	interval := floatField(keys.AutoscaleInterval, "model-autoscaler-interval-us", 0, huge, "µs",
		"the autoscaler's tick period (0 = no autoscaler): each tick compares the routable instances' KV demand with their capacity and adds or drains instances (BLIS f90a1e3a's model autoscaler)", CompAutoscaler, 0,
		func(c *cluster.Config) *float64 { return &c.Autoscale.IntervalUs }).
		production(Counterpart{System: SystemAutoscaler, Name: "WVA reconcile interval", Fidelity: Approximate,
			Note:   "the WVA reconciles on its own period (" + wvaPeriod + "); the HPA then syncs every 15 s by default",
			Values: []ValueCounterpart{{Value: "0", Fidelity: Exact, Note: "no autoscaler: the replica count is fixed, as without a WVA and an HPA"}}})
	on := positive(interval)
	a := func(c *cluster.Config) *cluster.Autoscale { return &c.Autoscale }
	out := []*Setting{
		interval,
		floatField(keys.AutoscaleUpWindow, "autoscaler-scale-up-window-us", 0, huge, "µs",
			"how long a scale-up signal must last, tick after tick, before instances are added (0 = at once)", CompAutoscaler, 0,
			func(c *cluster.Config) *float64 { return &a(c).ScaleUpWindowUs }).
			production(Counterpart{System: SystemAutoscaler, Name: "HPA behavior.scaleUp.stabilizationWindowSeconds", Fidelity: Approximate,
				Note: "in s; the HPA takes the lowest recommendation over the window, the simulator acts once the signal has lasted the window (" + hpaSpec + ")"}),
		floatField(keys.AutoscaleDownWindow, "autoscaler-scale-down-window-us", 0, huge, "µs",
			"how long a scale-down signal must last before instances are drained (0 = at once; the HPA's default is 300 s)", CompAutoscaler, 0,
			func(c *cluster.Config) *float64 { return &a(c).ScaleDownWindowUs }).
			production(Counterpart{System: SystemAutoscaler, Name: "HPA behavior.scaleDown.stabilizationWindowSeconds", Fidelity: Approximate,
				Note: "in s; the HPA takes the highest recommendation over the window (" + hpaSpec + ")"}),
		floatField(keys.AutoscaleHPADelay, "autoscaler-hpa-delay-s", 0, huge, "s",
			"mean delay from a tick's decision to its actuation (the HPA scraping the WVA's metric)", CompAutoscaler, 0,
			func(c *cluster.Config) *float64 { return &a(c).HPADelay.Mean }).
			production(simulationOnly("how late the HPA acts on the WVA's target in production: measured, not configured")),
		floatField(keys.AutoscaleHPADelayStddev, "autoscaler-hpa-delay-stddev-s", 0, huge, "s",
			"standard deviation of that delay (normal, clamped at 0)", CompAutoscaler, 0,
			func(c *cluster.Config) *float64 { return &a(c).HPADelay.Stddev }).
			production(simulationOnly("measured, not configured")),
		floatField(keys.AutoscaleKVThreshold, "autoscaler-kv-cache-threshold", 0.001, 1, "fraction",
			"share of an instance's KV tokens that counts as its capacity", CompAutoscaler, cluster.DefaultKVCacheThreshold,
			func(c *cluster.Config) *float64 { return &a(c).KVCacheThreshold }).
			production(Counterpart{System: SystemAutoscaler, Name: WVASaturation + "kvCacheThreshold", Fidelity: Approximate,
				Note: "same meaning; the WVA also bounds capacity by a compute-bound k2 it observes, which the simulator takes equal to the KV bound (" + wvaConfig + ")"}),
		floatField(keys.AutoscaleUpThreshold, "autoscaler-scale-up-threshold", 0.001, huge, "fraction",
			"demand over capacity above which instances are added", CompAutoscaler, cluster.DefaultScaleUpThreshold,
			func(c *cluster.Config) *float64 { return &a(c).ScaleUpThreshold }).
			production(Counterpart{System: SystemAutoscaler, Name: WVASaturation + "scaleUpThreshold", Fidelity: Approximate, Note: "same formula (" + wvaConfig + ")"}),
		floatField(keys.AutoscaleDownBoundary, "autoscaler-scale-down-boundary", 0.001, huge, "fraction",
			"demand over capacity below which instances are drained (below the scale-up threshold)", CompAutoscaler, cluster.DefaultScaleDownBoundary,
			func(c *cluster.Config) *float64 { return &a(c).ScaleDownBoundary }).
			production(Counterpart{System: SystemAutoscaler, Name: WVASaturation + "scaleDownBoundary", Fidelity: Approximate, Note: "same formula (" + wvaConfig + ")"}),
		floatField(keys.AutoscaleAvgInput, "autoscaler-avg-input-tokens", 1, huge, "tokens",
			"input tokens a queued request is assumed to need, in the demand", CompAutoscaler, cluster.DefaultAvgInputTokens,
			func(c *cluster.Config) *float64 { return &a(c).AvgInputTokens }).
			production(none("the WVA measures each replica's average input tokens; nothing configures a constant")),
		intField(keys.AutoscaleMinReplicas, "autoscaler-min-replicas", 0, 4096, "instances",
			"fewest routable instances the autoscaler leaves, per pool role with prefill/decode pools (0 = 1, or none with era f90a1e3a given, as BLIS, which drains an idle cluster to zero and, with P/D, scales the cluster as one, may drain the only prefill instance and adds instances in no pool)", CompAutoscaler,
			func(c *cluster.Config) *int { return &a(c).MinReplicas }).
			production(Counterpart{System: SystemAutoscaler, Name: "HPA minReplicas", Fidelity: Approximate,
				Note: "same meaning, but the export writes no HorizontalPodAutoscaler, so a reproduction sets it; the WVA also keeps the cheapest variant at ≥ 1 replica; with P/D each role's Deployment (prefill, decode) is a scale target with its own HPA, as each pool role is here (" + hpaSpec + ")"}),
		intField(keys.AutoscaleMaxReplicas, "autoscaler-max-replicas", 0, 4096, "instances",
			"most instances placed at once, per pool role with prefill/decode pools (0 = as many as the node pools' GPUs hold; without node pools, the initial instances)", CompAutoscaler,
			func(c *cluster.Config) *int { return &a(c).MaxReplicas }).
			production(Counterpart{System: SystemAutoscaler, Name: "HPA maxReplicas", Fidelity: Approximate,
				Note: "same meaning, but the export writes no HorizontalPodAutoscaler, so a reproduction sets it (" + hpaSpec + ")"}),
		floatField(keys.AutoscaleLoadingDelay, "autoscaler-loading-delay-s", 0, huge, "s",
			"mean time a placed instance loads (model weights, start-up) before it serves", CompAutoscaler, 0,
			func(c *cluster.Config) *float64 { return &a(c).LoadingDelay.Mean }).
			production(simulationOnly("how long a vLLM pod takes to become ready: measured, not configured")),
		floatField(keys.AutoscaleLoadingDelayStddev, "autoscaler-loading-delay-stddev-s", 0, huge, "s",
			"standard deviation of the loading time (normal, clamped at 0)", CompAutoscaler, 0,
			func(c *cluster.Config) *float64 { return &a(c).LoadingDelay.Stddev }).
			production(simulationOnly("measured, not configured")),
		boolField(keys.AutoscaleWarmStart, "autoscaler-warm-start", "the initial instances serve at t = 0 instead of loading first (with node pools)", CompAutoscaler,
			func(c *cluster.Config) *bool { return &a(c).WarmStart }).
			production(simulationOnly("whether the cluster starts with its pods ready")),
	}
	for _, s := range out[1:] {
		s.when(on)
	}
	return out
}
