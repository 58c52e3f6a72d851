package admit

import (
	"math"

	"optimize/simcore"
	"optimize/simcore/errtext"
	"optimize/simcore/keys"
)

// validateSLOGate checks the per-class gate thresholds whatever the policy (a
// bad value is never silently ignored) and that slo-gated lists at least
// one class.
func validateSLOGate(cfg Config) error {
	for c := simcore.SLOClass(0); c < simcore.NumSLOClasses; c++ {
		if v, ok := cfg.SLOGate.Get(c); ok && !(v >= 0 && v <= math.MaxInt64/2 && v == math.Trunc(v)) {
			return errtext.BadSetting(keys.Member(keys.SLOGate, c.Label()), "must be a whole number ≥ 0 (cluster queue depth), got %v", v)
		}
	}
	if cfg.Policy == SLOGated && !cfg.SLOGate.Given() {
		return errtext.BadSetting(keys.AdmissionPolicy, "%s needs at least one class's gate (admission.slo_gate.<class>), e.g. admission.slo_gate.sheddable=50", SLOGated)
	}
	return nil
}

// sloGate sheds the listed classes while the cluster's total wait-queue
// depth exceeds the class's threshold; unlisted classes always pass. The
// table is indexed by class.
type sloGate struct {
	limit [simcore.NumSLOClasses]int64 // MaxInt64 for an unlisted class
}

func newSLOGate(thresholds simcore.PerClass) *sloGate {
	g := &sloGate{}
	for c := range g.limit {
		// Not PerClass.Resolve: no float64 converts to MaxInt64.
		g.limit[c] = math.MaxInt64
		if v, ok := thresholds.Get(simcore.SLOClass(c)); ok {
			g.limit[c] = int64(v)
		}
	}
	return g
}

func (g *sloGate) Admit(r *simcore.Request, _ simcore.Tick, load *Load) bool {
	return load.QueueDepthTotal <= g.limit[r.SLO.Known()]
}
