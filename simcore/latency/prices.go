package latency

import "strings"

// GPUPrices are prices in USD per GPU-hour by GPU name. A World is copied
// by value and one base configuration is shared by every trial of a
// study, so a slice inside it must never be written in place: the list is
// unexported and With returns a new one (copy on write). A fixed array
// indexed by the data's GPU order would avoid the copy but needs a bound
// fixed at compile time, while GPUs are data (a user's --hardware-config
// adds one); the list stays as short as the prices given (none by
// default), so copying it costs nothing that matters.
type GPUPrices struct{ list []GPUPrice }

// GPUPrice is one GPU's price in USD per GPU-hour.
type GPUPrice struct {
	GPU string
	USD float64
}

// Get returns the price given for gpu (names compare case-insensitively,
// as the world data's do).
func (p GPUPrices) Get(gpu string) (float64, bool) {
	for _, g := range p.list {
		if strings.EqualFold(g.GPU, gpu) {
			return g.USD, true
		}
	}
	return 0, false
}

// With returns the prices with gpu's set to usd; p is not modified.
func (p GPUPrices) With(gpu string, usd float64) GPUPrices {
	out := p.Without(gpu)
	out.list = append(out.list, GPUPrice{GPU: gpu, USD: usd})
	return out
}

// Without returns the prices with gpu's removed; p is not modified. The
// result never shares p's backing array, so With may append to it.
func (p GPUPrices) Without(gpu string) GPUPrices {
	out := make([]GPUPrice, 0, len(p.list)+1)
	for _, g := range p.list {
		if !strings.EqualFold(g.GPU, gpu) {
			out = append(out, g)
		}
	}
	if len(out) == 0 {
		return GPUPrices{}
	}
	return GPUPrices{list: out}
}
