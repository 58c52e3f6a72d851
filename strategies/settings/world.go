package settings

import (
	"slices"
	"strconv"
	"sync"

	"optimize/data"
	"optimize/search"
	"optimize/simcore"
	"optimize/simcore/cluster"
	"optimize/simcore/keys"
	"optimize/simcore/latency"
)

// The world a configuration runs in — model, GPU, TP and latency model —
// is named by settings and resolved here, against the world data the
// binary embeds (data/models, hardware, latency), into what the
// simulator computes with: the latency model's coefficients, the model's
// architecture and the GPU's figures.

var (
	worldOnce sync.Once
	world     *latency.Catalog
	worldErr  error
)

// WorldData is the built-in world data, read once.
func WorldData() (*latency.Catalog, error) {
	worldOnce.Do(func() { world, worldErr = latency.ReadCatalog(data.World) })
	return world, worldErr
}

// worldNames returns the built-in model and GPU names for the settings'
// choices (none if the data does not load: Standard reports why).
func worldNames() (models, gpus []string) {
	cat, err := WorldData()
	if err != nil {
		return nil, nil
	}
	return cat.Models(), cat.GPUs()
}

// latencyKinds are the latency.model choices.
func latencyKinds() []string { return latency.Kinds() }

// LatencyModelKey is the latency model's setting, the world a robust
// study varies (--worlds).
const LatencyModelKey = keys.LatencyModel

// worldSettings declares the world's settings.
func worldSettings() []*Setting {
	models, gpus := worldNames()
	kinds := latencyKinds()
	kind := &Setting{Key: LatencyModelKey, Flag: "latency-model", Kind: search.Categorical, Choices: kinds,
		Doc: "step-time model: blackbox (BLIS's per-profile alpha/beta fit; no vLLM counterpart), trained-physics (roofline terms × learned corrections, BLIS's default) or roofline (the uncorrected bound); default: blackbox where the world has a trained profile, else trained-physics; trained-physics when era f90a1e3a is given, as BLIS f90a1e3a's blis run", Component: CompCluster,
		get: func(c *cluster.Config) (float64, bool) {
			k := c.LatencyModel
			if k == "" {
				k = resolved(c).Kind()
			}
			for i, ch := range kinds {
				if ch == k {
					return float64(i), true
				}
			}
			return 0, true
		},
		set:  func(c *cluster.Config, v float64) { c.LatencyModel = kinds[int(v)] },
		copy: func(dst, src *cluster.Config) { dst.LatencyModel = src.LatencyModel }}
	physical := Rule{Text: LatencyModelKey + " is trained-physics or roofline", subject: LatencyModelKey,
		holds: func(c *cluster.Config) bool { return resolved(c).Physical() },
		state: func(c *cluster.Config) string { return LatencyModelKey + " is " + resolved(c).Kind() }}
	world := []*Setting{
		choiceField(keys.Model, "model", models, "model served, by its Hugging Face name (`optimize template settings` and docs/models-and-hardware.md list them)", CompCluster,
			func(c *cluster.Config) *string { return &c.Model }),
		choiceField(keys.GPU, "hardware", gpus, "GPU of every instance", CompCluster,
			func(c *cluster.Config) *string { return &c.GPU }),
		intField(keys.TP, "tp", 1, 8, "GPUs", "tensor parallelism: GPUs per instance", CompCluster,
			func(c *cluster.Config) *int { return &c.TP }),
		kind,
	}
	for i, s := range world {
		s.World = i + 1
	}
	return append(world, eraSetting(),
		int64Field(keys.MaxModelLen, "max-model-len", 0, maxInt32, "tokens", "vLLM's --max-model-len: the context window; a request whose input fills it or whose input + output exceeds it is dropped at the wait queue (0 = derived: for the physics latency models the model's max_position_embeddings capped at the KV capacity, for blackbox none)", CompCluster,
			func(c *cluster.Config) *int64 { return &c.MaxModelLen }).effective(func(c *cluster.Config) float64 {
			n, _ := c.ContextWindow(resolved(c))
			return float64(n)
		}),
		floatField(keys.GPUMemoryUtilization, "gpu-memory-utilization", 1e-6, 1, "fraction", "vLLM's --gpu-memory-utilization: the share of each GPU's memory for weights, activations and KV; sets the KV capacity derived from memory", CompCluster, 0,
			func(c *cluster.Config) *float64 { return &c.GPUMemoryUtilization }).when(physical),
		choiceField(keys.KVCapacityRule, "kv-capacity-rule", latency.KVRules(), "how an instance's GPU KV blocks are derived from memory (kv.total_blocks unset): vllm, vLLM's per-worker rule (each GPU's memory × gpu_memory_utilization, less its 1/TP of the weights and its profiled overhead, over its share of the KV bytes per token: within 1.5 % of the num_gpu_blocks real vLLM logged on H100 at TP1, 2 and 4), or blis-f90a1e3a, BLIS's estimate (the memory of every GPU over KV bytes per token split by TP: TP times too many blocks at TP > 1); default vllm, blis-f90a1e3a when era f90a1e3a is given", CompCluster,
			func(c *cluster.Config) *string { return &c.KVCapacityRule }).effective(func(c *cluster.Config) float64 {
			return float64(slices.Index(latency.KVRules(), c.KVCapacityRuleInEffect()))
		}).when(physical),
	)
}

