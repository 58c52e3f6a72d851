package metrics

import "optimize/simcore"

// Targets are per-class latency targets in ms. A request meets its class's
// targets when it completed with a TTFT within TTFT, a mean inter-token
// latency ((E2E − TTFT) / (output tokens − 1), 0 for a single-token
// output) within ITL and an E2E within E2E, each only where set.
type Targets struct {
	TTFT, ITL, E2E simcore.PerClass
}

// has reports whether the class has any target.
func (t *Targets) has(cl simcore.SLOClass) bool {
	return t.TTFT.Set[cl] || t.ITL.Set[cl] || t.E2E.Set[cl]
}

// any reports whether some class has a target.
func (t *Targets) any() bool {
	return t.TTFT.Given() || t.ITL.Given() || t.E2E.Given()
}

// SetTargets gives the collector the run's targets; call it before the
// first request completes. Completed counts the requests that meet them,
// one counter per class, so no per-request record is kept for it.
func (c *Collector) SetTargets(t Targets) { c.targets = t }

// meets reports whether the completed request r met every target of its
// class. Latencies are in µs, targets in ms.
func (t *Targets) meets(r *simcore.Request, e2e int64) bool {
	cl := r.SLO.Known()
	if v, ok := t.TTFT.Get(cl); ok && !(r.FirstToken >= 0 && float64(r.FirstToken) <= v*1000) {
		return false
	}
	if v, ok := t.E2E.Get(cl); ok && float64(e2e) > v*1000 {
		return false
	}
	if v, ok := t.ITL.Get(cl); ok && meanITL(r) > v*1000 {
		return false
	}
	return true
}

// meanITL is the request's mean inter-token latency in µs: the time from
// its first token to its last over the gaps between them.
func meanITL(r *simcore.Request) float64 {
	if r.OutputLen <= 1 {
		return 0
	}
	return float64(r.ITLSum) / float64(r.OutputLen-1)
}

// goodput fills the attainment and goodput of every class in s that has a
// target, and the overall ones over those classes: attainment is the
// requests that met their class's targets over the requests of those
// classes that arrived (rejected, dropped and unfinished ones miss), and
// goodput is the requests that met them per second of makespan.
func (c *Collector) goodput(s *Summary, makespan simcore.Tick) {
	if !c.targets.any() {
		return
	}
	perSec := func(n int64) float64 {
		if makespan <= 0 {
			return 0
		}
		return float64(n) / (float64(makespan) / 1e6)
	}
	var met int64
	var arrived float64
	for cl := simcore.SLOClass(0); cl < simcore.NumSLOClasses; cl++ {
		cs, ok := s.PerSLO[cl.Label()]
		if !ok || !c.targets.has(cl) {
			continue
		}
		a, g := float64(c.met[cl])/cs.Count, perSec(c.met[cl])
		cs.Attainment, cs.Goodput = &a, &g
		s.PerSLO[cl.Label()] = cs
		met += c.met[cl]
		arrived += cs.Count
	}
	if arrived == 0 {
		return // no request of a class with a target arrived
	}
	a, g := float64(met)/arrived, perSec(met)
	s.Attainment, s.Goodput = &a, &g
}
