package strategies

import (
	"fmt"

	"optimize/simcore/cluster"
	"optimize/simcore/metrics"
)

// What a cluster costs. Cost has no vLLM or llm-d counterpart: it is the
// operator's question — the cheapest cluster that meets the SLOs — put
// beside the simulated latencies. A run reports gpu_count (instances ×
// TP) and cost_per_hour (gpu_count × the price of the run's GPU); the
// metric cost_per_million_tokens divides the latter by the simulated
// throughput. The price per GPU-hour of each built-in GPU is a setting,
// cost.gpu_hour.<GPU>, defaulting to the hardware file's
// price_per_gpu_hour.

// CostPerMillionTokens is the derived cost metric's name.
const CostPerMillionTokens = "cost_per_million_tokens"

// CostMetrics lists the cost metrics: the summary's numbers of the
// configuration (gpu_count, cost_per_hour) and cost_per_million_tokens.
func CostMetrics() []string {
	var out []string
	for _, n := range metrics.SummaryNumbers() {
		if n.Same {
			out = append(out, n.Name)
		}
	}
	return append(out, CostPerMillionTokens)
}

// costPerMillionTokens is cost_per_hour / (tokens_per_sec × 3600) × 1e6:
// USD per million output tokens at the simulated throughput. A run with
// no output has no finite cost per token; reading the metric then is an
// error (a study's trial fails and says why) rather than a number a search
// could rank as cheap.
func costPerMillionTokens(s *metrics.Summary) (float64, error) {
	if s.CostPerHour == nil {
		return 0, fmt.Errorf("metric cost_per_million_tokens: %s", noCost("cost_per_hour"))
	}
	if !(s.TokensPerSec > 0) {
		return 0, fmt.Errorf("metric cost_per_million_tokens: the run produced no output tokens (0 tokens/s), so the cost per token is infinite")
	}
	return *s.CostPerHour / (s.TokensPerSec * 3600) * 1e6, nil
}

// noCost says why a run lacks gpu_count or cost_per_hour.
func noCost(name string) string {
	if name == "gpu_count" {
		return "the run has no gpu_count (results stored before the cluster's size was recorded have none)"
	}
	return fmt.Sprintf("the run has no %s (its GPU has no price: set cost.gpu_hour.<GPU>, or price_per_gpu_hour in a --hardware-config file; results stored before costs were recorded have none)", name)
}

// ConfigMetric reads metric off a configuration, before any run, when the
// configuration alone decides it: the summary's numbers of the cluster
// (gpu_count, cost_per_hour), computed as a run computes them. ok is
// false for every other metric, for a cost without a price, and under an
// autoscaler: the run's mean GPUs then follow the load (measured, not
// configured).
func ConfigMetric(cfg *cluster.Config, metric string) (float64, bool) {
	if cfg.Autoscale.On() {
		return 0, false
	}
	w, err := cfg.Resolve()
	if err != nil {
		return 0, false
	}
	gpus, price := cfg.ClusterCost(w)
	var s metrics.Summary
	s.GPUCount, s.CostPerHour = metrics.RunInfo{GPUs: gpus, PricePerGPUHour: price}.ClusterCost()
	for _, n := range metrics.SummaryNumbers() {
		if n.Same && n.Name == metric {
			return n.Get(&s)
		}
	}
	return 0, false
}

// SetByConfig reports whether the configuration alone decides metric
// (gpu_count, cost_per_hour): it is the same on every seed, so a
// seed-by-seed verdict on it says nothing.
func SetByConfig(metric string) bool {
	for _, n := range metrics.SummaryNumbers() {
		if n.Same && n.Name == metric {
			return true
		}
	}
	return false
}
