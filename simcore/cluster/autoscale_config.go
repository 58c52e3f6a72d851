package cluster

import (
	"fmt"
	"math"
	"strings"

	"optimize/simcore/errtext"
	"optimize/simcore/keys"
	"optimize/simcore/latency"
)

// Autoscale configures the model autoscaler BLIS f90a1e3a simulates after
// llm-d's workload-variant-autoscaler: every tick a saturation analyzer
// compares the KV tokens the routable instances hold and their queues
// want with what their KV caches can hold, an engine turns a deficit into
// instances to add and a surplus into instances to drain, stabilization
// windows hold a decision until its signal has lasted, and an actuator
// applies it after the HPA's scrape delay: new instances are placed on a
// node pool's free GPUs and load for a while before they serve; drained
// ones finish their work and release their GPUs.
type Autoscale struct {
	// IntervalUs is the tick period in µs; 0 = no autoscaler.
	IntervalUs float64
	// ScaleUpWindowUs and ScaleDownWindowUs: how long (µs) a scale-up or
	// scale-down signal must last, tick after tick, before it is acted on
	// (0 = at once).
	ScaleUpWindowUs, ScaleDownWindowUs float64
	// HPADelay is the delay (s) from a tick's decision to its actuation.
	HPADelay Delay
	// The analyzer's thresholds (0 = the default): the fraction of an
	// instance's KV tokens that counts as its capacity (0.8), the
	// demand/capacity above which instances are added (0.8), the one below
	// which they are drained (0.4), and the input tokens a queued request
	// is assumed to need (512).
	KVCacheThreshold, ScaleUpThreshold, ScaleDownBoundary, AvgInputTokens float64
	// MinReplicas is the fewest routable instances the autoscaler leaves
	// (llm-d: the HPA's minReplicas; the workload-variant-autoscaler keeps
	// the cheapest variant at ≥ 1). 0 = 1, except that under era f90a1e3a
	// BLIS's behaviour is reproduced: no minimum (BLISDegenerate).
	MinReplicas int
	// MaxReplicas bounds the instances placed at once (the HPA's
	// maxReplicas); 0 = the node pools' GPUs bound them. Without node
	// pools it is where instances may be added up to (not under era
	// f90a1e3a, where BLIS adds none without a pool).
	MaxReplicas int
	// LoadingDelay is how long (s) a placed instance loads before it
	// serves; WarmStart starts the initial instances serving at t = 0.
	LoadingDelay Delay
	WarmStart    bool
	// Pools are the node pools instances are placed on, first fit in this
	// order; none: the initial instances exist without a node.
	Pools []NodePool
}

// Delay is a duration in seconds drawn from a normal distribution
// (Stddev 0: exactly Mean), clamped at 0.
type Delay struct{ Mean, Stddev float64 }

// NodePool is a group of identical nodes whose GPUs instances are placed
// on (BLIS's node_pools; nodes are never provisioned while the run goes,
// so MinNodes and MaxNodes are checked and not used).
type NodePool struct {
	Name                             string
	GPUType                          string
	GPUsPerNode                      int
	GPUMemoryGiB                     float64
	InitialNodes, MinNodes, MaxNodes int
	CostPerHour                      float64
}

// On reports whether the autoscaler runs.
func (a *Autoscale) On() bool { return a.IntervalUs > 0 }

// The analyzer's defaults (BLIS f90a1e3a's and llm-d's saturation_v2's).
const (
	DefaultKVCacheThreshold  = 0.8
	DefaultScaleUpThreshold  = 0.8
	DefaultScaleDownBoundary = 0.4
	DefaultAvgInputTokens    = 512
)

// KVCacheThresholdInEffect, ScaleUpThresholdInEffect,
// ScaleDownBoundaryInEffect and AvgInputTokensInEffect are the analyzer's
// thresholds, defaults for 0.
func (a *Autoscale) KVCacheThresholdInEffect() float64 {
	return or(a.KVCacheThreshold, DefaultKVCacheThreshold)
}
func (a *Autoscale) ScaleUpThresholdInEffect() float64 {
	return or(a.ScaleUpThreshold, DefaultScaleUpThreshold)
}
func (a *Autoscale) ScaleDownBoundaryInEffect() float64 {
	return or(a.ScaleDownBoundary, DefaultScaleDownBoundary)
}
func (a *Autoscale) AvgInputTokensInEffect() float64 {
	return or(a.AvgInputTokens, DefaultAvgInputTokens)
}

