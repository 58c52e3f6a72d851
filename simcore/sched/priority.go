package sched

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"optimize/simcore"
)

// PolicyConfig selects and parameterises a priority policy.
type PolicyConfig struct {
	Name string // one of PolicyNames; "" means constant
	// Base is the per-class base score of slo-class and slo-tiered; classes
	// not given keep the defaults (critical 10, standard 5, sheddable and
	// batch 1, background and unclassed 0).
	Base simcore.PerClass
	// AgeWeightPerMs is slo-tiered's urgency slope per ms waited past the
	// class threshold. 0 means DefaultAgeWeightPerMs unless AgeWeightGiven
	// is set, so that "no aging" stays expressible.
	AgeWeightPerMs float64
	AgeWeightGiven bool
	// UrgencyThresholdMs is slo-tiered's per-class wait (ms) before urgency
	// starts; classes not given keep DefaultUrgencyThresholdMs.
	UrgencyThresholdMs simcore.PerClass
	// LoadThreshold is slo-adaptive's wait-queue length at which the gap
	// between class bases reaches its full size; 0 means
	// DefaultLoadThreshold.
	LoadThreshold float64
}

// Policy scores a waiting request at time now; higher is more urgent.
type Policy interface {
	Priority(r *simcore.Waiting, now simcore.Tick) float64
}

// Priority policy names.
const (
	Constant  = "constant"
	SLOBased  = "slo-based"
	ByClass   = "slo-class"
	SLOTiered = "slo-tiered"
	// SLOAdaptive is slo-tiered whose class gap scales with the instance's
	// queue: classes are alike when the queue is short and fully separated
	// from LoadThreshold waiting requests on.
	SLOAdaptive = "slo-adaptive"
)

// PolicyNames lists the accepted --priority-policy values.
func PolicyNames() []string { return []string{Constant, SLOBased, ByClass, SLOTiered, SLOAdaptive} }

// LoadAware is implemented by policies that read their instance's queue
// length; the instance reports it before scoring its queue each step.
type LoadAware interface {
	SetLoad(waiting int)
}

// DefaultLoadThreshold is slo-adaptive's default queue length for the full
// class gap.
const DefaultLoadThreshold = 16

// NewPolicy returns the configured policy; constant returns nil, which
// lets the engine skip rescoring altogether.
func NewPolicy(cfg PolicyConfig) (Policy, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	switch cfg.Name {
	case Constant, "":
		return nil, nil
	case SLOBased:
		return agePriority{perMicro: 1e-6}, nil
	case ByClass:
		return newTieredPriority(cfg, 0), nil
	case SLOAdaptive:
		p := &adaptivePriority{tieredPriority: newTieredPriority(cfg, ageWeightPerMs(cfg)), threshold: cfg.LoadThresholdInEffect()}
		p.baseScale = 0 // until the first SetLoad
		return p, nil
	}
	return newTieredPriority(cfg, ageWeightPerMs(cfg)), nil
}

// Validate checks the policy name and every parameter, also those the
// chosen policy ignores, so that a bad value is never silently dropped.
// Errors are one line naming the flag.
func (cfg PolicyConfig) Validate() error {
	if cfg.Name != "" && !slices.Contains(PolicyNames(), cfg.Name) {
		return fmt.Errorf("--priority-policy: unknown value %q (allowed: %s)", cfg.Name, strings.Join(PolicyNames(), ", "))
	}
	if t := cfg.LoadThreshold; !(t >= 0) || math.IsInf(t, 0) {
		return fmt.Errorf("--slo-load-threshold: must be a finite number ≥ 0 (waiting requests; 0 = %d), got %v", DefaultLoadThreshold, t)
	}
	if w := cfg.AgeWeightPerMs; !(w >= 0) || math.IsInf(w, 0) {
		return fmt.Errorf("--slo-age-weight: must be a finite number ≥ 0 (priority per ms waited), got %v", w)
	}
	for c := simcore.SLOClass(0); c < simcore.NumSLOClasses; c++ {
		if v, ok := cfg.Base.Get(c); ok && (math.IsNaN(v) || math.IsInf(v, 0)) {
			return fmt.Errorf("--slo-base: %s=%v must be a finite number", c.Label(), v)
		}
		if v, ok := cfg.UrgencyThresholdMs.Get(c); ok && (!(v >= 0) || math.IsInf(v, 0)) {
			return fmt.Errorf("--slo-urgency-threshold-ms: %s=%vms must be a finite number ≥ 0", c.Label(), v)
		}
	}
	return nil
}

// UsesClassBase reports whether the policy starts from the per-class base
// table, and so honours a router's priority hint (the priority bridge).
// constant and slo-based ignore hints, as BLIS overwrote them.
func (cfg PolicyConfig) UsesClassBase() bool {
	return cfg.Name == ByClass || cfg.Name == SLOTiered || cfg.Name == SLOAdaptive
}

// adaptivePriority is slo-tiered with the class base (or hint) scaled by
// min(1, waiting/threshold); the age urgency is not scaled, so at low load
// requests are served in arrival order once past their class threshold.
type adaptivePriority struct {
	*tieredPriority
	threshold float64
}

func (p *adaptivePriority) SetLoad(waiting int) {
	p.baseScale = min(1, float64(waiting)/p.threshold)
}

// agePriority is BLIS's slo-based policy: 1.0 per second waited since
// arrival, whatever the class (so priority-fcfs degenerates to FCFS by
// arrival time).
type agePriority struct{ perMicro float64 }

func (p agePriority) Priority(r *simcore.Waiting, now simcore.Tick) float64 {
	return p.perMicro * float64(now-r.Arrival)
}
