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
// narrowed first: one pass counts the values per 1/4096 of their range,
// and only the values of the buckets that hold the ranks are gathered and
// selected among, so that a summary costs a few passes over each
// distribution instead of repeated partitioning.
func valuesAt(us []int64, ranks []int, out []int64) {
	if len(us) < histogramMin {
		selectRanks(us, ranks, out)
		return
	}
	lo, hi := us[0], us[0]
	for _, v := range us {
		lo, hi = min(lo, v), max(hi, v)
	}
	span := uint64(hi) - uint64(lo) // hi − lo, which may not fit an int64
	shift := uint(max(0, bits.Len64(span)-histogramBits))
	counts := make([]int, span>>shift+1)
	for _, v := range us {
		counts[(uint64(v)-uint64(lo))>>shift]++
	}
	// Each rank's bucket and its rank within the bucket; ranks ascend, so
	// buckets do, and equal ones are neighbours.
	bucket := make([]int, len(ranks))
	within := make([]int, len(ranks))
	b, below := 0, 0
	for i, r := range ranks {
		for below+counts[b] <= r {
			below += counts[b]
			b++
		}
		bucket[i], within[i] = b, r-below
	}
	want := make([]int16, len(counts)) // 1 + index into gathered (one per rank at most); 0 = not wanted
	var gathered [][]int64
	for i, b := range bucket {
		if i == 0 || b != bucket[i-1] {
			gathered = append(gathered, make([]int64, 0, counts[b]))
			want[b] = int16(len(gathered))
		}
	}
	for _, v := range us {
		if g := want[(uint64(v)-uint64(lo))>>shift]; g != 0 {
			gathered[g-1] = append(gathered[g-1], v)
		}
	}
	for i := 0; i < len(ranks); {
		j := i + 1
		for j < len(ranks) && bucket[j] == bucket[i] {
			j++
		}
		selectRanks(gathered[want[bucket[i]]-1], within[i:j], out[i:j])
		i = j
	}
}

// selectRanks is valuesAt by selection in place, rank after rank, each
// search starting above the last rank placed.
func selectRanks(us []int64, ranks []int, out []int64) {
	from := 0 // us[:from] are the from smallest values
	for i, r := range ranks {
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