func or(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}

// BLISDegenerate reports whether the autoscaler reproduces BLIS
// f90a1e3a's behaviour where it is degenerate: under era f90a1e3a given (BLISQuirks), with no
// minReplicas given, nothing keeps an instance routable (an idle cluster
// is drained to zero and every later request is rejected), an instance
// drained while idle stays draining and keeps its GPUs, and without node
// pools no instance is added. Otherwise the autoscaler does what llm-d
// does: at least MinReplicas (≥ 1) stay routable and an idle drained
// instance terminates at once.
func (c *Config) BLISDegenerate() bool {
	return c.BLISQuirks() && c.Autoscale.MinReplicas == 0
}

// MinReplicasInEffect is the fewest routable instances the autoscaler
// leaves: 0 when BLIS's behaviour is reproduced.
func (c *Config) MinReplicasInEffect() int {
	if c.BLISDegenerate() {
		return 0
	}
	return max(c.Autoscale.MinReplicas, 1)
}

// checkAutoscale checks the autoscaler's settings in world w.
func (c *Config) checkAutoscale(w latency.Resolved) error {
	a := &c.Autoscale
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case !(a.IntervalUs >= 0) || !finite(a.IntervalUs):
		return errtext.BadSetting(keys.AutoscaleInterval, "must be a finite number ≥ 0 µs (0 = no autoscaler), got %v", a.IntervalUs)
	case !a.On() && len(a.Pools) > 0:
		return fmt.Errorf("node_pools: instances are placed on node pools only with the autoscaler on (%s > 0)", keys.AutoscaleInterval)
	case !a.On():
		return nil
	case a.IntervalUs < 1:
		return errtext.BadSetting(keys.AutoscaleInterval, "must be ≥ 1 µs (0 = no autoscaler), got %v", a.IntervalUs)
	case !(a.ScaleUpWindowUs >= 0) || !finite(a.ScaleUpWindowUs):
		return errtext.BadSetting(keys.AutoscaleUpWindow, "must be a finite number ≥ 0 µs, got %v", a.ScaleUpWindowUs)
	case !(a.ScaleDownWindowUs >= 0) || !finite(a.ScaleDownWindowUs):
		return errtext.BadSetting(keys.AutoscaleDownWindow, "must be a finite number ≥ 0 µs, got %v", a.ScaleDownWindowUs)
	case !(a.KVCacheThreshold >= 0 && a.KVCacheThreshold <= 1):
		return errtext.BadSetting(keys.AutoscaleKVThreshold, "must be in (0, 1] (0 = default %g), got %v", DefaultKVCacheThreshold, a.KVCacheThreshold)
	case !(a.ScaleUpThreshold >= 0) || !finite(a.ScaleUpThreshold):
		return errtext.BadSetting(keys.AutoscaleUpThreshold, "must be a finite number > 0 (0 = default %g), got %v", DefaultScaleUpThreshold, a.ScaleUpThreshold)
	case !(a.ScaleDownBoundary >= 0) || !finite(a.ScaleDownBoundary):
		return errtext.BadSetting(keys.AutoscaleDownBoundary, "must be a finite number > 0 (0 = default %g), got %v", DefaultScaleDownBoundary, a.ScaleDownBoundary)
	case a.ScaleDownBoundaryInEffect() >= a.ScaleUpThresholdInEffect():
		return errtext.BadSetting(keys.AutoscaleDownBoundary, "must be below the scale-up threshold %g, got %g", a.ScaleUpThresholdInEffect(), a.ScaleDownBoundaryInEffect())
	case !(a.AvgInputTokens >= 0) || !finite(a.AvgInputTokens):
		return errtext.BadSetting(keys.AutoscaleAvgInput, "must be a finite number > 0 tokens (0 = default %d), got %v", DefaultAvgInputTokens, a.AvgInputTokens)
	case a.MinReplicas < 0:
		return errtext.BadSetting(keys.AutoscaleMinReplicas, "must be ≥ 1 (0 = 1, or none under era f90a1e3a as BLIS), got %d", a.MinReplicas)
	case a.MaxReplicas < 0:
		return errtext.BadSetting(keys.AutoscaleMaxReplicas, "must be ≥ 0 (0 = bounded by the node pools' GPUs), got %d", a.MaxReplicas)
	case a.MaxReplicas > 0 && a.MaxReplicas < max(a.MinReplicas, 1):
		return errtext.BadSetting(keys.AutoscaleMaxReplicas, "must be ≥ autoscaler.min_replicas (%d), got %d", max(a.MinReplicas, 1), a.MaxReplicas)
	}
	for _, d := range []struct {
		key string
		v   float64
	}{{keys.AutoscaleHPADelay, a.HPADelay.Mean}, {keys.AutoscaleHPADelayStddev, a.HPADelay.Stddev},
		{keys.AutoscaleLoadingDelay, a.LoadingDelay.Mean}, {keys.AutoscaleLoadingDelayStddev, a.LoadingDelay.Stddev}} {
		if !(d.v >= 0) || !finite(d.v) {
			return errtext.BadSetting(d.key, "must be a finite number ≥ 0 s, got %v", d.v)
		}
	}
	room, gpus := 0, 0
	for i, p := range a.Pools {
		bad := func(f, format string, args ...any) error {
			return fmt.Errorf("node_pools[%d].%s: %s", i, f, fmt.Sprintf(format, args...))
		}
		switch {
		case p.Name == "":
			return bad("name", "must not be empty")
		case !strings.EqualFold(p.GPUType, w.GPU):
			return bad("gpu_type", "%q is not the world's GPU %s: a cluster of several GPU types is not modelled", p.GPUType, w.GPU)
		case p.GPUsPerNode < 1:
			return bad("gpus_per_node", "must be ≥ 1, got %d", p.GPUsPerNode)
		case !(p.GPUMemoryGiB > 0) || !finite(p.GPUMemoryGiB):
			return bad("gpu_memory_gib", "must be a finite number > 0, got %v", p.GPUMemoryGiB)
		case p.InitialNodes < 0 || p.MinNodes < 0 || p.MinNodes > p.MaxNodes || p.MaxNodes < p.InitialNodes:
			return bad("initial_nodes", "needs 0 ≤ min_nodes ≤ max_nodes and initial_nodes ≤ max_nodes, got initial %d, min %d, max %d", p.InitialNodes, p.MinNodes, p.MaxNodes)
		case !(p.CostPerHour >= 0) || !finite(p.CostPerHour):
			return bad("cost_per_hour", "must be a finite number ≥ 0, got %v", p.CostPerHour)
		}
		for j := range i {
			if a.Pools[j].Name == p.Name {
				return bad("name", "%q names two pools", p.Name)
			}
		}
		room += p.InitialNodes * (p.GPUsPerNode / max(c.TP, 1))
		gpus += p.InitialNodes * p.GPUsPerNode
	}
	if len(a.Pools) == 0 {
		return nil
	}
	if !c.PD.Enabled() || c.EffectiveEra(w).August() && a.MinReplicas == 0 {
		if room < c.NumInstances { // every instance at tp, as BLIS places them
			return errtext.BadSetting(keys.NumInstances, "%d instances at TP%d do not fit the node pools' initial nodes (room for %d); BLIS would silently never start the rest", c.NumInstances, max(c.TP, 1), room)
		}
		return nil
	}
	// Each pool role's instances at its TP, first fit as they are placed.
	var free []int
	for _, p := range a.Pools {
		for range p.InitialNodes {
			free = append(free, p.GPUsPerNode)
		}
	}
	for i := range c.NumInstances {
		tp, placed := max(c.PD.tpOf(c.PD.role(i), c.TP), 1), false
		for n := range free {
			if free[n] >= tp {
				free[n], placed = free[n]-tp, true
				break
			}
		}
		if !placed {
			return errtext.BadSetting(keys.NumInstances, "%d instances at their pools' TP do not fit the node pools' initial nodes (%d GPUs): instance_%d at TP%d finds no node with %d free GPUs", c.NumInstances, gpus, i, tp, tp)
		}
	}
	return nil
}
