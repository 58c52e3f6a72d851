package workload

import (
	"math"
	"math/rand"
	"sort"
	"strconv"
	"strings"
)

// The samplers below reproduce BLIS's sim/workload/arrival.go and
// distribution.go draw for draw (same math/rand calls in the same order,
// same rounding, truncation and minimums), so generated workloads match
// BLIS's for the same seed. They are concrete structs switched on a kind,
// not interfaces, to keep the per-request path free of dynamic dispatch.

type arrivalKind uint8

const (
	arrivalPoisson arrivalKind = iota
	arrivalGamma
	arrivalWeibull
	arrivalConstant
)

// arrivalSampler draws inter-arrival times in µs.
type arrivalSampler struct {
	kind         arrivalKind
	ratePerUs    float64 // poisson
	shape, scale float64 // gamma, weibull
	constantIAT  int64   // constant
}

// minRatePerUs is BLIS's floor against division by a vanishing rate.
const minRatePerUs = 1e-15

func newArrivalSampler(a Arrival, ratePerUs float64) arrivalSampler {
	if ratePerUs < minRatePerUs {
		ratePerUs = minRatePerUs
	}
	cv := 1.0
	if a.CV != nil && *a.CV > 0 {
		cv = *a.CV
	}
	mean := 1.0 / ratePerUs
	switch a.Process {
	case "constant":
		return arrivalSampler{kind: arrivalConstant, constantIAT: toIAT(1.0 / ratePerUs)}
	case "gamma":
		// shape = 1/CV², scale = mean·CV²; CV > 10 (where BLIS would fall
		// back to Poisson) is rejected by validation.
		return arrivalSampler{kind: arrivalGamma, shape: 1.0 / (cv * cv), scale: mean * cv * cv}
	case "weibull":
		k := weibullShapeFromCV(cv)
		return arrivalSampler{kind: arrivalWeibull, shape: k, scale: mean / math.Gamma(1.0+1.0/k)}
	default:
		return arrivalSampler{kind: arrivalPoisson, ratePerUs: ratePerUs}
	}
}

// next returns the next inter-arrival time: at least 1 µs, math.MaxInt64
// when the sample does not fit (the stream then ends at any horizon).
func (s *arrivalSampler) next(rng *rand.Rand) int64 {
	switch s.kind {
	case arrivalConstant:
		return s.constantIAT
	case arrivalGamma:
		return toIAT(gammaSample(rng, s.shape, s.scale))
	case arrivalWeibull:
		u := rng.Float64()
		if u == 0 {
			u = math.SmallestNonzeroFloat64
		}
		return toIAT(s.scale * math.Pow(-math.Log(u), 1.0/s.shape))
	default:
		return toIAT(rng.ExpFloat64() / s.ratePerUs)
	}
}

// toIAT truncates a sampled gap to whole µs, minimum 1, as BLIS does.
func toIAT(x float64) int64 {
	if !(x < math.MaxInt64/2) {
		if math.IsNaN(x) {
			return 1
		}
		return math.MaxInt64
	}
	if iat := int64(x); iat >= 1 {
		return iat
	}
	return 1
}

