package workload

import (
	"math"
	"slices"
	"strings"

	"optimize/simcore"
)

// validateTargets checks slo_targets: every key a class that some client
// sends, every target a finite number > 0 (ms). Classes are checked in
// name order, so the first error is always the same one.
func (v validator) validateTargets(s *Spec) error {
	var sent []string
	for _, c := range s.Clients {
		cl, _ := simcore.ParseSLOClass(c.SLOClass)
		if cl != simcore.SLONone && !slices.Contains(sent, cl.String()) {
			sent = append(sent, cl.String())
		}
	}
	names := make([]string, 0, len(s.SLOTargets))
	for name := range s.SLOTargets {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p := "slo_targets." + name
		cl, err := simcore.ParseSLOClass(name)
		if err != nil || cl == simcore.SLONone || cl.String() != name {
			return v.errf(p, "unknown SLO class %q (allowed: %s)", name, simcore.SLOClassNames)
		}
		if !slices.Contains(sent, name) {
			return v.errf(p, "no client sends class %s (classes sent: %s)", name, strings.Join(sent, ", "))
		}
		t := s.SLOTargets[name]
		for _, f := range []struct {
			key string
			v   *float64
		}{{"ttft_ms", t.TTFTMs}, {"itl_ms", t.ITLMs}, {"e2e_ms", t.E2EMs}} {
			if f.v != nil && !(*f.v > 0 && !math.IsInf(*f.v, 0)) {
				return v.errf(p+"."+f.key, "must be a finite number > 0 (ms), got %s", num(*f.v))
			}
		}
	}
	return nil
}

// FillTargets sets the spec's latency targets (ms) in the classes of ttft,
// itl and e2e that have none: the workload's targets are the defaults,
// whatever a run's configuration sets wins.
func (s *Spec) FillTargets(ttft, itl, e2e *simcore.PerClass) {
	for cl := simcore.SLOCritical; cl < simcore.NumSLOClasses; cl++ {
		t, ok := s.SLOTargets[cl.String()]
		if !ok {
			continue
		}
		for _, f := range []struct {
			dst *simcore.PerClass
			v   *float64
		}{{ttft, t.TTFTMs}, {itl, t.ITLMs}, {e2e, t.E2EMs}} {
			if f.v != nil && !f.dst.Set[cl] {
				f.dst.V[cl], f.dst.Set[cl] = *f.v, true
			}
		}
	}
}
