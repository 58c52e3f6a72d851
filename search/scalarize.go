package search

import "math"

// RatioCap bounds the primary ratio inside Scalarize: a strategy ten times
// worse than the baseline is already useless, and the cap is what lets a
// finite violation weight rank every feasible point above every clearly
// infeasible one. Missing or broken values (NaN, ±Inf, division by zero,
// negative inputs) also score RatioCap.
const RatioCap = 10.0

// ClearlyInfeasible is the total relative shortfall above which a point
// counts as clearly infeasible (1 percentage point: well above seed noise
// on the means of three seeds).
const ClearlyInfeasible = 0.01

// DefaultViolationWeight is the weight Scalarize uses when given ≤ 0. With
// primary ratios capped at RatioCap, any point whose violations sum to more
// than ClearlyInfeasible scores above DefaultViolationWeight ×
// ClearlyInfeasible = RatioCap, i.e. worse than every feasible point. TPE
// only uses the ranking of scores, so the large weight costs nothing.
const DefaultViolationWeight = RatioCap / ClearlyInfeasible

// Scalarize turns one trial's objectives into the score TPE minimises:
//
//	min(ratio, RatioCap) + weight × Σ max(violation, 0)
//
// where ratio is the primary objective relative to the baseline
// (minimised objective: value/baseline; maximised: baseline/value), so 1.0
// means "as good as the baseline" and smaller is better. Each violation is
// a non-negative relative shortfall, e.g. max(0, 0.98 − tps/tps_base);
// negative entries count as satisfied and NaN as a full shortfall of 1.
// weight ≤ 0 means DefaultViolationWeight (to ignore constraints, pass no
// violations). Objective values are expected to be ≥ 0.
func Scalarize(primary, primaryBaseline float64, minimize bool, violations []float64, weight float64) float64 {
	if !(weight > 0) { // 0, negative or NaN
		weight = DefaultViolationWeight
	}
	ratio := ratioToBaseline(primary, primaryBaseline, minimize)
	if math.IsNaN(ratio) || ratio < 0 || ratio > RatioCap {
		ratio = RatioCap
	}
	return ratio + weight*totalViolation(violations)
}

func totalViolation(violations []float64) float64 {
	total := 0.0
	for _, v := range violations {
		switch {
		case math.IsNaN(v):
			total++
		case v > 0:
			total += math.Min(v, math.MaxFloat64/4) // keep +Inf from producing NaN later
		}
	}
	return total
}

// Normalize maps each objective to "ratio to baseline, smaller is better"
// (minimise: v/b; maximise: b/v), so that every axis reads 1.0 at the
// baseline and a hypervolume reference point of 2.0 on every axis means
// "up to twice as bad as the baseline" regardless of units. Values that
// cannot be compared (zero or negative baseline with a non-zero value,
// NaN) map to +Inf and fall outside any finite reference point.
func Normalize(values, baseline []float64, minimize []bool) []float64 {
	out := make([]float64, len(values))
	for i, v := range values {
		b, minimise := math.NaN(), true
		if i < len(baseline) {
			b = baseline[i]
		}
		if i < len(minimize) {
			minimise = minimize[i]
		}
		out[i] = ratioToBaseline(v, b, minimise)
	}
	return out
}

// ratioToBaseline returns +Inf for values that cannot be compared.
func ratioToBaseline(value, baseline float64, minimize bool) float64 {
	if math.IsNaN(value) || math.IsNaN(baseline) || value < 0 || baseline < 0 {
		return math.Inf(1)
	}
	num, den := value, baseline
	if !minimize {
		num, den = baseline, value
	}
	if den == 0 {
		if num == 0 {
			return 1 // 0 vs 0: as good as the baseline
		}
		return math.Inf(1)
	}
	r := num / den
	if math.IsNaN(r) {
		return math.Inf(1)
	}
	return r
}
