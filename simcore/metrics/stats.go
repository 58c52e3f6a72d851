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
	rank, ranks := percentileRanks(int64(len(us)))
	var vals [len(ranks)]int64
	valuesAt(us, ranks[:], vals[:])
	return interpolated(m, rank, ranks, vals)
}

// percentiles are the ones a Dist reports.
var percentiles = [...]float64{50, 90, 99}

// percentileRanks is each percentile's rank r = p/100·(n−1) among n values
// and the two ranks around it, ⌊r⌋ and ⌈r⌉ (0-based, ascending).
func percentileRanks(n int64) (rank [len(percentiles)]float64, ranks [2 * len(percentiles)]int64) {
	for i, p := range percentiles {
		rank[i] = p / 100 * float64(n-1)
		ranks[2*i], ranks[2*i+1] = int64(math.Floor(rank[i])), int64(math.Ceil(rank[i]))
	}
	return rank, ranks
}

// interpolated is the Dist of mean m (ms) and, from the values (µs) at
// percentileRanks' ranks, each percentile linear between its two ranks.
func interpolated(m float64, rank [len(percentiles)]float64, ranks, vals [2 * len(percentiles)]int64) Dist {
	var pct [len(percentiles)]float64
	for i := range percentiles {
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

// weightedDist summarises values that occur n times each (ITLs are
// recorded once per step with the number of requests that got a token);
// vals is left as it is.
func weightedDist(vals []valueCount) Dist {
	var n int64
	sum := 0.0
	for _, x := range vals {
		n += x.n
		sum += float64(x.v) * float64(x.n)
	}
	if n == 0 {
		return Dist{}
	}
	// The ranks in the expanded multiset, as distOf's.
	rank, ranks := percentileRanks(n)
	var at [len(ranks)]int64
	weightedValuesAt(vals, ranks[:], at[:])
	return interpolated(sum/float64(n)/1000, rank, ranks, at)
}

// valueCount is a value that occurs n times.
type valueCount struct{ v, n int64 }

// weightedValuesAt writes into out[i] the value at rank ranks[i] (0-based,
// ascending) of the multiset in which each vals[j].v occurs vals[j].n
// times; vals is left as it is. Large inputs are narrowed as valuesAt
// narrows (histogram), the buckets summing counts: only the pairs of the
// buckets that hold the ranks are gathered and sorted, not every pair.
func weightedValuesAt(vals []valueCount, ranks []int64, out []int64) {
	if len(vals) < histogramMin {
		sortedValuesAt(slices.Clone(vals), ranks, out)
		return
	}
	lo, hi := vals[0].v, vals[0].v
	for _, x := range vals {
		lo, hi = min(lo, x.v), max(hi, x.v)
	}
	h := newHistogram(lo, hi)
	for _, x := range vals {
		h.sums[h.bucketOf(x.v)] += x.n
	}
	h.locate(ranks)
	gathered := make([][]valueCount, len(h.buckets))
	for _, x := range vals {
		if g := h.want[h.bucketOf(x.v)]; g != 0 {
			gathered[g-1] = append(gathered[g-1], x)
		}
	}
	h.eachGroup(func(g, i, j int) { sortedValuesAt(gathered[g], h.within[i:j], out[i:j]) })
}

// sortedValuesAt sorts pairs by value and writes into out[i] the value at
// rank ranks[i] (ascending) of their multiset; a rank past its end reads
// the largest value. Equal values are interchangeable, so the sort need
// not be stable.
func sortedValuesAt(pairs []valueCount, ranks []int64, out []int64) {
	slices.SortFunc(pairs, func(a, b valueCount) int { return cmp.Compare(a.v, b.v) })
	j, seen := 0, pairs[0].n // pairs[:j+1] hold ranks [0, seen)
	for i, r := range ranks {
		for seen <= r && j+1 < len(pairs) {
			j++
			seen += pairs[j].n
		}
		out[i] = pairs[j].v
	}
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
