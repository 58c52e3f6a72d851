package search

import (
	"fmt"
	"math"
)

// RatioCap bounds the primary ratio inside Score: a strategy ten times
// worse than the baseline is already useless, and the cap is what lets a
// finite violation weight rank every feasible point above every clearly
// infeasible one. Missing or broken values (NaN, ±Inf, division by zero,
// negative inputs) also score RatioCap.
const RatioCap = 10.0

// ClearlyInfeasible is the total relative shortfall above which a point
// counts as clearly infeasible (1 percentage point: well above seed noise
// on the means of three seeds).
const ClearlyInfeasible = 0.01

// DefaultViolationWeight is the weight Score uses when given ≤ 0. With
// primary ratios capped at RatioCap, any point whose violations sum to more
// than ClearlyInfeasible scores above DefaultViolationWeight ×
// ClearlyInfeasible = RatioCap, i.e. worse than every feasible point. TPE
// only uses the ranking of scores, so the large weight costs nothing.
const DefaultViolationWeight = RatioCap / ClearlyInfeasible

// MaxShortfall caps one constraint's shortfall in the total: 10⁶ (a
// hundred million per cent) already ranks a trial last, and an infinite
// shortfall (a bound missed by a division by zero) must not make the
// score infinite, which no sampler can store.
const MaxShortfall = 1e6

// FeasibleTolerance is the total shortfall below which a trial meets its
// constraints: rounding in v/b − r leaves shortfalls of 1e-16, never 1e-12.
const FeasibleTolerance = 1e-12

// Evaluation is one trial judged against its study's baseline: the
// template's objectives (means over the seeds; NaN where a value is
// missing), each as a ratio to the baseline's (smaller is better), and
// each constraint's relative shortfall (0 when met, NaN when it could not
// be measured). Everything a study says about a trial's quality —
// feasible or not, its score, the Pareto front — is derived from it.
type Evaluation struct {
	Objectives []float64
	Ratios     []float64 // Normalize(Objectives, baseline, minimise)
	Violations []float64 // one per constraint, in the template's order
	Primary    int       // index of the primary objective
}

// Violation is the trial's total constraint shortfall, the number stored
// with it:
//
//	Σ min(max(violation, 0), MaxShortfall) + (1 for each NaN violation or objective)
//
// so a missing measurement counts as a full shortfall of 1 (100 points),
// far beyond any real miss, and the total, and so every Score, stays
// finite.
func (e *Evaluation) Violation() float64 {
	total := 0.0
	for _, v := range e.Violations {
		switch {
		case math.IsNaN(v):
			total++
		case v > 0:
			total += math.Min(v, MaxShortfall)
		}
	}
	for _, o := range e.Objectives {
		if math.IsNaN(o) {
			total++
		}
	}
	return total
}

// Missed is the index of the first constraint the trial misses, or -1.
func (e *Evaluation) Missed() int {
	for i, v := range e.Violations {
		if !Feasible(v) {
			return i
		}
	}
	return -1
}

// Score is the trial's score under weight (see Score).
func (e *Evaluation) Score(weight float64) float64 {
	return Score(e.Ratios[e.Primary], e.Violation(), weight)
}

// Feasible reports whether a total violation (Evaluation.Violation, as
// stored with each trial) means the trial meets every constraint. A NaN
// is not feasible. It is the one definition of feasibility: the Pareto
// front, the history's best-feasible line, the reports and the dashboard
// all ask it.
func Feasible(violation float64) bool { return violation <= FeasibleTolerance }

// Score is what a study ranks trials by:
//
//	min(primary ratio, RatioCap) + weight × violation
//
// where the primary ratio is the primary objective relative to the
// baseline (minimised objective: value/baseline; maximised:
// baseline/value), so 1.0 means "as good as the baseline" and smaller is
// better, and violation is the total shortfall (Evaluation.Violation). A
// ratio that is NaN, negative or above RatioCap counts as RatioCap. The
// stored score, and so the best trial, uses DefaultViolationWeight; the
// model-based samplers rank with a softer weight (samplerViolationWeight).
// weight ≤ 0 means DefaultViolationWeight.
func Score(primaryRatio, violation, weight float64) float64 {
	if !(weight > 0) { // 0, negative or NaN
		weight = DefaultViolationWeight
	}
	ratio := primaryRatio
	if math.IsNaN(ratio) || ratio < 0 || ratio > RatioCap {
		ratio = RatioCap
	}
	return ratio + weight*violation
}

// Judge evaluates objectives and constraint shortfalls against the
// baseline's objectives.
func Judge(objectives, baseline []float64, minimize []bool, violations []float64, primary int) Evaluation {
	return Evaluation{Objectives: objectives, Ratios: Normalize(objectives, baseline, minimize), Violations: violations, Primary: primary}
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

// ScoreRule is one of the two rules a trial is scored by, as everything
// prints it (study show, evaluate, docs/studies.md): both are
//
//	min(primary ratio, RatioCap) + Weight × total constraint shortfall
//
// and differ only in the weight.
type ScoreRule struct {
	Name   string  `json:"name"`   // the key evaluate's lines give its value under
	Weight float64 `json:"weight"` // per unit of total shortfall (1 = 100 points)
	Rule   string  `json:"rule"`   // the formula in one line
	Ranks  string  `json:"ranks"`  // what ranks by it, in a few words
	Why    string  `json:"why"`    // what ranks by it, and why its weight
}

// StoredScore and SamplerRank are the two rules; ScoreRules lists them in
// the order they are printed.
var (
	StoredScore = ScoreRule{Name: "score", Weight: DefaultViolationWeight,
		Rule: ruleText(DefaultViolationWeight), Ranks: "the stored score: ranks the best trial",
		Why: fmt.Sprintf("the score stored with each trial: the best trial, the history, the report and every evidence command rank by it; "+
			"at %g every feasible trial ranks before any that misses its constraints by more than %g point", DefaultViolationWeight, ClearlyInfeasible*100)}
	SamplerRank = ScoreRule{Name: "sampler_score", Weight: samplerViolationWeight,
		Rule: ruleText(samplerViolationWeight), Ranks: "how the model-based samplers rank trials",
		Why: fmt.Sprintf("how the model-based samplers (gp, tpe, parego) rank trials: at %g a trial a few points short of a constraint while far ahead "+
			"on the objective stays among their best, so the search reaches the mechanism where feasible settings exist", samplerViolationWeight)}
	ScoreRules = []ScoreRule{StoredScore, SamplerRank}
)

func ruleText(weight float64) string {
	return fmt.Sprintf("min(primary ratio to baseline, %g) + %g × total constraint shortfall; smaller is better", RatioCap, weight)
}

// SamplerRank is the trial's value under the samplers' rule, exactly as
// the model-based samplers compute it from the stored score (SamplerScore).
func (e *Evaluation) SamplerRank() float64 {
	return SamplerScore(e.Score(DefaultViolationWeight), e.Violation())
}
