package search

import (
	"math"
	"math/rand"
	"sort"
	"testing"

	"github.com/c-bata/goptuna"
)

// A sanity check of the wiring, not the acceptance study: on a noisy 5-D
// bowl (three floats, an int, a log-float; optimum off-centre) TPE's
// incumbent after 40 trials should be clearly better than random search's
// on the median over a few seeds. goptuna's in-memory storage keeps it
// cheap; the SQLite path is covered by the other tests.
func TestTPEBeatsRandomOnNoisyBowlAt40Trials(t *testing.T) {
	const seeds = 8
	var random, tpe []float64
	wins := 0
	for seed := int64(1); seed <= seeds; seed++ {
		r := bestTrueValueAfter40(t, MethodRandom, seed)
		p := bestTrueValueAfter40(t, MethodTPE, seed)
		random, tpe = append(random, r), append(tpe, p)
		if p < r {
			wins++
		}
	}
	t.Logf("median true value of the incumbent: random %.2f, tpe %.2f; tpe better on %d/%d seeds",
		median(random), median(tpe), wins, seeds)
	if median(tpe) >= 0.8*median(random) || wins < seeds/2 {
		t.Fatal("TPE is not clearly better than random search")
	}
}

func bowlSpace() []Param {
	return []Param{
		{Name: "a", Kind: Float, Low: -5, High: 5},
		{Name: "b", Kind: Float, Low: -5, High: 5},
		{Name: "c", Kind: Float, Low: -5, High: 5},
		{Name: "n", Kind: Int, Low: -5, High: 5},
		{Name: "lr", Kind: LogFloat, Low: 1e-2, High: 1e2},
	}
}

func bowl(v []float64) float64 {
	lr := math.Log10(v[4]) - 0.5
	return sq(v[0]-1.5) + sq(v[1]+2) + sq(v[2]-0.5) + sq(v[3]-3) + 4*lr*lr
}

func sq(x float64) float64 { return x * x }

// bestTrueValueAfter40 returns the noise-free value of the trial with the
// best NOISY observation, as a user picking the incumbent would.
func bestTrueValueAfter40(t *testing.T, method Method, seed int64) float64 {
	s := newTestSampler(t, goptuna.NewInMemoryStorage(), "bowl", bowlSpace(), method, seed, Options{})
	noise := rand.New(rand.NewSource(seed))
	bestObserved, incumbent := math.Inf(1), 0.0
	for number := 0; number < 40; number++ {
		id, values, err := s.Ask(number)
		if err != nil {
			t.Fatal(err)
		}
		truth := bowl(s.space.Encode(values))
		observed := truth + noise.NormFloat64()
		if err := s.Tell(id, observed); err != nil {
			t.Fatal(err)
		}
		if observed < bestObserved {
			bestObserved, incumbent = observed, truth
		}
	}
	return incumbent
}

func median(xs []float64) float64 {
	sorted := append([]float64(nil), xs...)
	sort.Float64s(sorted)
	n := len(sorted)
	return (sorted[(n-1)/2] + sorted[n/2]) / 2
}
