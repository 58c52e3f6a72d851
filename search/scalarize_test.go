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
		{"NaN primary", math.NaN(), 1, true, nil, 0, RatioCap},
		{"zero vs zero", 0, 0, true, nil, 0, 1},
	}
	for _, c := range cases {
		got := Scalarize(c.primary, c.baseline, c.minimize, c.violations, c.weight)
		if math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: Scalarize = %v, want %v", c.name, got, c.want)
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
		worstFeasible = math.Max(worstFeasible, Scalarize(primary(), 1, minimize, []float64{0, -rng.Float64()}, 0))
		shortfall := ClearlyInfeasible * (1 + 1e-9 + rng.Float64())
		split := rng.Float64()
		bestInfeasible = math.Min(bestInfeasible, Scalarize(primary(), 1, minimize, []float64{shortfall * split, shortfall * (1 - split)}, 0))
	}
	// The extremes: the worst possible feasible point and the best possible
	// clearly infeasible one.
	worstFeasible = math.Max(worstFeasible, Scalarize(math.Inf(1), 1, true, nil, 0))
	bestInfeasible = math.Min(bestInfeasible, Scalarize(0, 1, true, []float64{ClearlyInfeasible * (1 + 1e-9)}, 0))
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
