package search

import (
	"math"
	"slices"
	"sort"
)

// ParetoFront returns, in input order, the indices of the points no other
// point dominates (all objectives minimised; a dominates b when a ≤ b on
// every axis and a < b on at least one). Equal points do not dominate each
// other, so duplicates on the front are all kept. Points containing NaN
// cannot be compared and are never on the front.
func ParetoFront(points [][]float64) []int {
	// In lexicographic order a point's dominators all come before it, and
	// a dominated point is dominated by a point of the front too: so each
	// point is compared with the front found so far only, O(n·front)
	// instead of O(n²).
	order := make([]int, 0, len(points))
	for i, p := range points {
		if !hasNaN(p) {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return slices.Compare(points[a], points[b]) })
	front := []int{}
	for _, i := range order {
		dominated := false
		for _, j := range front {
			if dominates(points[j], points[i]) {
				dominated = true
				break
			}
		}
		if !dominated {
			front = append(front, i)
		}
	}
	slices.Sort(front)
	return front
}

func dominates(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	strictly := false
	for k := range a {
		if a[k] > b[k] {
			return false
		}
		if a[k] < b[k] {
			strictly = true
		}
	}
	return strictly
}

func hasNaN(p []float64) bool {
	for _, v := range p {
		if math.IsNaN(v) {
			return true
		}
	}
	return false
}

// Hypervolume is the exact volume dominated by points and bounded by ref
// (all objectives minimised). Points that do not strictly dominate ref on
// every axis contribute nothing; so do points of the wrong dimension or
// containing NaN.
//
// Algorithm (WFG-style exclusive contributions with dimension slicing):
// sort points by the last objective, worst first. Then the region point i
// adds on top of the points after it is a slab of height ref_d − p_i[d]
// times the (d−1)-dimensional volume p_i dominates minus the volume of the
// "limit set" {max(p_i, p_j) : j > i} projected to the first d−1 axes —
// every limit point shares p_i's last coordinate because the later points
// are better on it. The recursion bottoms out in an O(n log n) 2-D sweep.
// Dominated points are filtered at every level. Fast enough for a few
// hundred points in five objectives.
func Hypervolume(points [][]float64, ref []float64) float64 {
	d := len(ref)
	if d == 0 {
		return 0
	}
	inside := make([][]float64, 0, len(points))
	for _, p := range points {
		if len(p) == d && strictlyBelow(p, ref) {
			inside = append(inside, p)
		}
	}
	return hv(nondominated(inside), ref)
}

func strictlyBelow(p, ref []float64) bool {
	for k := range ref {
		if !(p[k] < ref[k]) { // also rejects NaN
			return false
		}
	}
	return true
}

// hv expects mutually non-dominated points strictly below ref.
func hv(points [][]float64, ref []float64) float64 {
	d := len(ref)
	switch {
	case len(points) == 0:
		return 0
	case len(points) == 1:
		return boxVolume(points[0], ref)
	case d == 1:
		return ref[0] - points[0][0] // non-dominated in 1-D: a single point
	case d == 2:
		return hv2(points, ref)
	}
	last := d - 1
	sorted := append([][]float64(nil), points...)
	sort.SliceStable(sorted, func(a, b int) bool { return sorted[a][last] > sorted[b][last] })

	total := 0.0
	limit := make([][]float64, 0, len(sorted))
	for i, p := range sorted {
		limit = limit[:0]
		for _, q := range sorted[i+1:] {
			m := make([]float64, last)
			for k := 0; k < last; k++ {
				m[k] = math.Max(p[k], q[k])
			}
			limit = append(limit, m)
		}
		exclusive := boxVolume(p[:last], ref[:last]) - hv(nondominated(limit), ref[:last])
		total += (ref[last] - p[last]) * exclusive
	}
	return total
}

// hv2 sweeps x ascending; non-dominated points then have y descending.
func hv2(points [][]float64, ref []float64) float64 {
	sorted := append([][]float64(nil), points...)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a][0] < sorted[b][0] })
	area, prevY := 0.0, ref[1]
	for _, p := range sorted {
		if p[1] < prevY {
			area += (ref[0] - p[0]) * (prevY - p[1])
			prevY = p[1]
		}
	}
	return area
}

func boxVolume(p, ref []float64) float64 {
	v := 1.0
	for k := range ref {
		v *= ref[k] - p[k]
	}
	return v
}

// nondominated drops dominated points and repeated copies of a point.
func nondominated(points [][]float64) [][]float64 {
	out := make([][]float64, 0, len(points))
	for i, p := range points {
		keep := true
		for j, q := range points {
			if i == j {
				continue
			}
			if dominates(q, p) || (j < i && equal(p, q)) {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, p)
		}
	}
	return out
}

func equal(a, b []float64) bool {
	for k := range a {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}
