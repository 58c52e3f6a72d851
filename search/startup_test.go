package search

import (
	"testing"

	"github.com/c-bata/goptuna"
)

// Trial 0 of a cold model-based study is Options.Start; the other startup
// trials are a Latin hypercube: each of a parameter's StartupTrials strata
// holds one of the trials 0 … StartupTrials−1, so an int axis with as many
// values as strata takes every value but trial 0's stratum's once.
func TestStartupIsTheStartThenALatinHypercube(t *testing.T) {
	space := Space{
		{Name: "mode", Kind: Categorical, Choices: []string{"a", "b", "c", "d", "e", "f"}},
		{Name: "n", Kind: Int, Low: 1, High: 6},
		{Name: "x", Kind: Float, Low: 0, High: 6},
	}
	for _, method := range []Method{MethodTPE, MethodGP} {
		for seed := int64(1); seed <= 4; seed++ {
			start := space.values([]float64{2, 6, 0.5})
			s := newTestSampler(t, goptuna.NewInMemoryStorage(), "lhs", space, method, seed, Options{StartupTrials: 6, Start: start})
			xs := runStudy(t, s, 0, 6, func([]float64) float64 { return 1 })
			if xs[0][0] != 2 || xs[0][1] != 6 || xs[0][2] != 0.5 {
				t.Fatalf("%s seed %d: trial 0 is %v, want the start [2 6 0.5]", method, seed, xs[0])
			}
			// Trials 1-5 fill five distinct strata of each axis.
			for d := range space {
				seen := map[int]bool{}
				for _, x := range xs[1:] {
					stratum := int(x[d])
					if d == 1 {
						stratum = int(x[d]) - 1
					}
					if seen[stratum] {
						t.Fatalf("%s seed %d: axis %s: two startup trials in stratum %d: %v", method, seed, space[d].Name, stratum, xs)
					}
					seen[stratum] = true
				}
			}
		}
	}
}
