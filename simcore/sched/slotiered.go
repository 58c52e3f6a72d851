package sched

import "optimize/simcore"

// Defaults of the class-aware policies. The bases are critical 10,
// standard 5, sheddable and batch 1; background and unclassed requests
// rank last.
//
// The aging defaults are those of BLIS's SLOTieredPriority (1e-5 per µs,
// standard 100 ms, sheddable, batch and background 200 ms, critical 0):
// with them a sheddable request overtakes a fresh critical one after
// 200 + (10 − 1) / 0.01 = 1100 ms, a starvation ceiling of about 1 s. A
// Bayesian search's optimum (9.8e-5 per µs = 0.098 per ms with critical
// base 12.9) is a tuning result, not a default. Unclassed requests age
// from arrival, so a workload without classes is served FCFS.
const DefaultAgeWeightPerMs = 0.01

var (
	defaultBase               = [simcore.NumSLOClasses]float64{0, 10, 5, 1, 1, 0}
	defaultUrgencyThresholdMs = [simcore.NumSLOClasses]float64{0, 0, 100, 200, 200, 200}
)

// BaseFor returns class c's base priority under cfg: the router computes
// the priority-bridge hint from it, so that router and scheduler share
// one table.
func BaseFor(cfg PolicyConfig, c simcore.SLOClass) float64 {
	c = c.Known()
	return cfg.Base.Or(c, defaultBase[c])
}

// UrgencyThresholdMsFor returns how long (ms) a class-c request waits
// before slo-tiered urgency starts to grow.
func UrgencyThresholdMsFor(cfg PolicyConfig, c simcore.SLOClass) float64 {
	c = c.Known()
	return cfg.UrgencyThresholdMs.Or(c, defaultUrgencyThresholdMs[c])
}

// ageWeightPerMs is the slo-tiered slope in effect.
func ageWeightPerMs(cfg PolicyConfig) float64 {
	if cfg.AgeWeightPerMs == 0 && !cfg.AgeWeightGiven {
		return DefaultAgeWeightPerMs
	}
	return cfg.AgeWeightPerMs
}

// OvertakeWaitMs is the starvation bound: after how many ms of waiting a
// class-low request is served before a fresh class-high one under
// priority-fcfs (ties go to the earlier arrival, so equality counts). It
// returns false when that never happens: slo-class, or slo-tiered with
// age weight 0, when low's base is below high's. For slo-adaptive it is
// the bound at full load (LoadThreshold or more waiting requests), which
// holds at every load, since a shorter queue shrinks the class gap (with
// an empty queue low is ahead at once); false then means never at full
// load. cfg must be valid, and any router hint must come from BaseFor.
func OvertakeWaitMs(cfg PolicyConfig, low, high simcore.SLOClass) (float64, bool) {
	switch cfg.Name {
	case Constant, "", SLOBased:
		// Equal ages score equal, and an older request is ahead of a fresh one.
		return 0, true
	case ByClass, SLOTiered, SLOAdaptive:
	default:
		return 0, false
	}
	gap := BaseFor(cfg, high) - BaseFor(cfg, low)
	if gap <= 0 {
		return 0, true
	}
	w := 0.0
	if cfg.Name != ByClass {
		w = ageWeightPerMs(cfg)
	}
	if w == 0 {
		return 0, false
	}
	// A fresh request has no urgency: every threshold is ≥ 0.
	return UrgencyThresholdMsFor(cfg, low) + gap/w, true
}

// tieredPriority is slo-class (perMicro 0), slo-tiered and, with the base
// scaled by the load, slo-adaptive: baseScale times the class base, or the
// router's hint when it set one, plus perMicro for every µs waited past
// the class threshold. The tables are indexed by class.
type tieredPriority struct {
	base        [simcore.NumSLOClasses]float64
	thresholdUs [simcore.NumSLOClasses]float64
	perMicro    float64
	baseScale   float64 // 1 but in slo-adaptive, where SetLoad sets it
}

func newTieredPriority(cfg PolicyConfig, perMs float64) *tieredPriority {
	p := &tieredPriority{base: cfg.Base.Resolve(defaultBase), perMicro: perMs / 1e3, baseScale: 1}
	for c, ms := range cfg.UrgencyThresholdMs.Resolve(defaultUrgencyThresholdMs) {
		p.thresholdUs[c] = ms * 1e3
	}
	return p
}

func (p *tieredPriority) Priority(r *simcore.Waiting, now simcore.Tick) float64 {
	c := r.SLO.Known()
	base := p.base[c]
	if r.PriorityHint != 0 {
		base = r.PriorityHint
	}
	base *= p.baseScale // exact for 1
	if p.perMicro == 0 {
		return base
	}
	if past := float64(now-r.Arrival) - p.thresholdUs[c]; past > 0 {
		return base + p.perMicro*past
	}
	return base
}

// AgeWeightInEffect is the slo-tiered urgency slope per ms the policy uses.
func (cfg PolicyConfig) AgeWeightInEffect() float64 { return ageWeightPerMs(cfg) }

// LoadThresholdInEffect is slo-adaptive's queue length for the full class
// gap.
func (cfg PolicyConfig) LoadThresholdInEffect() float64 {
	if cfg.LoadThreshold == 0 {
		return DefaultLoadThreshold
	}
	return cfg.LoadThreshold
}
