package traffic

import (
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/gonum/stat/distuv"

	"optimize/simcore/workload"
)

// LengthModels are the length distributions a fit tries, in the order
// a tie is broken.
var LengthModels = []string{"empirical", "lognormal", "gaussian", "exponential"}

// Candidate is one length model fitted to a sample, and its
// Kolmogorov–Smirnov distance to the sample.
type Candidate struct {
	Model        string                `json:"model"`
	KS           float64               `json:"ks"`
	Distribution workload.Distribution `json:"-"`
}

// fitLengths fits every model of LengthModels to xs (token counts ≥ 1)
// and returns them best first; bins is the empirical model's number of
// quantile bins.
func fitLengths(xs []int, bins int) []Candidate {
	s := sortedFloats(xs)
	for i := range s {
		s[i] = max(1, s[i])
	}
	var out []Candidate
	for _, model := range LengthModels {
		d, cdf := lengthModel(model, s, bins)
		out = append(out, Candidate{Model: model, KS: ksToModel(s, cdf), Distribution: d})
	}
	slices.SortStableFunc(out, func(a, b Candidate) int {
		switch {
		case a.KS < b.KS:
			return -1
		case a.KS > b.KS:
			return 1
		}
		return 0
	})
	return out
}

// lengthModel fits model to an ascending sample; cdf(y) is the
// probability that the generator draws a length ≤ y (it rounds a
// continuous draw to the nearest whole token, at least 1).
func lengthModel(model string, s []float64, bins int) (workload.Distribution, func(float64) float64) {
	mean, sd := meanSD(s)
	switch model {
	case "exponential":
		e := distuv.Exponential{Rate: 1 / mean}
		return workload.Distribution{Type: "exponential", Params: map[string]float64{"mean": round3(mean)}}, roundedCDF(e.CDF)
	case "gaussian":
		lo, hi := s[0], s[len(s)-1]
		n := distuv.Normal{Mu: mean, Sigma: max(sd, 1e-9)}
		cdf := func(y float64) float64 {
			switch {
			case y < lo:
				return 0
			case y >= hi:
				return 1
			}
			return n.CDF(y + 0.5)
		}
		return workload.Distribution{Type: "gaussian", Params: map[string]float64{"mean": round3(mean), "std_dev": round3(sd), "min": lo, "max": hi}}, cdf
	case "lognormal":
		logs := make([]float64, len(s))
		for i, x := range s {
			logs[i] = math.Log(x)
		}
		mu, sigma := meanSD(logs)
		l := distuv.LogNormal{Mu: mu, Sigma: max(sigma, 1e-9)}
		// pareto_lognormal with no Pareto share is a lognormal (alpha and
		// xm must still be > 0).
		return workload.Distribution{Type: "pareto_lognormal", Params: map[string]float64{"alpha": 1, "xm": 1, "mu": round6(mu), "sigma": round6(sigma), "mix_weight": 0}}, roundedCDF(l.CDF)
	}
	return empirical(s, bins)
}

// empirical is the sample's quantiles at the middles of bins equal
// bins of probability, each value given the probability of its bins.
func empirical(s []float64, bins int) (workload.Distribution, func(float64) float64) {
	pdf := map[int]float64{}
	for j := range bins {
		v := max(1, int(math.Round(Quantile(s, (float64(j)+0.5)/float64(bins)))))
		pdf[v] += 1 / float64(bins)
	}
	values := make([]int, 0, len(pdf))
	params := make(map[string]float64, len(pdf))
	for v, p := range pdf {
		values = append(values, v)
		params[strconv.Itoa(v)] = round6(p)
	}
	slices.Sort(values)
	cdf := func(y float64) float64 {
		c := 0.0
		for _, v := range values {
			if float64(v) > y {
				break
			}
			c += pdf[v]
		}
		return min(c, 1)
	}
	return workload.Distribution{Type: "empirical", Params: params}, cdf
}

// roundedCDF is the CDF of a continuous draw rounded to the nearest whole
// token, at least 1: P(round(X) ≤ y) = F(y + ½) for y ≥ 1.
func roundedCDF(f func(float64) float64) func(float64) float64 {
	return func(y float64) float64 {
		if y < 1 {
			return 0
		}
		return f(y + 0.5)
	}
}

// ksToModel is the Kolmogorov–Smirnov distance sup_y |F_sample(y) −
// cdf(y)| over whole token counts y, of an ascending whole-number sample:
// between two sample values the sample's CDF is flat, so the sup is at a
// sample value or just below it.
func ksToModel(s []float64, cdf func(float64) float64) float64 {
	n := float64(len(s))
	d := 0.0
	below := 0.0 // sample CDF just below the current value
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] == s[i] {
			j++
		}
		at := float64(j) / n
		d = max(d, math.Abs(below-cdf(s[i]-1)), math.Abs(at-cdf(s[i])))
		below = at
		i = j
	}
	return d
}

// KSTwoSample is the Kolmogorov–Smirnov distance between two samples'
// empirical CDFs (both ascending).
func KSTwoSample(a, b []float64) float64 {
	i, j, d := 0, 0, 0.0
	for i < len(a) && j < len(b) {
		x := min(a[i], b[j])
		for i < len(a) && a[i] <= x {
			i++
		}
		for j < len(b) && b[j] <= x {
			j++
		}
		d = max(d, math.Abs(float64(i)/float64(len(a))-float64(j)/float64(len(b))))
	}
	return d
}

func meanSD(s []float64) (float64, float64) {
	var sum, sq float64
	for _, x := range s {
		sum += x
	}
	mean := sum / float64(len(s))
	for _, x := range s {
		sq += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sq / float64(len(s)))
}

func round3(x float64) float64 { return math.Round(x*1e3) / 1e3 }
func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }
