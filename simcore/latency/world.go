package latency

import (
	"errors"

	"optimize/simcore/errtext"
	"optimize/simcore/keys"
)

// A World is where instances run, by name: the model served, the GPU, the
// tensor parallelism (GPUs per instance), the latency model pricing their
// steps, the share of GPU memory vLLM may take, and blackbox coefficients
// and GPU prices given by hand — with the world data those names are
// read in (the built-in catalog, or a copy holding a user's model or GPU
// files). The settings write the names; Resolve reads them, every time it
// is asked, so nothing resolved sits beside them to go stale when a name
// changes. A cluster of one world holds one World; a cluster of pools
// (prefill and decode on GPUs and TPs of their own) holds one per pool.
type World struct {
	Model, GPU string
	TP         int
	// LatencyModel is one of Kinds, or "" for the data's default: blackbox
	// where the model has a trained profile on the GPU at the TP, else
	// trained-physics.
	LatencyModel string
	// GPUMemoryUtilization is vLLM's --gpu-memory-utilization: the share
	// of each GPU's memory for weights, activations and KV.
	GPUMemoryUtilization float64
	// Coefficients are blackbox coefficients given by hand
	// (latency.alpha.*, latency.beta.*), over the profile's.
	Coefficients Overrides
	// Physics are trained-physics coefficients given by hand
	// (latency.physics.alpha.*, latency.physics.beta.*), over the data's.
	Physics PhysicsOverrides
	// Prices are prices per GPU-hour given by GPU name
	// (cost.gpu_hour.<GPU>), over the data's price_per_gpu_hour.
	Prices GPUPrices
	// Data is the world data the names are read in.
	Data *Catalog
}

// Resolved is a World read in its data: the names as the data spells
// them, the latency model's full description, and the price of a GPU.
type Resolved struct {
	Model, GPU string
	TP         int
	Spec       Spec
	// PricePerGPUHour is the given price, else the data's; 0 means the
	// GPU has no price, and a run then reports no cost rather than a free
	// cluster.
	PricePerGPUHour      float64
	GPUMemoryUtilization float64
}

// ErrNoData is what Resolve reports for a World that names no world data.
var ErrNoData = errors.New("no world data to read the model and GPU in")

// Resolve reads w in its data: the model and the GPU by name
// (case-insensitive), the latency model (LatencyModel, else the data's
// default), its coefficients (a blackbox profile's, under any given by
// hand), the architecture, the GPU's figures and its price. Errors name
// the setting at fault.
func (w World) Resolve() (Resolved, error) {
	if w.Data == nil {
		return Resolved{}, ErrNoData
	}
	m, err := w.Data.Model(w.Model)
	if err != nil {
		return Resolved{}, errtext.BadSetting(keys.Model, "%v", err)
	}
	gpu, err := w.Data.GPU(w.GPU)
	if err != nil {
		return Resolved{}, errtext.BadSetting(keys.GPU, "%v", err)
	}
	r := Resolved{Model: m.Name, GPU: gpu.Name, TP: w.TP, PricePerGPUHour: gpu.PricePerHr, GPUMemoryUtilization: w.GPUMemoryUtilization}
	if v, ok := w.Prices.Get(gpu.Name); ok {
		r.PricePerGPUHour = v
	}
	profile, trained := m.Profile(gpu.Name, w.TP)
	kind := w.LatencyModel
	if kind == "" {
		kind = KindTrainedPhysics
		if trained {
			kind = KindBlackbox
		}
	}
	r.Spec = Spec{Kind: kind, Arch: m.Arch, Hardware: gpu.Hardware, Physics: w.Physics.Apply(w.Data.Physics()), RooflineAlpha: w.Data.RooflineAlpha()}
	if kind == KindBlackbox {
		if !trained && !w.Coefficients.Complete() {
			_, err := w.Data.Find(m.Name, gpu.Name, w.TP)
			return Resolved{}, errtext.BadSetting(keys.LatencyModel, "%v; choose trained-physics or roofline, or give every latency.alpha.* and latency.beta.*", err)
		}
		r.Spec.Coeffs, r.Spec.ProfileBlocks = w.Coefficients.Apply(profile.Coeffs), profile.TotalKVBlocks
	}
	if r.Spec.Physical() {
		if err := m.Arch.CheckTP(w.TP); err != nil {
			return Resolved{}, errtext.BadSetting(keys.TP, "%s: %v", m.Name, err)
		}
	}
	return r, nil
}

// Physical reports whether the latency model reads the architecture and
// the GPU (trained-physics, roofline).
func (r Resolved) Physical() bool { return r.Spec.Physical() }

// Kind is the latency model's name.
func (r Resolved) Kind() string { return r.Spec.Kind }
