package report

import (
	"math"

	"optimize/search"
	"optimize/strategies"
)

// HypervolumeHistory is, for k = 1..len(Complete), the hypervolume of the
// Pareto front of the first k complete trials in number order, with the
// normalisation and reference point of Report.Hypervolume (objectives as
// ratios to the baseline, HypervolumeReference on every axis). Its last
// value is Report.Hypervolume up to rounding; like the front, it counts
// feasible trials only.
//
// It is incremental: a point outside the reference box, or weakly
// dominated by the front, leaves the value unchanged (a point that
// dominates a point inside the box lies inside the box itself, so the
// front inside the box is all that counts). A point that enters the front
// adds its exclusive volume, its box minus the hypervolume of the front
// clipped to that box ({max(p, q)} over the front points q).
func (r *Report) HypervolumeHistory() []float64 {
	out := make([]float64, len(r.Complete))
	if len(r.Complete) == 0 {
		return out
	}
	base, minimize := r.BaselineObjectives()
	ref := make([]float64, len(base))
	for i := range ref {
		ref[i] = HypervolumeReference
	}
	var front [][]float64 // mutually non-dominated points inside the box
	limit := make([][]float64, 0, 16)
	hv := 0.0
	for k := range r.Complete {
		p, _ := r.frontPoint(&r.Complete[k], base, minimize)
		if len(p) == len(ref) && insideBox(p, ref) && !weaklyDominated(front, p) {
			limit = limit[:0]
			for _, q := range front {
				m := make([]float64, len(p))
				for d := range p {
					m[d] = math.Max(p[d], q[d])
				}
				limit = append(limit, m)
			}
			box := 1.0
			for d := range p {
				box *= ref[d] - p[d]
			}
			hv += max(0, box-search.Hypervolume(limit, ref))
			front = keepUndominated(front, p)
		}
		out[k] = hv
	}
	return out
}

// insideBox reports whether p is strictly below ref on every axis (a NaN
// is not).
func insideBox(p, ref []float64) bool {
	for d := range ref {
		if !(p[d] < ref[d]) {
			return false
		}
	}
	return true
}

// weaklyDominated reports whether some front point is ≤ p on every axis
// (p adds no volume then).
func weaklyDominated(front [][]float64, p []float64) bool {
	for _, q := range front {
		le := true
		for d := range p {
			if q[d] > p[d] {
				le = false
				break
			}
		}
		if le {
			return true
		}
	}
	return false
}

// keepUndominated drops the front points p weakly dominates and adds p.
func keepUndominated(front [][]float64, p []float64) [][]float64 {
	out := front[:0]
	for _, q := range front {
		if !weaklyDominated([][]float64{p}, q) {
			out = append(out, q)
		}
	}
	return append(out, p)
}

// BestFeasibleSoFar is, per complete trial in number order, the primary
// objective of the best feasible trial up to it — the lowest value of a
// minimised objective, the highest of a maximised one — and NaN before
// the first feasible trial. It never rises on a minimised objective
// (never falls on a maximised one): an infeasible trial, however good its
// value or score, is not a strategy the user may pick. It is the
// optimisation-history line of the plots, the report and the dashboard
// (through History). The best trial `show` names is the lowest score
// instead, which may knowingly miss a constraint by under a point.
func (r *Report) BestFeasibleSoFar() []float64 {
	p := r.Template.Primary
	minimize := r.Template.Objectives[p].Minimize
	out := make([]float64, len(r.Complete))
	best := math.NaN()
	for i := range r.Complete {
		c := &r.Complete[i]
		if v := c.Objectives[p]; search.Feasible(c.Violation) && (math.IsNaN(best) || minimize && v < best || !minimize && v > best) {
			best = v
		}
		out[i] = best
	}
	return out
}

// PrimaryBaseline is the baseline's value of the template's primary
// objective.
func (r *Report) PrimaryBaseline() float64 {
	v, _ := strategies.Metric(&r.Baseline, r.Template.Objectives[r.Template.Primary].Metric)
	return v
}

// logScaleSpan is the ratio of the largest primary value to the smallest
// beyond which a history is drawn on a log axis.
const logScaleSpan = 10

// PrimaryLogScale reports whether the primary objective's values, every
// complete trial's and the baseline's, are all positive and span more
// than a decade (logScaleSpan): a history is then drawn on a log axis,
// where a few trials that miss by far (a 5 s TTFT P99 beside 90 ms ones)
// would squash the others into the bottom of a linear one.
func (r *Report) PrimaryLogScale() bool {
	base := r.PrimaryBaseline()
	lo, hi := base, base
	for i := range r.Complete {
		v := r.Complete[i].Objectives[r.Template.Primary]
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	return lo > 0 && hi > logScaleSpan*lo
}
