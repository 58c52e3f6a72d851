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

// minOf returns the smallest value of a non-empty slice.
func minOf(a []int64) int64 {
	m := a[0]
	for _, v := range a[1:] {
		m = min(m, v)
	}
	return m
}
