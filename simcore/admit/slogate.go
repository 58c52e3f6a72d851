package admit

import (
	"fmt"
	"math"

	"optimize/simcore"
)

// validateSLOGate checks the --slo-gate thresholds whatever the policy (a
// bad value is never silently ignored) and that slo-gated lists at least
// one class.
func validateSLOGate(cfg Config) error {
	for c := simcore.SLOClass(0); c < simcore.NumSLOClasses; c++ {
		if v, ok := cfg.SLOGate.Get(c); ok && !(v >= 0 && v <= math.MaxInt64/2 && v == math.Trunc(v)) {
			return fmt.Errorf("--slo-gate: %s=%v must be a whole number ≥ 0 (cluster queue depth)", c.Label(), v)
		}
	}
	if cfg.Policy == SLOGated && !cfg.SLOGate.Given() {
		return fmt.Errorf("--slo-gate: slo-gated admission needs at least one class=threshold, e.g. sheddable=50")
	}
	return nil
}

// sloGate sheds the listed classes while the cluster's total wait-queue
// depth exceeds the class's threshold; unlisted classes always pass. The
// tables are indexed by class.
type sloGate struct {
	gated [simcore.NumSLOClasses]bool
	limit [simcore.NumSLOClasses]int64
}

func newSLOGate(thresholds simcore.PerClass) *sloGate {
	g := &sloGate{}
	for c := range g.gated {
		v, ok := thresholds.Get(simcore.SLOClass(c))
		g.gated[c], g.limit[c] = ok, int64(v)
	}
	return g
}

func (g *sloGate) Admit(r *simcore.Request, _ simcore.Tick, queueDepthTotal int64) bool {
	c := r.SLO
	if c >= simcore.NumSLOClasses {
		c = simcore.SLONone
	}
	return !g.gated[c] || queueDepthTotal <= g.limit[c]
}
