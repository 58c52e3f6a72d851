package search

import (
	"math"
	"math/rand"
	"testing"
)

func TestScalarizeRatiosAndPenalty(t *testing.T) {
	cases := []struct {
		name              string
		primary, baseline float64
		minimize          bool
		violations        []float64
		weight, want      float64
	}{
		{"minimised half", 50, 100, true, nil, 0, 0.5},
		{"maximised double", 200, 100, false, nil, 0, 0.5},
		{"equal", 7, 7, true, nil, 0, 1},
		{"penalty", 100, 100, true, []float64{0.02, 0.03}, 10, 1 + 10*0.05},
		{"negative violation is satisfied", 100, 100, true, []float64{-0.5}, 10, 1},
		{"NaN violation is a full shortfall", 100, 100, true, []float64{math.NaN()}, 10, 11},
		{"default weight", 100, 100, true, []float64{0.001}, 0, 1 + DefaultViolationWeight*0.001},
		{"ratio capped", 1e6, 1, true, nil, 0, RatioCap},
		{"zero throughput", 0, 100, false, nil, 0, RatioCap},
		{"NaN primary is a full shortfall", math.NaN(), 1, true, nil, 0, RatioCap + DefaultViolationWeight},
		{"zero vs zero", 0, 0, true, nil, 0, 1},
	}
	for _, c := range cases {
		got := scalarize(c.primary, c.baseline, c.minimize, c.violations, c.weight)
		if math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: Score = %v, want %v", c.name, got, c.want)
		}
	}
}

// The documented guarantee of DefaultViolationWeight: every feasible point
// scores below every clearly infeasible one (violations summing to more
// than ClearlyInfeasible), whatever the primary objective.
func TestDefaultWeightRanksFeasibleBeforeClearlyInfeasible(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	primary := func() float64 { // from far better to far worse than the baseline
		return math.Exp(rng.Float64()*12 - 6)
	}
	worstFeasible := math.Inf(-1)
	bestInfeasible := math.Inf(1)
	for i := 0; i < 20000; i++ {
		minimize := rng.Intn(2) == 0
		worstFeasible = math.Max(worstFeasible, scalarize(primary(), 1, minimize, []float64{0, -rng.Float64()}, 0))
		shortfall := ClearlyInfeasible * (1 + 1e-9 + rng.Float64())
		split := rng.Float64()
		bestInfeasible = math.Min(bestInfeasible, scalarize(primary(), 1, minimize, []float64{shortfall * split, shortfall * (1 - split)}, 0))
	}
	// The extremes: the worst possible feasible point and the best possible
	// clearly infeasible one.
	worstFeasible = math.Max(worstFeasible, scalarize(math.MaxFloat64, 1, true, nil, 0))
	bestInfeasible = math.Min(bestInfeasible, scalarize(0, 1, true, []float64{ClearlyInfeasible * (1 + 1e-9)}, 0))
	if !(worstFeasible < bestInfeasible) {
		t.Fatalf("worst feasible %v >= best clearly infeasible %v", worstFeasible, bestInfeasible)
	}
}

func TestNormalize(t *testing.T) {
	got := Normalize(
		[]float64{50, 200, 3, 5, 0},
		[]float64{100, 100, 0, 5, 0},
		[]bool{true, false, true, true, false})
	want := []float64{0.5, 0.5, math.Inf(1), 1, 1}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Normalize = %v, want %v", got, want)
		}
	}
}

// scalarize is one objective's score against its baseline under the
// given constraint shortfalls.
func scalarize(primary, baseline float64, minimize bool, violations []float64, weight float64) float64 {
	e := Judge([]float64{primary}, []float64{baseline}, []bool{minimize}, violations, 0)
	return e.Score(weight)
}

// ratioEvaluation is a one-objective evaluation with the given ratio to
// the baseline and one constraint's shortfall.
func ratioEvaluation(ratio, shortfall float64) Evaluation {
	return Judge([]float64{ratio}, []float64{1}, []bool{true}, []float64{shortfall}, 0)
}

// Feasible is the one rule: a total shortfall at most FeasibleTolerance,
// and never a missing value.
func TestFeasibleFromTheViolation(t *testing.T) {
	for _, c := range []struct {
		e    Evaluation
		want bool
	}{
		{Evaluation{Objectives: []float64{1}, Violations: []float64{0, -0.3}}, true},
		{Evaluation{Objectives: []float64{1}, Violations: []float64{1e-16}}, true},
		{Evaluation{Objectives: []float64{1}, Violations: []float64{0.002}}, false},
		{Evaluation{Objectives: []float64{1}, Violations: []float64{math.NaN()}}, false},
		{Evaluation{Objectives: []float64{math.NaN()}, Violations: []float64{0}}, false},
	} {
		if got := Feasible(c.e.Violation()); got != c.want {
			t.Errorf("%+v: feasible %v, want %v", c.e, got, c.want)
		}
	}
	if !math.IsNaN(math.NaN()) || Feasible(math.NaN()) {
		t.Fatal("a NaN violation is feasible")
	}
	e := Evaluation{Objectives: []float64{1, 2}, Violations: []float64{0, 0.02, 0.5}}
	if e.Missed() != 1 {
		t.Fatalf("missed %d, want the second constraint", e.Missed())
	}
}

// An infinite or absurd shortfall leaves the score finite (a sampler
// cannot store an infinite one) and the trial last.
func TestScoreStaysFinite(t *testing.T) {
	e := Evaluation{Objectives: []float64{1}, Ratios: []float64{1}, Violations: []float64{math.Inf(1), math.MaxFloat64}}
	if v, s := e.Violation(), e.Score(0); v != 2*MaxShortfall || math.IsInf(s, 0) || s < 1e9 {
		t.Fatalf("violation %v, score %v: want 2 × MaxShortfall and a finite score above 1e9", v, s)
	}
}
