package search

import (
	"math"
	"math/rand"
	"sort"
	"testing"
)

// Optuna's defaults, as facts: γ(n) = min(⌈n/10⌉, 25); of m weights the
// newest 25 are 1 and the older ones ramp up linearly from 1/m.
func TestTPEGammaAndWeights(t *testing.T) {
	for n, want := range map[int]int{1: 1, 10: 1, 11: 2, 100: 10, 250: 25, 10000: 25} {
		if got := tpeGamma(n); got != want {
			t.Errorf("γ(%d) = %d, want %d", n, got, want)
		}
	}
	if w := tpeWeights(20); w[0] != 1 || w[19] != 1 {
		t.Errorf("20 weights: %v, want all 1", w)
	}
	w := tpeWeights(30)
	if math.Abs(w[0]-1.0/30) > 1e-12 || w[4] != 1 || w[5] != 1 || w[29] != 1 {
		t.Errorf("30 weights start %v, want a ramp from 1/30 to 1 over the oldest 5, then 1", w[:6])
	}
	for i := 1; i < 5; i++ {
		if w[i] <= w[i-1] {
			t.Errorf("weights do not rise with recency: %v", w[:5])
		}
	}
}

// The truncated mixture is a density on [low, high]: it integrates to 1.
func TestMixtureIntegratesToOne(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, n := range []int{0, 1, 7, 60} {
		obs := make([]observation, n)
		for i := range obs {
			obs[i] = observation{x: -0.5 + rng.Float64()*21, score: rng.Float64()}
		}
		m := newMixture(obs, -0.5, 20.5)
		const steps = 20000
		sum := 0.0
		for k := 0; k < steps; k++ {
			x := -0.5 + (float64(k)+0.5)*21/steps
			sum += math.Exp(m.logPDF(x)) * 21 / steps
		}
		if math.Abs(sum-1) > 0.01 {
			t.Errorf("%d observations: the density integrates to %.4f, want 1", n, sum)
		}
	}
}

// Proposals stay whole numbers inside the range and gather where the
// scores are low: with the score |x − 700| on 0..1000 and 60 uniform
// observations, the median proposal over 60 trial streams lies within 100
// of 700, and at most a fifth of them are further than 250 from it.
func TestProposeNumericFollowsTheScores(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	obs := make([]observation, 60)
	for i := range obs {
		x := float64(rng.Intn(1001))
		obs[i] = observation{x: x, score: math.Abs(x - 700)}
	}
	var got []float64
	far := 0
	for seed := int64(0); seed < 60; seed++ {
		x := proposeNumeric(obs, 0, 1000, rand.New(rand.NewSource(seed)))
		if x != math.Round(x) || x < 0 || x > 1000 {
			t.Fatalf("proposal %v: not a whole number in 0..1000", x)
		}
		if math.Abs(x-700) > 250 {
			far++
		}
		got = append(got, x)
	}
	sort.Float64s(got)
	if med := got[len(got)/2]; math.Abs(med-700) > 100 || far > 12 {
		t.Fatalf("median proposal %v (want within 100 of 700), %d of 60 further than 250", med, far)
	}
}

// A categorical axis whose choice 2 always scores best is proposed as 2
// most of the time (at least 45 of 60 trial streams).
func TestProposeCategoricalFollowsTheScores(t *testing.T) {
	var obs []observation
	for i := 0; i < 40; i++ {
		c := float64(i % 4)
		score := 1.0 + float64(i%7)/10
		if c == 2 {
			score = 0.1
		}
		obs = append(obs, observation{x: c, score: score})
	}
	twos := 0
	for seed := int64(0); seed < 60; seed++ {
		if proposeCategorical(obs, 4, rand.New(rand.NewSource(seed))) == 2 {
			twos++
		}
	}
	if twos < 45 {
		t.Fatalf("choice 2 proposed %d of 60 times, want at least 45", twos)
	}
}
