package search

import (
	"math"
	"math/rand"
	"reflect"
	"testing"
	"time"
)

func TestParetoFrontHandCases(t *testing.T) {
	cases := []struct {
		name   string
		points [][]float64
		want   []int
	}{
		{"empty", nil, []int{}},
		{"trade-off and a dominated point", [][]float64{{1, 3}, {2, 2}, {3, 1}, {3, 3}}, []int{0, 1, 2}},
		{"duplicates both kept", [][]float64{{1, 1}, {2, 0.5}, {1, 1}}, []int{0, 1, 2}},
		{"weakly dominated is dropped", [][]float64{{1, 1}, {1, 2}}, []int{0}},
		{"three objectives", [][]float64{{1, 2, 3}, {2, 1, 3}, {2, 2, 2}, {2, 2, 4}}, []int{0, 1, 2}},
		{"NaN is never on the front", [][]float64{{math.NaN(), 0}, {5, 5}}, []int{1}},
	}
	for _, c := range cases {
		if got := ParetoFront(c.points); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: ParetoFront = %v, want %v", c.name, got, c.want)
		}
	}
}

// The front found in lexicographic order is the one every pairwise
// comparison finds, on random points with ties, duplicates and NaNs.
func TestParetoFrontMatchesPairwise(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for trial := 0; trial < 200; trial++ {
		points := make([][]float64, 1+rng.Intn(60))
		dims := 1 + rng.Intn(4)
		for i := range points {
			points[i] = make([]float64, dims)
			for k := range points[i] {
				points[i][k] = float64(rng.Intn(6)) // coarse: many ties
			}
			if rng.Intn(20) == 0 {
				points[i][rng.Intn(dims)] = math.NaN()
			}
			if i > 0 && rng.Intn(10) == 0 {
				points[i] = append([]float64(nil), points[i-1]...)
			}
		}
		want := []int{}
		for i, p := range points {
			if hasNaN(p) {
				continue
			}
			dominated := false
			for j, q := range points {
				if i != j && !hasNaN(q) && dominates(q, p) {
					dominated = true
				}
			}
			if !dominated {
				want = append(want, i)
			}
		}
		if got := ParetoFront(points); !reflect.DeepEqual(got, want) {
			t.Fatalf("points %v: front %v, pairwise %v", points, got, want)
		}
	}
}

func TestHypervolumeHandComputed(t *testing.T) {
	cases := []struct {
		name   string
		points [][]float64
		ref    []float64
		want   float64
	}{
		// Staircase: strips of 1×3, 2×2... summed by x-slices: 1 + 2 + 3.
		{"2-D staircase", [][]float64{{1, 3}, {2, 2}, {3, 1}}, []float64{4, 4}, 6},
		{"2-D dominated point adds nothing", [][]float64{{1, 1}, {2, 2}}, []float64{3, 3}, 4},
		{"2-D point outside ref", [][]float64{{1, 1}, {5, 0}, {0, 3}}, []float64{3, 3}, 4},
		{"3-D single box", [][]float64{{1, 1, 1}}, []float64{2, 2, 2}, 1},
		// Boxes 4 and 2 overlapping in the unit cube [1,2]^3: 4 + 2 - 1.
		{"3-D two boxes", [][]float64{{0, 0, 1}, {1, 1, 0}}, []float64{2, 2, 2}, 5},
		// Three 2×1×1 boxes: 3·2 − 3·1 + 1.
		{"3-D three boxes", [][]float64{{0, 1, 1}, {1, 0, 1}, {1, 1, 0}}, []float64{2, 2, 2}, 4},
		{"3-D duplicates", [][]float64{{1, 1, 1}, {1, 1, 1}}, []float64{2, 2, 2}, 1},
		{"4-D unit", [][]float64{{0, 0, 0, 0}}, []float64{1, 2, 3, 4}, 24},
		{"nothing inside", [][]float64{{2, 0}}, []float64{2, 2}, 0},
	}
	for _, c := range cases {
		if got := Hypervolume(c.points, c.ref); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: Hypervolume = %v, want %v", c.name, got, c.want)
		}
	}
}

// Differential test against inclusion–exclusion, exact for small sets: the
// union volume is Σ over non-empty subsets of (−1)^(|S|+1) × volume of the
// subset's intersection, itself the box of the coordinate-wise maximum.
func TestHypervolumeMatchesInclusionExclusion(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for trial := 0; trial < 300; trial++ {
		d := 2 + rng.Intn(4)
		n := 1 + rng.Intn(9)
		points := make([][]float64, n)
		for i := range points {
			points[i] = make([]float64, d)
			for k := range points[i] {
				points[i][k] = math.Round(rng.Float64()*12) / 10 // ties and points beyond ref
			}
		}
		ref := make([]float64, d)
		for k := range ref {
			ref[k] = 1
		}
		got, want := Hypervolume(points, ref), inclusionExclusion(points, ref)
		if math.Abs(got-want) > 1e-9 {
			t.Fatalf("d=%d n=%d %v: Hypervolume %v, inclusion-exclusion %v", d, n, points, got, want)
		}
	}
}

func inclusionExclusion(points [][]float64, ref []float64) float64 {
	total := 0.0
	for mask := 1; mask < 1<<len(points); mask++ {
		corner := make([]float64, len(ref))
		for k := range corner {
			corner[k] = math.Inf(-1)
		}
		size := 0
		for i, p := range points {
			if mask&(1<<i) == 0 {
				continue
			}
			size++
			for k := range corner {
				corner[k] = math.Max(corner[k], p[k])
			}
		}
		volume := 1.0
		for k := range ref {
			volume *= math.Max(0, ref[k]-corner[k])
		}
		if size%2 == 1 {
			total += volume
		} else {
			total -= volume
		}
	}
	return total
}

// 200 mutually non-dominated points in 5 objectives (the worst case for
// the size the lead needs) must stay fast.
func TestHypervolumeTwoHundredPointsInFiveObjectives(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	points := make([][]float64, 200)
	for i := range points {
		p := make([]float64, 5)
		norm := 0.0
		for k := range p {
			p[k] = math.Abs(rng.NormFloat64())
			norm += p[k] * p[k]
		}
		for k := range p {
			p[k] = 2 - p[k]/math.Sqrt(norm) // on a sphere: none dominates another
		}
		points[i] = p
	}
	if len(ParetoFront(points)) != 200 {
		t.Fatal("test points are not mutually non-dominated")
	}
	start := time.Now()
	got := Hypervolume(points, []float64{2, 2, 2, 2, 2})
	elapsed := time.Since(start)
	t.Logf("HV = %.6f in %v", got, elapsed)
	// Bounded by the positive-orthant unit ball volume, 8π²/15 / 32.
	if got <= 0 || got > 8*math.Pi*math.Pi/15/32 {
		t.Fatalf("HV %v outside (0, ball/32]", got)
	}
	if elapsed > 5*time.Second {
		t.Fatalf("took %v", elapsed)
	}
}
