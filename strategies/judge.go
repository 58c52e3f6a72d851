package strategies

import (
	"math"

	"optimize/search"
	"optimize/simcore/metrics"
)

// Judge evaluates run, a trial's mean summary, against baseline: the
// template's objectives, their ratios to the baseline's and each
// constraint's shortfall. The study's evaluator judges every trial with
// it, and a report judges the trials an older release stored without
// their violations with it, so that both agree.
func (t *Template) Judge(baseline, run *metrics.Summary) (search.Evaluation, error) {
	objectives := make([]float64, len(t.Objectives))
	base := make([]float64, len(t.Objectives))
	minimize := make([]bool, len(t.Objectives))
	for i, o := range t.Objectives {
		var err error
		if objectives[i], err = Metric(run, o.Metric); err != nil {
			return search.Evaluation{}, err
		}
		if base[i], err = Metric(baseline, o.Metric); err != nil {
			return search.Evaluation{}, err
		}
		minimize[i] = o.Minimize
	}
	violations := make([]float64, len(t.Constraints))
	for i, c := range t.Constraints {
		var err error
		if violations[i], err = c.Shortfall(baseline, run); err != nil {
			return search.Evaluation{}, err
		}
	}
	return search.Judge(objectives, base, minimize, violations, t.Primary), nil
}

// Shortfall is how far run misses the constraint, 0 when met. A ratio
// bound r is missed by r − v/b (min) or v/b − r (max); an absolute bound
// by the gap relative to the bound, or absolute when the bound is 0; a
// delta bound d by b + d − v, in the metric's unit (points of attainment
// for an attainment, already on the scale of a relative gap). A
// ratio to a baseline of 0 is the absolute bound r × 0 = 0: a baseline
// that dropped nothing lets a strategy drop nothing.
func (c Constraint) Shortfall(baseline, run *metrics.Summary) (float64, error) {
	v, err := Metric(run, c.Metric)
	if err != nil {
		return 0, err
	}
	b, err := Metric(baseline, c.Metric)
	if err != nil {
		return 0, err
	}
	// above is how far v exceeds the bound ref.
	above := func(ref float64) float64 {
		if ref == 0 {
			return v
		}
		return (v - ref) / math.Abs(ref)
	}
	aboveRatio := func(r float64) float64 {
		if b == 0 {
			return v
		}
		return v/b - r
	}
	short := 0.0
	if c.MinRatioToBaseline > 0 {
		short = max(short, -aboveRatio(c.MinRatioToBaseline))
	}
	if c.MaxRatioToBaseline > 0 {
		short = max(short, aboveRatio(c.MaxRatioToBaseline))
	}
	if c.HasMinDelta {
		short = max(short, b+c.MinDeltaToBaseline-v)
	}
	if c.HasMin {
		short = max(short, -above(c.Min))
	}
	if c.HasMax {
		short = max(short, above(c.Max))
	}
	return short, nil
}
