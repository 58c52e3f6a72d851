package cluster

import "math"

// The autoscaler's decision, as BLIS f90a1e3a computes it after llm-d's
// workload-variant-autoscaler (saturation analyzer V2, the unlimited
// engine): capacity and demand are KV tokens. An instance's capacity is
// its KV tokens × the KV-cache threshold (k1; llm-d also bounds it by a
// compute-bound k2 it observes, which BLIS takes equal to k1); its demand
// is the KV tokens its requests hold plus its queue × the average input
// tokens (a constant). One GPU type at one TP is one variant, so the
// engine's choice of the cheapest variant to add and the dearest to drain
// is that variant.

// replicaSignal is one routable instance as the analyzer sees it: its KV
// capacity and use in tokens and its queue length, as its snapshot last
// read them (capacity 0 before its first read).
type replicaSignal struct {
	capacityTokens, tokensInUse int64
	queue                       int32
}

// analyzerParams are the analyzer's thresholds in effect.
type analyzerParams struct {
	kvThreshold, upThreshold, downBoundary, avgInput float64
}

// analysis is the analyzer's result: the ready supply and the demand of
// the instances counted (capacity > 0), the capacity required beyond the
// supply and the loading instances' (> 0: add instances), and the spare
// capacity that can go (> 0: drain instances).
type analysis struct {
	supply, demand    float64
	replicas          int
	required, spare   float64
	perReplicaSupply  float64
	pendingSupply     float64
	requiredSupplyFor float64 // demand / scale-up threshold
}

// analyze computes the analysis over the routable instances (in instance
// order: the float sums follow it) and the loading ones' KV tokens.
func analyze(reps []replicaSignal, pendingCapacityTokens int64, p analyzerParams) analysis {
	var a analysis
	for _, r := range reps {
		if r.capacityTokens <= 0 {
			continue // not read yet: it would be demand without supply
		}
		a.supply += float64(r.capacityTokens) * p.kvThreshold
		a.demand += float64(r.tokensInUse) + float64(r.queue)*p.avgInput
		a.replicas++
	}
	if a.replicas == 0 {
		return a // nothing to measure: no signal (no scale-from-zero)
	}
	a.perReplicaSupply = a.supply / float64(a.replicas)
	if pendingCapacityTokens > 0 {
		a.pendingSupply = float64(pendingCapacityTokens) * p.kvThreshold
	}
	a.requiredSupplyFor = a.demand / p.upThreshold
	if required := a.requiredSupplyFor - (a.supply + a.pendingSupply); required > 0 {
		a.required = required
		return a
	}
	if a.replicas <= 1 {
		return a
	}
	spare := a.supply - a.demand/p.downBoundary
	if spare <= 0 {
		return a
	}
	// Removing one instance must leave supply above demand / boundary.
	if a.supply-a.perReplicaSupply > a.demand/p.downBoundary {
		a.spare = spare
	}
	return a
}

// delta is the engine's decision: instances to add (> 0), to drain (< 0),
// or 0. A scale-up adds ceil(required / capacity per instance), at least
// one; a scale-down drains floor(spare / capacity per instance), at least
// one and at most every counted instance (BLIS checks only that one can
// go, so an idle cluster is drained whole in one decision).
func (a *analysis) delta() int {
	switch {
	case a.required > 0:
		if a.perReplicaSupply <= 0 {
			return 1
		}
		return max(1, int(math.Ceil(a.required/a.perReplicaSupply)))
	case a.spare > 0:
		n := 1
		if a.perReplicaSupply > 0 {
			n = max(1, int(math.Floor(a.spare/a.perReplicaSupply)))
		}
		return -min(n, a.replicas)
	}
	return 0
}

// stabilizer holds one direction's decisions until their signal has
// lasted a window: the first tick of a run of signals starts it (and,
// with a window > 0, is held), a tick at least a window later passes and
// starts afresh; a tick without the signal forgets it.
type stabilizer struct {
	since int64
	seen  bool
}

// pass reports whether a decision (signal) at now passes a window of
// window µs.
func (s *stabilizer) pass(signal bool, now int64, window float64) bool {
	if !signal {
		s.seen = false
		return false
	}
	if !s.seen {
		s.since, s.seen = now, true
		if window > 0 {
			return false
		}
	}
	if now-s.since < int64(window) {
		return false
	}
	s.seen = false
	return true
}

// sampleDelay draws d in µs: exactly its mean without a spread (no draw),
// else mean + stddev × a standard normal draw, clamped at 0, truncated.
func sampleDelay(d Delay, normal func() float64) int64 {
	s := d.Mean
	if d.Stddev > 0 {
		s = max(0, d.Mean+d.Stddev*normal())
	}
	us := s * 1e6
	if math.IsNaN(us) || math.IsInf(us, 0) {
		return 0
	}
	return int64(us)
}
