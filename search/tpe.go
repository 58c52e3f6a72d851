package search

import (
	"cmp"
	"math"
	"math/rand"
	"slices"
	"sort"
)

// The Tree-structured Parzen Estimator (Bergstra et al., 2011), univariate:
// each parameter is modelled on its own from the trials where it was
// active. The trials are split by score into the best γ(n) ("below") and
// the rest ("above"); each group becomes a mixture of truncated Gaussians
// (one per trial, plus a wide prior); candidates are drawn from the below
// mixture and the one with the highest log l(x) − log g(x) wins. The
// defaults are Optuna's: γ(n) = min(⌈0.1·n⌉, 25), 24 candidates, prior
// weight 1, bandwidths clipped below at range/min(100, 1+m), and weights
// that ramp linearly from 1/m up to 1 for all but the newest 25 of m trials.
//
// It replaces goptuna's TPE, whose cost per proposal grows with the
// history through per-call allocations (2.8 ms at 100 trials, 25 ms at
// 1,000 for slo-cascade's space), whose continuous density is miscomputed
// (see floatSteps) and which draws from the global math/rand. Here every
// candidate is scored in flat arrays and randomness comes from the
// trial's own stream.
const (
	tpeCandidates  = 24
	tpeGammaCap    = 25
	tpeFlatNewest  = 25
	tpePriorWeight = 1.0
	tpeClipDivisor = 100
)

// observation is one trial's value of a parameter (stored representation)
// and its score, in trial order.
type observation struct {
	x, score float64
}

// tpeGamma is the size of the below group among n observations.
func tpeGamma(n int) int {
	return min(int(math.Ceil(0.1*float64(n))), tpeGammaCap)
}

// tpeWeights is the weight of each of m observations in trial order: older
// ones count less, the newest tpeFlatNewest fully.
func tpeWeights(m int) []float64 {
	w := make([]float64, m)
	if m <= tpeFlatNewest {
		for i := range w {
			w[i] = 1
		}
		return w
	}
	ramp := m - tpeFlatNewest
	for i := 0; i < ramp; i++ {
		if ramp == 1 {
			w[i] = 1.0 / float64(m)
		} else {
			w[i] = 1.0/float64(m) + (1-1.0/float64(m))*float64(i)/float64(ramp-1)
		}
	}
	for i := ramp; i < m; i++ {
		w[i] = 1
	}
	return w
}

// split returns the below and above groups, each in trial order: below
// holds the tpeGamma(n) lowest scores, ties going to the older trial.
func split(obs []observation) (below, above []observation) {
	nb := tpeGamma(len(obs))
	best := lowest(len(obs), nb, func(i int) float64 { return obs[i].score })
	inBelow := make([]bool, len(obs))
	for _, i := range best {
		inBelow[i] = true
	}
	below = make([]observation, 0, nb)
	above = make([]observation, 0, len(obs)-nb)
	for i, o := range obs {
		if inBelow[i] {
			below = append(below, o)
		} else {
			above = append(above, o)
		}
	}
	return below, above
}

// lowest returns the positions of the k lowest of n scores, ties going to
// the earlier position. k is small (≤ 25 here): insertion into a short
// sorted list costs O(n·k) at worst and about n comparisons in practice,
// where sorting everything would cost O(n log n).
func lowest(n, k int, score func(int) float64) []int {
	best := make([]int, 0, k+1)
	after := func(i, j int) bool { // i ranks after j
		return score(i) > score(j) || (score(i) == score(j) && i > j)
	}
	for i := 0; i < n; i++ {
		if len(best) == k && !after(best[k-1], i) {
			continue
		}
		at := len(best)
		best = append(best, i)
		for at > 0 && after(best[at-1], i) {
			best[at] = best[at-1]
			at--
		}
		best[at] = i
		if len(best) > k {
			best = best[:k]
		}
	}
	return best
}

// mixture is a weighted sum of Gaussians truncated to [low, high], kept in
// flat arrays with each component's log normaliser precomputed.
type mixture struct {
	low, high  float64
	mu, invSig []float64
	logC       []float64 // log(w / (σ·Z·√(2π))), Z the mass inside [low, high]
	cumW       []float64 // cumulative normalised weights, for drawing
	sigma      []float64
}

