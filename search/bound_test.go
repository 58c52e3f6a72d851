package search

import (
	"math"
	"testing"
)

// A space of a cluster size n (cost n/10 of the baseline's, known before
// a run; feasible from n = 4 on) and one strategy axis. Under KnownRatio
// no trial asked after a feasible one costs as much as the cheapest
// feasible trial so far, and the search finds the cheapest feasible size;
// without it, TPE spends trials on dearer sizes.
func TestKnownRatioSkipsPointsThatCannotWin(t *testing.T) {
	space := []Param{{Name: "n", Kind: Int, Low: 1, High: 10}, {Name: "x", Kind: Float, Low: 0, High: 1}}
	known := func(v []Value) (float64, bool) { return v[0].Number / 10, true }
	run := func(opts Options) (dearer int, cheapest float64) {
		s := newTestSampler(t, openStorage(t), "bound", space, MethodTPE, 3, opts)
		best := math.Inf(1)
		for number := 0; number < 30; number++ {
			id, v, err := s.Ask(number)
			if err != nil {
				t.Fatal(err)
			}
			ratio, _ := known(v)
			if ratio >= best {
				dearer++
			}
			violation := max(0, (4-v[0].Number)/4)
			if err := s.TellObjectives(id, Judge([]float64{ratio}, []float64{1}, []bool{true}, []float64{violation}, 0)); err != nil {
				t.Fatal(err)
			}
			if Feasible(violation) {
				best = min(best, ratio)
			}
		}
		return dearer, best
	}
	opts := Options{KnownRatio: known}
	dearer, cheapest := run(opts)
	if dearer != 0 || cheapest != 0.4 {
		t.Errorf("with KnownRatio: %d trials no cheaper than the best feasible so far (want 0), cheapest feasible %v (want 0.4)", dearer, cheapest)
	}
	if unbounded, _ := run(Options{}); unbounded < 5 {
		t.Errorf("without KnownRatio: %d trials no cheaper than the best feasible so far; want at least 5 (the bound should matter)", unbounded)
	}
}
