package metrics

import (
	"math/bits"
	"slices"
)

// selectK reorders a so that a[k] holds the value a sorted copy would have
// there, with no larger value before it and no smaller one after it
// (introselect: quickselect on a median-of-three pivot with three-way
// partitioning, which keeps runs of equal values linear, and a sort of
// what is left if the partitions stop shrinking). Summaries need three
// percentiles of up to a million latencies per distribution; sorting them
// all was the largest part of summarising a long run.
func selectK(a []int64, k int) {
	lo, hi := 0, len(a) // a[lo:hi] holds rank k
	budget := 2 * bits.Len(uint(len(a)))
	for hi-lo > 16 {
		if budget == 0 {
			slices.Sort(a[lo:hi])
			return
		}
		budget--
		pivot := median3(a[lo], a[lo+(hi-lo)/2], a[hi-1])
		// a[lo:lt] < pivot, a[lt:i] == pivot, a[gt:hi] > pivot.
		lt, i, gt := lo, lo, hi
		for i < gt {
			switch v := a[i]; {
			case v < pivot:
				a[lt], a[i] = v, a[lt]
				lt++
				i++
			case v > pivot:
				gt--
				a[gt], a[i] = v, a[gt]
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt
		case k >= gt:
			lo = gt
		default:
			return // a[k] == pivot, in place
		}
	}
	slices.Sort(a[lo:hi])
}

func median3(a, b, c int64) int64 {
	if a > b {
		a, b = b, a
	}
	if b > c {
		b = c
	}
	return max(a, b)
}

// valuesAt writes into out[i] the value a sorted copy of us would hold at
// ranks[i] (ranks ascending); it may reorder us. Large inputs are
// narrowed first (histogram): one pass counts the values per 1/4096 of
// their range, and only the values of the buckets that hold the ranks are
// gathered and selected among, so that a summary costs a few passes over
// each distribution instead of repeated partitioning.
func valuesAt(us []int64, ranks []int64, out []int64) {
	if len(us) < histogramMin {
		selectRanks(us, ranks, out)
		return
	}
	lo, hi := us[0], us[0]
	for _, v := range us {
		lo, hi = min(lo, v), max(hi, v)
	}
	h := newHistogram(lo, hi)
	for _, v := range us {
		h.sums[h.bucketOf(v)]++
	}
	h.locate(ranks)
	gathered := make([][]int64, len(h.buckets))
	for g, b := range h.buckets {
		gathered[g] = make([]int64, 0, h.sums[b])
	}
	for _, v := range us {
		if g := h.want[h.bucketOf(v)]; g != 0 {
			gathered[g-1] = append(gathered[g-1], v)
		}
	}
	h.eachGroup(func(g, i, j int) { selectRanks(gathered[g], h.within[i:j], out[i:j]) })
}

// histogram narrows a search for values at given ranks (valuesAt, and
// weightedValuesAt for values with counts): the values' range [lo, hi]
// cut into at most 2^histogramBits buckets, sums[b] the number of values
// in bucket b (its caller's pass fills it), then locate finds the buckets
// that hold the ranks, so that only their values are gathered and ranked.
type histogram struct {
	lo    int64
	shift uint
	sums  []int64
	// Set by locate, per rank: its group (the buckets holding a rank, in
	// rank order) and its rank within that bucket; per bucket, 1 + its
	// group or 0 when no rank falls there; per group, its bucket.
	group   []int
	within  []int64
	want    []int16
	buckets []int
}

func newHistogram(lo, hi int64) histogram {
	span := uint64(hi) - uint64(lo) // hi − lo, which may not fit an int64
	shift := uint(max(0, bits.Len64(span)-histogramBits))
	return histogram{lo: lo, shift: shift, sums: make([]int64, span>>shift+1)}
}

// bucketOf is v's bucket.
func (h *histogram) bucketOf(v int64) uint64 { return (uint64(v) - uint64(h.lo)) >> h.shift }

// locate places each rank (ascending, below the total) in its bucket.
func (h *histogram) locate(ranks []int64) {
	h.group, h.within = make([]int, len(ranks)), make([]int64, len(ranks))
	h.want = make([]int16, len(h.sums))
	b, below := 0, int64(0)
	for i, r := range ranks {
		for b+1 < len(h.sums) && below+h.sums[b] <= r {
			below += h.sums[b]
			b++
		}
		if h.want[b] == 0 {
			h.buckets = append(h.buckets, b)
			h.want[b] = int16(len(h.buckets))
		}
		h.group[i], h.within[i] = int(h.want[b])-1, r-below
	}
}

// eachGroup calls fn once per group g with the ranks [i, j) it holds.
func (h *histogram) eachGroup(fn func(g, i, j int)) {
	for i := 0; i < len(h.group); {
		j := i + 1
		for j < len(h.group) && h.group[j] == h.group[i] {
			j++
		}
		fn(h.group[i], i, j)
		i = j
	}
}

// selectRanks is valuesAt by selection in place, rank after rank, each
// search starting above the last rank placed.
func selectRanks(us []int64, ranks []int64, out []int64) {
	from := 0 // us[:from] are the from smallest values
	for i, r64 := range ranks {
		r := int(r64)
		selectK(us[from:], r-from)
		out[i], from = us[r], r
	}
}

// histogramMin is the size from which valuesAt narrows by histogram;
// histogramBits sets its 2^12 buckets.
const (
	histogramMin  = 1 << 12
	histogramBits = 12
)
