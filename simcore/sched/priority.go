package sched

import (
	"math"
	"strings"

	"optimize/simcore"
	"optimize/simcore/errtext"
	"optimize/simcore/keys"
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

// policyKind is one row of the priority-policy table: a name and how to
// build the policy from a validated configuration.
type policyKind struct {
	name  string
	build func(cfg PolicyConfig) Policy
}

// policyKinds is the one place where priority policies are named and
// built; the first row is the default. constant builds nil, which lets the
// engine skip rescoring altogether. A table, not a function returning
// one, so that building a policy per instance allocates nothing; nothing
// writes it.
var policyKinds = [...]policyKind{
	{Constant, func(PolicyConfig) Policy { return nil }},
	{SLOBased, func(PolicyConfig) Policy { return agePriority{perMicro: 1e-6} }},
	{ByClass, func(cfg PolicyConfig) Policy { return newTieredPriority(cfg, 0) }},
	{SLOTiered, func(cfg PolicyConfig) Policy { return newTieredPriority(cfg, ageWeightPerMs(cfg)) }},
	{SLOAdaptive, func(cfg PolicyConfig) Policy {
		p := &adaptivePriority{tieredPriority: newTieredPriority(cfg, ageWeightPerMs(cfg)), threshold: cfg.LoadThresholdInEffect()}
		p.baseScale = 0 // until the first SetLoad
		return p
	}},
}

// PolicyNames lists the accepted priority policies, the default first.
func PolicyNames() []string {
	kinds := policyKinds
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.name
	}
	return names
}

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
	name := cfg.Name
	if name == "" {
		name = policyKinds[0].name
	}
	for _, k := range policyKinds {
		if k.name == name {
			return k.build(cfg), nil
		}
	}
	return nil, unknownPolicy(cfg.Name) // Validate has rejected it already
}

// knownPolicy reports whether name is in the table (no allocation: the
// engine builds a policy per instance).
func knownPolicy(name string) bool {
	for _, k := range policyKinds {
		if k.name == name {
			return true
		}
	}
	return false
}

func unknownPolicy(name string) error {
	return errtext.BadSetting(keys.PriorityPolicy, "unknown value %q (allowed: %s)", name, strings.Join(PolicyNames(), ", "))
}

// Validate checks the policy name and every parameter, also those the
// chosen policy ignores, so that a bad value is never silently dropped.
// Errors are one line naming the setting's key.
func (cfg PolicyConfig) Validate() error {
	if cfg.Name != "" && !knownPolicy(cfg.Name) {
		return unknownPolicy(cfg.Name)
	}
	if t := cfg.LoadThreshold; !(t >= 0) || math.IsInf(t, 0) {
		return errtext.BadSetting(keys.PriorityLoad, "must be a finite number ≥ 0 (waiting requests; 0 = %d), got %v", DefaultLoadThreshold, t)
	}
	if w := cfg.AgeWeightPerMs; !(w >= 0) || math.IsInf(w, 0) {
		return errtext.BadSetting(keys.PriorityAgeWeight, "must be a finite number ≥ 0 (priority per ms waited), got %v", w)
	}
	for c := simcore.SLOClass(0); c < simcore.NumSLOClasses; c++ {
		if v, ok := cfg.Base.Get(c); ok && (math.IsNaN(v) || math.IsInf(v, 0)) {
			return errtext.BadSetting(keys.Member(keys.PriorityBase, c.Label()), "must be a finite number, got %v", v)
		}
		if v, ok := cfg.UrgencyThresholdMs.Get(c); ok && (!(v >= 0) || math.IsInf(v, 0)) {
			return errtext.BadSetting(keys.Member(keys.PriorityUrgency, c.Label()), "must be a finite number ≥ 0 ms, got %v", v)
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
