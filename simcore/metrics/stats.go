// Package metrics records what happens to every request during a run in
// flat arrays indexed by request id, and summarises it with BLIS's
// definitions: linear-interpolated percentiles, arithmetic means, and
// throughput over the makespan measured from t = 0.
package metrics

import (
	"cmp"
	"math"
	"slices"
)

// Dist is a latency distribution summary in milliseconds.
type Dist struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
}

// distOf summarises µs values as ms; it reorders them.
func distOf(us []int64) Dist {
	if len(us) == 0 {
		return Dist{}
	}
	d := Dist{Mean: mean(us) / 1000}
	// Ranks ascend with p, so each selection only searches above the last.
	done := 0
	for _, q := range []struct {
		p   float64
		out *float64
	}{{50, &d.P50}, {90, &d.P90}, {99, &d.P99}} {
		*q.out, done = percentile(us, q.p, done)
	}
	return d
}

// mean is the arithmetic mean. The sum is kept exactly in integers (it
// equals a float sum in any order while the latencies and their partial
// sums stay below 2^53 µs), falling back to floats only on overflow.
func mean(us []int64) float64 {
	var sum int64
	for i, v := range us {
		s := sum + v
		if (v > 0 && s < sum) || (v < 0 && s > sum) {
			f := float64(sum)
			for _, w := range us[i:] {
				f += float64(w)
			}
			return f / float64(len(us))
		}
		sum = s
	}
	return float64(sum) / float64(len(us))
}

// percentile interpolates linearly at rank p/100·(n−1) of the values and
// returns ms (numpy's "linear" method, as BLIS). It selects the ranks it
// needs in us[from:], where the values below from are the smallest ones
// already placed, and returns the index from which the next, higher
// percentile may search.
func percentile(us []int64, p float64, from int) (float64, int) {
	n := len(us)
	rank := p / 100 * float64(n-1)
	lo, hi := int(math.Floor(rank)), int(math.Ceil(rank))
	selectK(us[from:], lo-from)
	lv := us[lo]
	if lo == hi {
		return float64(lv) / 1000, lo
	}
	hv := minOf(us[hi:]) // everything above lo is ≥ us[lo]
	return float64(lv)/1000 + float64(hv-lv)*(rank-float64(lo))/1000, lo
}

// weightedDist summarises values that occur count times each (ITLs are
// recorded once per step with the number of requests that got a token).
func weightedDist(vals []int64, counts []int64) Dist {
	var n int64
	sum := 0.0
	for i, v := range vals {
		n += counts[i]
		sum += float64(v) * float64(counts[i])
	}
	if n == 0 {
		return Dist{}
	}
	// Sorted by value; equal values are interchangeable, so no stable sort.
	type valueCount struct{ v, n int64 }
	sorted := make([]valueCount, len(vals))
	for i, v := range vals {
		sorted[i] = valueCount{v, counts[i]}
	}
	slices.SortFunc(sorted, func(a, b valueCount) int { return cmp.Compare(a.v, b.v) })
	// at returns the k-th smallest value (0-based) of the expanded multiset.
	at := func(k int64) int64 {
		var seen int64
		for _, x := range sorted {
			seen += x.n
			if k < seen {
				return x.v
			}
		}
		return sorted[len(sorted)-1].v
	}
	pct := func(p float64) float64 {
		rank := p / 100 * float64(n-1)
		lo, hi := int64(math.Floor(rank)), int64(math.Ceil(rank))
		lv := at(lo)
		if lo == hi {
			return float64(lv) / 1000
		}
		hv := at(hi)
		return float64(lv)/1000 + float64(hv-lv)*(rank-float64(lo))/1000
	}
	return Dist{Mean: sum / float64(n) / 1000, P50: pct(50), P90: pct(90), P99: pct(99)}
}

// jain is Jain's fairness index (Σx)²/(n·Σx²): 1 when all equal, 1/n when
// one value takes everything.
func jain(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s, s2 float64
	for _, x := range xs {
		s += x
		s2 += x * x
	}
	if s2 == 0 {
		return 1
	}
	return s * s / (float64(len(xs)) * s2)
}
