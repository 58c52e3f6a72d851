package metrics

import (
	"math"
	"math/rand"
	"slices"
	"testing"
)

// sortedDist is the definition distOf implements by selection: sort, sum
// in float in sorted order, interpolate.
func sortedDist(us []int64) Dist {
	s := slices.Clone(us)
	slices.Sort(s)
	sum := 0.0
	for _, v := range s {
		sum += float64(v)
	}
	pct := func(p float64) float64 {
		rank := p / 100 * float64(len(s)-1)
		lo, hi := int(math.Floor(rank)), int(math.Ceil(rank))
		return float64(s[lo])/1000 + float64(s[hi]-s[lo])*(rank-float64(lo))/1000
	}
	return Dist{Mean: sum / float64(len(s)) / 1000, P50: pct(50), P90: pct(90), P99: pct(99)}
}

// Selection must give exactly what sorting gives, bit for bit, on shapes
// that break naive quickselects: sorted, reversed, all equal, few distinct
// values, organ pipes, and sizes around the small-range cutoff.
func TestDistBySelectionMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	shapes := map[string]func(i, n int) int64{
		"random":   func(int, int) int64 { return rng.Int63n(1e10) },
		"sorted":   func(i, _ int) int64 { return int64(i) * 1000 },
		"reversed": func(i, n int) int64 { return int64(n-i) * 7 },
		"equal":    func(int, int) int64 { return 42_000 },
		"few":      func(int, int) int64 { return rng.Int63n(4) * 1000 },
		"pipe":     func(i, n int) int64 { return int64(min(i, n-i)) },
		// One huge value puts nearly everything in the first histogram
		// bucket.
		"outlier": func(i, _ int) int64 {
			if i == 5 {
				return 1 << 60
			}
			return rng.Int63n(5000)
		},
	}
	for name, gen := range shapes {
		for _, n := range []int{1, 2, 3, 15, 16, 17, 18, 100, 1001, 4095, 4096, 4097, 65_537} {
			us := make([]int64, n)
			for i := range us {
				us[i] = gen(i, n)
			}
			want := sortedDist(us)
			if got := distOf(us); got != want {
				t.Fatalf("%s n=%d: selection %+v, sort %+v", name, n, got, want)
			}
		}
	}
}

func TestSelectKPlacesRank(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.Intn(300)
		a := make([]int64, n)
		for i := range a {
			a[i] = rng.Int63n(int64(1 + rng.Intn(50)))
		}
		s := slices.Clone(a)
		slices.Sort(s)
		k := rng.Intn(n)
		selectK(a, k)
		if a[k] != s[k] {
			t.Fatalf("n=%d k=%d: a[k]=%d, sorted %d", n, k, a[k], s[k])
		}
		for i := range a {
			if (i < k && a[i] > a[k]) || (i > k && a[i] < a[k]) {
				t.Fatalf("n=%d k=%d: a[%d]=%d on the wrong side of %d", n, k, i, a[i], a[k])
			}
		}
	}
}

// valuesAt's histogram spans the whole int64 range (its width overflows
// an int64) and hands back any set of ascending ranks, repeated ones
// included, as sorting would.
func TestValuesAtMatchesSortedRanks(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for trial := 0; trial < 40; trial++ {
		n := histogramMin + rng.Intn(3*histogramMin)
		us := make([]int64, n)
		for i := range us {
			switch rng.Intn(4) {
			case 0:
				us[i] = math.MinInt64 + rng.Int63n(100)
			case 1:
				us[i] = math.MaxInt64 - rng.Int63n(100)
			default:
				us[i] = rng.Int63n(1000) - 500
			}
		}
		sorted := slices.Clone(us)
		slices.Sort(sorted)
		ranks := make([]int64, 1+rng.Intn(6))
		for i := range ranks {
			ranks[i] = rng.Int63n(int64(n))
		}
		slices.Sort(ranks)
		got := make([]int64, len(ranks))
		valuesAt(us, ranks, got)
		for i, r := range ranks {
			if got[i] != sorted[r] {
				t.Fatalf("n=%d rank %d: %d, sorted %d", n, r, got[i], sorted[r])
			}
		}
	}
}

// The integer mean falls back to floats instead of wrapping around.
func TestMeanOverflowFallsBack(t *testing.T) {
	us := []int64{math.MaxInt64 / 2, math.MaxInt64 / 2, math.MaxInt64 / 2}
	if got, want := mean(us), float64(math.MaxInt64/2); math.Abs(got-want)/want > 1e-12 {
		t.Fatalf("mean %v, want %v", got, want)
	}
}