// resolved is c's world resolved in its data, or the zero value (no
// latency model, not physical) where it does not resolve: CheckConfig
// reports why.
func resolved(c *cluster.Config) latency.Resolved {
	w, err := c.Resolve()
	if err != nil {
		return latency.Resolved{}
	}
	return w
}

// eraSetting is which BLIS behaviour the simulator reproduces where BLIS
// changed it between 7fd7a88d and f90a1e3a (simcore.Era lists each
// change); "" follows the latency model.
func eraSetting() *Setting {
	eras := simcore.EraNames()
	return &Setting{Key: keys.Era, Flag: "era", Kind: search.Categorical, Choices: eras,
		Doc: "BLIS behaviour reproduced where it changed: 7fd7a88d (the blackbox world) or f90a1e3a (the trained-physics world: a request queued at a step's time joins it, output tokens counted at completion with the first, a preempted request's ITLs dropped, check-then-act KV allocation); default: the latency model's. Given as f90a1e3a, what is not set takes BLIS f90a1e3a's blis run defaults: trained-physics, its KV estimate (kv.capacity_rule blis-f90a1e3a), the weighted profile precise-prefix-cache-scorer 2, queue-scorer 1, kv-cache-utilization-scorer 1, a 50,000 µs cache-signal delay", Component: CompCluster,
		get: func(c *cluster.Config) (float64, bool) {
			return float64(slices.Index(eras, string(c.EffectiveEra(resolved(c))))), true
		},
		set:  func(c *cluster.Config, v float64) { c.Era = simcore.Era(eras[int(v)]) },
		copy: func(dst, src *cluster.Config) { dst.Era = src.Era }}
}

// blackboxRule holds while the resolved latency model is the blackbox.
func blackboxRule() Rule {
	return Rule{Text: LatencyModelKey + " is blackbox", subject: LatencyModelKey,
		holds: func(c *cluster.Config) bool { return !resolved(c).Physical() },
		state: func(c *cluster.Config) string { return LatencyModelKey + " is " + resolved(c).Kind() }}
}

// coeff is one blackbox coefficient of family keys.LatencyAlpha or
// keys.LatencyBeta, element i of --alpha-coeffs or --beta-coeffs, given
// over the profile's.
func coeff(family, flag string, i int, doc string) *Setting {
	value := func(c *cluster.Config) (v float64, set bool, profile float64) {
		o, coeffs := &c.Coefficients, resolved(c).Spec.Coeffs
		if family == keys.LatencyAlpha {
			return o.Alpha[i], o.AlphaSet[i], coeffs.Alpha[i]
		}
		return o.Beta[i], o.BetaSet[i], coeffs.Beta[i]
	}
	s := &Setting{Key: keys.Member(family, strconv.Itoa(i)), Flag: flag, Item: strconv.Itoa(i), family: Vector, Kind: search.Float, Low: 0, High: huge,
		Unit: "µs", Doc: doc, Component: CompCluster,
		get: func(c *cluster.Config) (float64, bool) {
			v, set, profile := value(c)
			if set {
				return v, true
			}
			return profile, true
		},
		set: func(c *cluster.Config, v float64) {
			o := &c.Coefficients
			if family == keys.LatencyAlpha {
				o.Alpha[i], o.AlphaSet[i] = v, true
			} else {
				o.Beta[i], o.BetaSet[i] = v, true
			}
		},
		copy: func(dst, src *cluster.Config) {
			d, s := &dst.Coefficients, &src.Coefficients
			if family == keys.LatencyAlpha {
				d.Alpha[i], d.AlphaSet[i] = s.Alpha[i], s.AlphaSet[i]
			} else {
				d.Beta[i], d.BetaSet[i] = s.Beta[i], s.BetaSet[i]
			}
		}}
	return s.when(blackboxRule())
}

// WorldLine names the world of c in one line: "meta-llama/llama-3.1-8b-instruct
// on H100, TP2, blackbox latency model".
func WorldLine(c *cluster.Config) string { return c.Where().Line() }

// shapeKeys are the settings of the cluster's shape that place a run in
// its world beside the world's own (worldSettings).
var shapeKeys = []string{keys.NumInstances, keys.KVTotalBlocks}

// WorldKeys are the keys of the settings that place a run in its world —
// the world's own (worldSettings: model, gpu, tp, latency.model, era,
// max_model_len, gpu_memory_utilization) and the cluster's shape
// (num_instances, kv.total_blocks) — sorted: a template that tunes one
// runs its trials in worlds of their own.
func WorldKeys() []string {
	var keys []string
	for _, s := range worldSettings() {
		keys = append(keys, s.Key)
	}
	keys = append(keys, shapeKeys...)
	slices.Sort(keys)
	return keys
}

// StandardConfig is Standard, made once (with the settings table).
func StandardConfig() (cluster.Config, error) {
	All()
	return standard, tableErr
}
