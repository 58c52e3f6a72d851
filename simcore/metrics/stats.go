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

// DistOf summarises latencies in µs as ms with the definitions of a run's
// summary (mean and linear-interpolated P50, P90, P99), for latencies
// measured elsewhere (a real server's); us is left as it is.
func DistOf(us []int64) Dist { return distOf(slices.Clone(us)) }

// distOf summarises µs values as ms; it may reorder them.
func distOf(us []int64) Dist {
	if len(us) == 0 {
		return Dist{}
	}
	// Linear interpolation between ranks ⌊r⌋ and ⌈r⌉, r = p/100·(n−1)
	// (numpy's "linear" method, as BLIS).
	// The mean first: valuesAt reorders us, and an overflowing sum's float
	// fallback depends on the order.
	m := mean(us) / 1000
	ps := [...]float64{50, 90, 99}
	var rank [len(ps)]float64
	var ranks [2 * len(ps)]int // ⌊rank⌋, ⌈rank⌉ of each
	for i, p := range ps {
		rank[i] = p / 100 * float64(len(us)-1)
		ranks[2*i], ranks[2*i+1] = int(math.Floor(rank[i])), int(math.Ceil(rank[i]))
	}
	var vals [len(ranks)]int64
	valuesAt(us, ranks[:], vals[:])
	var pct [len(ps)]float64
	for i := range ps {
		lo, lv, hv := ranks[2*i], vals[2*i], vals[2*i+1]
		pct[i] = float64(lv) / 1000
		if lo != ranks[2*i+1] {
			pct[i] += float64(hv-lv) * (rank[i] - float64(lo)) / 1000
		}
	}
	return Dist{Mean: m, P50: pct[0], P90: pct[1], P99: pct[2]}
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
