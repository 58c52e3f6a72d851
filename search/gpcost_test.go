package search

import (
	"math"
	"testing"

	"github.com/c-bata/goptuna"
)

// capacitySpace is a small capacity study: a GPU (a: price 1, speed 1;
// b: price 0.55, speed 0.5), an instance count per GPU (1-10) and a
// strategy setting x that lifts each instance's throughput from 0.6 to
// 1.1. Cost is known before a run: count × price over the start's 4 × a.
// The load needs capacity 2.4, so the start (4 × a at x 0.2: 2.8) is
// feasible and every cheaper cluster needs x tuned: 3 × a from x 0.4
// (ratio 0.75), 5 × b from x 0.72 (the cheapest, 0.6875).
func capacitySpace() []Param {
	return []Param{
		{Name: "gpu", Kind: Categorical, Choices: []string{"a", "b"}},
		{Name: "n_a", Kind: Int, Low: 1, High: 10, When: &When{Param: "gpu", Choices: []string{"a"}}},
		{Name: "n_b", Kind: Int, Low: 1, High: 10, When: &When{Param: "gpu", Choices: []string{"b"}}},
		{Name: "x", Kind: Float, Low: 0, High: 1},
	}
}

// capacityRun is one point's known ratio and constraint shortfall.
func capacityRun(v []Value) (ratio, violation float64) {
	price, speed, n := 1.0, 1.0, v[1].Number
	if v[0].Choice == "b" {
		price, speed, n = 0.55, 0.5, v[2].Number
	}
	capacity := n * speed * (0.6 + 0.5*v[3].Number)
	return n * price / 4, math.Max(0, 1-capacity/2.4)
}

// cheapestFeasibleIn runs a 15-trial gp study on the capacity space and
// returns the cheapest feasible ratio it found.
func cheapestFeasibleIn(t *testing.T, seed int64) float64 {
	space := capacitySpace()
	known := func(v []Value) (float64, bool) { r, _ := capacityRun(v); return r, true }
	start := []Value{{Choice: "a"}, {Number: 4}, Inactive(), {Number: 0.2}}
	s := newTestSampler(t, goptuna.NewInMemoryStorage(), "capacity", space, MethodGP, seed, Options{StartupTrials: 5, KnownRatio: known, Start: start})
	best := math.Inf(1)
	for number := range 15 {
		id, v, err := s.Ask(number)
		if err != nil {
			t.Fatal(err)
		}
		ratio, violation := capacityRun(v)
		if err := s.TellObjectives(id, Judge([]float64{ratio}, []float64{1}, []bool{true}, []float64{violation}, 0)); err != nil {
			t.Fatal(err)
		}
		if Feasible(violation) {
			best = min(best, ratio)
		}
	}
	return best
}

// With the cost known, gp's acquisition is the cheapest feasible trial's
// saving times the chance that a point meets the constraint, and it finds
// the cheapest cluster (5 × b, tuned) in every one of sampler seeds 1-10.
// The expected improvement on the penalised score, which valued a
// cluster just short of the load at its tiny penalty and a far cheaper
// one at its whole saving, found it in 3 of 10 (seeds 1, 5, 8; seed 3
// ended at 0.9625) and took ten times as long, redrawing proposals that
// could not beat the cheapest feasible trial.
func TestGPFindsTheCheapestFeasibleCluster(t *testing.T) {
	missed := 0
	for seed := int64(1); seed <= 10; seed++ {
		best := cheapestFeasibleIn(t, seed)
		if best != 0.6875 {
			t.Logf("sampler seed %d: cheapest feasible ratio %.4f, not 5 × b's 0.6875", seed, best)
			missed++
		}
	}
	if missed > 0 {
		t.Errorf("%d of 10 sampler seeds miss the cheapest feasible cluster (5 × b, ratio 0.6875) in 15 trials; want none", missed)
	}
}