// gammaSample draws Gamma(shape, scale) by Marsaglia–Tsang; for shape < 1 it
// draws the boost uniform first and samples Gamma(shape+1), exactly in BLIS's
// (recursive) order.
func gammaSample(rng *rand.Rand, shape, scale float64) float64 {
	boost := 1.0
	if shape < 1.0 {
		u := rng.Float64()
		boost = math.Pow(u, 1.0/shape)
		shape += 1.0
	}
	d := shape - 1.0/3.0
	c := 1.0 / math.Sqrt(9.0*d)
	for {
		var x, v float64
		for {
			x = rng.NormFloat64()
			v = 1.0 + c*x
			if v > 0 {
				break
			}
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1.0-0.0331*(x*x)*(x*x) || math.Log(u) < 0.5*x*x+d*(1.0-v+math.Log(v)) {
			return d * v * scale * boost
		}
	}
}

// weibullShapeFromCV finds k with CV(k) = target by BLIS's bisection on
// [0.1, 100] (tolerance 0.001, at most 100 steps).
func weibullShapeFromCV(target float64) float64 {
	lo, hi := 0.1, 100.0
	for i := 0; i < 100; i++ {
		mid := (lo + hi) / 2.0
		cv := weibullCV(mid)
		if math.Abs(cv-target) < 0.001 {
			return mid
		}
		if cv > target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2.0
}

func weibullCV(k float64) float64 {
	g1 := math.Gamma(1.0 + 1.0/k)
	g2 := math.Gamma(1.0 + 2.0/k)
	return math.Sqrt(g2/(g1*g1) - 1.0)
}

type lengthKind uint8

const (
	lengthGaussian lengthKind = iota
	lengthExponential
	lengthParetoLognormal
	lengthConstant
	lengthEmpirical
)

// lengthSampler draws token counts (>= 1, at most maxTokenCount).
type lengthSampler struct {
	kind             lengthKind
	mean, stdDev     float64 // gaussian, exponential
	min, max         int     // gaussian
	alpha, xm, mu    float64 // pareto_lognormal
	sigma, mixWeight float64 // pareto_lognormal
	value            int     // constant
	values           []int   // empirical, ascending
	cdf              []float64
}

// newLengthSampler builds a sampler from a validated distribution.
func newLengthSampler(d Distribution) lengthSampler {
	p := d.Params
	switch d.Type {
	case "gaussian":
		return lengthSampler{kind: lengthGaussian, mean: p["mean"], stdDev: p["std_dev"], min: int(p["min"]), max: int(p["max"])}
	case "exponential":
		return lengthSampler{kind: lengthExponential, mean: p["mean"]}
	case "pareto_lognormal":
		return lengthSampler{kind: lengthParetoLognormal, alpha: p["alpha"], xm: p["xm"], mu: p["mu"], sigma: p["sigma"], mixWeight: p["mix_weight"]}
	case "constant":
		return lengthSampler{kind: lengthConstant, value: int(p["value"])}
	default:
		return newEmpiricalSampler(p)
	}
}

// newEmpiricalSampler builds the inverse CDF over ascending token counts,
// normalising the probabilities and skipping zero ones, as BLIS does.
func newEmpiricalSampler(params map[string]float64) lengthSampler {
	pdf := make(map[int]float64, len(params))
	keys := make([]int, 0, len(params))
	for k, p := range params {
		n, err := strconv.Atoi(strings.TrimSpace(k))
		if err != nil {
			continue // rejected by validation
		}
		pdf[n] = p
		keys = append(keys, n)
	}
	sort.Ints(keys)
	total := 0.0
	for _, k := range keys {
		total += pdf[k]
	}
	s := lengthSampler{kind: lengthEmpirical}
	cumulative := 0.0
	for _, k := range keys {
		if pdf[k] <= 0 {
			continue
		}
		cumulative += pdf[k] / total
		s.values = append(s.values, k)
		s.cdf = append(s.cdf, cumulative)
	}
	if n := len(s.cdf); n > 0 {
		s.cdf[n-1] = 1.0
	}
	return s
}

func (s *lengthSampler) sample(rng *rand.Rand) int {
	switch s.kind {
	case lengthGaussian:
		if s.min == s.max {
			return s.min // no draw, as in BLIS
		}
		val := rng.NormFloat64()*s.stdDev + s.mean
		return roundLength(math.Min(float64(s.max), math.Max(float64(s.min), val)))
	case lengthExponential:
		return roundLength(rng.ExpFloat64() * s.mean)
	case lengthParetoLognormal:
		var val float64
		if rng.Float64() < s.mixWeight {
			u := rng.Float64()
			if u == 0 {
				u = math.SmallestNonzeroFloat64
			}
			val = s.xm / math.Pow(u, 1.0/s.alpha)
		} else {
			val = math.Exp(s.mu + s.sigma*rng.NormFloat64())
		}
		if math.IsInf(val, 0) || math.IsNaN(val) {
			return 1
		}
		return roundLength(val)
	case lengthConstant:
		return max(s.value, 1)
	default:
		return s.empirical(rng)
	}
}

func (s *lengthSampler) empirical(rng *rand.Rand) int {
	switch len(s.values) {
	case 0:
		return 1
	case 1:
		return s.values[0] // no draw, as in BLIS
	}
	u := rng.Float64()
	// Smallest i with cdf[i] >= u (sort.SearchFloat64s without the closure).
	lo, hi := 0, len(s.cdf)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if s.cdf[mid] < u {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return s.values[min(lo, len(s.values)-1)]
}

// roundLength rounds half away from zero with a minimum of 1 (BLIS) and a
// maximum of maxTokenCount (a safety bound reached only by absurd tails).
func roundLength(x float64) int {
	if !(x < maxTokenCount) {
		return maxTokenCount
	}
	if r := int(math.Round(x)); r >= 1 {
		return r
	}
	return 1
}