// newMixture builds the Parzen estimator of obs (with their weights) plus
// the prior, a component centred on the range as wide as the range.
func newMixture(obs []observation, low, high float64) *mixture {
	span := high - low
	w := tpeWeights(len(obs))
	n := len(obs) + 1
	type comp struct {
		mu, w float64
		at    int // position in obs; the prior's is len(obs)
	}
	comps := make([]comp, 0, n)
	for i, o := range obs {
		comps = append(comps, comp{mu: o.x, w: w[i], at: i})
	}
	prior := len(obs)
	comps = append(comps, comp{mu: (low + high) / 2, w: tpePriorWeight, at: prior})
	// Sorted by centre, ties by position, so that the mixture and its draws
	// do not depend on the sort algorithm.
	slices.SortFunc(comps, func(a, b comp) int {
		if c := cmp.Compare(a.mu, b.mu); c != 0 {
			return c
		}
		return cmp.Compare(a.at, b.at)
	})
	// Bandwidth: the larger gap to a sorted neighbour (the range's ends
	// stand beyond the extremes), clipped to [span/min(100, 1+m), span].
	minSig := span / math.Min(tpeClipDivisor, float64(1+len(obs)))
	m := &mixture{low: low, high: high, mu: make([]float64, n), invSig: make([]float64, n),
		logC: make([]float64, n), cumW: make([]float64, n), sigma: make([]float64, n)}
	total := 0.0
	for _, c := range comps {
		total += c.w
	}
	cum := 0.0
	for k, c := range comps {
		left, right := low, high
		if k > 0 {
			left = comps[k-1].mu
		}
		if k < n-1 {
			right = comps[k+1].mu
		}
		s := math.Min(math.Max(math.Max(c.mu-left, right-c.mu), minSig), span)
		if c.at == prior {
			s = span
		}
		m.mu[k], m.sigma[k], m.invSig[k] = c.mu, s, 1/s
		m.logC[k] = math.Log(c.w / (total * s * truncatedMass(c.mu, s, low, high) * math.Sqrt(2*math.Pi)))
		cum += c.w / total
		m.cumW[k] = cum
	}
	return m
}

// truncatedMass is the share of N(mu, s²) inside [low, high]; a bound more
// than 8 bandwidths away cuts off under 10⁻¹⁵, which is left out.
func truncatedMass(mu, s, low, high float64) float64 {
	z := 1.0
	if hi := (high - mu) / s; hi < 8 {
		z -= normCDF(-hi)
	}
	if lo := (mu - low) / s; lo < 8 {
		z -= normCDF(-lo)
	}
	return math.Max(z, 1e-300)
}

// logPDF is the mixture's log density at x: log-sum-exp over the
// components, in one pass that rescales the sum whenever a larger term
// appears.
func (m *mixture) logPDF(x float64) float64 {
	top, sum := math.Inf(-1), 0.0
	invSig, logC := m.invSig[:len(m.mu)], m.logC[:len(m.mu)]
	for i, mu := range m.mu {
		d := (x - mu) * invSig[i]
		t := logC[i] - 0.5*d*d
		switch {
		case t > top:
			sum = sum*math.Exp(top-t) + 1
			top = t
		case t > top-negligibleLog:
			sum += math.Exp(t - top)
		}
	}
	return top + math.Log(sum)
}

// negligibleLog: a term below the largest by this much adds under e^−40
// (4·10⁻¹⁸) relative to it, beyond float64's precision for the sum, so its
// exponential is skipped. Most components lie many bandwidths from any one
// candidate once the history is long.
const negligibleLog = 40

// draw samples the mixture: a component by weight, then its Gaussian
// until the draw falls inside the range (a few tries; the range's nearest
// end otherwise, which a component centred inside reaches rarely).
func (m *mixture) draw(rng *rand.Rand) float64 {
	u := rng.Float64()
	i := sort.SearchFloat64s(m.cumW, u)
	i = min(i, len(m.mu)-1)
	for try := 0; try < 32; try++ {
		x := m.mu[i] + m.sigma[i]*rng.NormFloat64()
		if x >= m.low && x <= m.high {
			return x
		}
	}
	return math.Min(math.Max(m.mu[i], m.low), m.high)
}

// proposeNumeric returns the next value of a whole-number axis lo..hi (the
// stored representation of ints and of the float grid): the mixtures live
// on [lo−½, hi+½] and the winner is rounded.
func proposeNumeric(obs []observation, lo, hi float64, rng *rand.Rand) float64 {
	low, high := lo-0.5, hi+0.5
	below, above := split(obs)
	l, g := newMixture(below, low, high), newMixture(above, low, high)
	best, bestGain := 0.0, math.Inf(-1)
	for c := 0; c < tpeCandidates; c++ {
		x := l.draw(rng)
		if gain := l.logPDF(x) - g.logPDF(x); gain > bestGain {
			best, bestGain = x, gain
		}
	}
	return math.Min(math.Max(math.Round(best), lo), hi)
}

// proposeCategorical returns the next choice index among k: the weighted
// frequencies of each group plus the prior spread evenly over the choices.
func proposeCategorical(obs []observation, k int, rng *rand.Rand) float64 {
	below, above := split(obs)
	pl, pg := categoricalProbs(below, k), categoricalProbs(above, k)
	cum := make([]float64, k)
	acc := 0.0
	for i, p := range pl {
		acc += p
		cum[i] = acc
	}
	best, bestGain := 0, math.Inf(-1)
	for c := 0; c < tpeCandidates; c++ {
		i := min(sort.SearchFloat64s(cum, rng.Float64()*acc), k-1)
		if gain := math.Log(pl[i]) - math.Log(pg[i]); gain > bestGain {
			best, bestGain = i, gain
		}
	}
	return float64(best)
}

func categoricalProbs(obs []observation, k int) []float64 {
	p := make([]float64, k)
	for i := range p {
		p[i] = tpePriorWeight / float64(k)
	}
	for i, w := range tpeWeights(len(obs)) {
		if c := int(obs[i].x); c >= 0 && c < k {
			p[c] += w
		}
	}
	total := 0.0
	for _, v := range p {
		total += v
	}
	for i := range p {
		p[i] /= total
	}
	return p
}

func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }
