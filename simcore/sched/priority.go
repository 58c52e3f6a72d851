package sched

import (
	"fmt"
	"strings"

	"optimize/simcore"
)

// PolicyConfig selects and parameterises a priority policy.
type PolicyConfig struct {
	Name string // one of PolicyNames; "" means constant
	// slo-tiered: per-class base score (defaults as slo-class: critical 10,
	// standard 5, sheddable and batch 1, background 0), the urgency slope
	// per ms waited, and the per-class wait (ms) before urgency starts.
	Base               simcore.PerClass
	AgeWeightPerMs     float64
	UrgencyThresholdMs simcore.PerClass
}

// Policy scores a waiting request at time now; higher is more urgent.
type Policy interface {
	Priority(r *simcore.Request, now simcore.Tick) float64
}

// Priority policy names.
const (
	Constant = "constant"
	SLOBased = "slo-based"
)

// PolicyNames lists the accepted --priority-policy values.
func PolicyNames() []string { return []string{Constant, SLOBased} }

// NewPolicy returns the configured policy; constant returns nil, which
// lets the engine skip rescoring altogether.
func NewPolicy(cfg PolicyConfig) (Policy, error) {
	switch cfg.Name {
	case Constant, "":
		return nil, nil
	case SLOBased:
		return agePriority{perMicro: 1e-6}, nil
	}
	return nil, fmt.Errorf("--priority-policy: unknown value %q (allowed: %s)", cfg.Name, strings.Join(PolicyNames(), ", "))
}

// agePriority is BLIS's slo-based policy: 1.0 per second waited since
// arrival, whatever the class (so priority-fcfs degenerates to FCFS by
// arrival time).
type agePriority struct{ perMicro float64 }

func (p agePriority) Priority(r *simcore.Request, now simcore.Tick) float64 {
	return p.perMicro * float64(now-r.Arrival)
}
