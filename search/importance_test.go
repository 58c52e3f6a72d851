package search

import (
	"math"
	"math/rand"
	"testing"
)

func importanceSpace() []Param {
	return []Param{
		{Name: "driver", Kind: Float, Low: 0, High: 1},
		{Name: "noise", Kind: Float, Low: 0, High: 1},
		{Name: "lr", Kind: LogFloat, Low: 1e-3, High: 1},
		{Name: "mode", Kind: Categorical, Choices: []string{"a", "b", "c"}},
		{Name: "n", Kind: Int, Low: 1, High: 3},
	}
}

func randomTrials(rng *rand.Rand, n int, score func([]float64) float64) ([][]float64, []float64) {
	space := importanceSpace()
	values := make([][]float64, n)
	scores := make([]float64, n)
	for i := range values {
		values[i] = drawUniformVector(space, rng)
		scores[i] = score(values[i])
	}
	return values, scores
}

func TestImportanceFindsTheDrivingParameter(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	values, scores := randomTrials(rng, 40, func(v []float64) float64 {
		return 10*sq(v[0]-0.7) + 0.1*rng.Float64()
	})
	got := Importance(vectors(values), scores, importanceSpace())
	t.Logf("importance %.3f", got)
	if got[0] < 0.7 {
		t.Fatalf("driver importance %.3f, want the bulk", got[0])
	}
	sum := 0.0
	for _, g := range got {
		sum += g
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Fatalf("importances sum to %v", sum)
	}

	// A categorical driver with huge penalty outliers: ranks keep it robust.
	values, scores = randomTrials(rng, 40, func(v []float64) float64 {
		s := []float64{1, 2, 3}[int(v[3])] + 0.5*rng.Float64()
		if rng.Intn(10) == 0 {
			s += 1000 // an infeasible trial
		}
		return s
	})
	got = Importance(vectors(values), scores, importanceSpace())
	t.Logf("importance %.3f", got)
	if got[3] < 0.6 {
		t.Fatalf("mode importance %.3f, want the bulk", got[3])
	}
}

func TestImportanceWithoutSignal(t *testing.T) {
	space := importanceSpace()
	if got := Importance(nil, nil, space); len(got) != len(space) || got[0] != 0 {
		t.Fatalf("no trials: %v", got)
	}
	rng := rand.New(rand.NewSource(4))
	values, scores := randomTrials(rng, 40, func([]float64) float64 { return 5 })
	for _, g := range Importance(vectors(values), scores, space) {
		if g != 0 {
			t.Fatalf("constant scores gave importance %v", g)
		}
	}
}

// vectors is rows of importanceSpace's values as Values.
func vectors(rows [][]float64) [][]Value {
	out := make([][]Value, len(rows))
	for i, r := range rows {
		out[i] = vector(importanceSpace(), r...)
	}
	return out
}
