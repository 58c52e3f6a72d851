package settings

import (
	"fmt"

	"optimize/search"
	"optimize/simcore/cluster"
	"optimize/simcore/keys"
	"optimize/simcore/latency"
)

// gpuHourPriceFlag is the one flag of the cost.gpu_hour.<GPU> family:
// --gpu-hour-price H100=6.88,L40S=2.24.
const gpuHourPriceFlag = "gpu-hour-price"

// costSettings declares cost.gpu_hour.<GPU> for every built-in GPU, in
// the data's order; each has an effect only while gpu names its GPU.
func costSettings(gpu *Setting) []*Setting {
	cat, err := WorldData()
	if err != nil {
		return nil // Standard reports why
	}
	var out []*Setting
	for _, name := range cat.GPUs() {
		g, _ := cat.GPU(name)
		out = append(out, gpuHourPrice(g, gpu))
	}
	return out
}

// gpuHourPrice is the setting cost.gpu_hour.<g.Name>.
func gpuHourPrice(g latency.GPU, gpu *Setting) *Setting {
	name := g.Name
	doc := fmt.Sprintf("price of one %s per hour in USD, for cost_per_hour and cost_per_million_tokens (no vLLM or llm-d counterpart); default %s", name, formatNumber(g.PricePerHr))
	if g.PriceSource != "" {
		doc += ": " + g.PriceSource
	}
	return (&Setting{Key: keys.Member(keys.GPUHourPrice, name), Flag: gpuHourPriceFlag, Item: name, family: Named, Kind: search.Float, Low: 0.001, High: 1e6,
		Unit: "USD/GPU-h", Doc: doc, Component: CompCluster, Unset: "no price",
		get: func(c *cluster.Config) (float64, bool) {
			if v, ok := c.Prices.Get(name); ok {
				return v, true
			}
			return g.PricePerHr, g.PricePerHr > 0
		},
		set: func(c *cluster.Config, v float64) { c.Prices = c.Prices.With(name, v) },
		copy: func(dst, src *cluster.Config) {
			if v, ok := src.Prices.Get(name); ok {
				dst.Prices = dst.Prices.With(name, v)
			} else {
				dst.Prices = dst.Prices.Without(name)
			}
		}}).when(oneOf(gpu, name))
}
