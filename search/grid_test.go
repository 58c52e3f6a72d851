package search

import (
	"fmt"
	"math"
	"reflect"
	"testing"
)

func TestGridAxes(t *testing.T) {
	cases := []struct {
		param Param
		want  []float64
	}{
		{Param{Name: "f", Kind: Float, Low: 0, High: 1}, []float64{0, 0.25, 0.5, 0.75, 1}},
		{Param{Name: "l", Kind: LogFloat, Low: 0.01, High: 100}, []float64{0.01, 0.1, 1, 10, 100}},
		{Param{Name: "small", Kind: Int, Low: 1, High: 8}, []float64{1, 2, 3, 4, 5, 6, 7, 8}},
		{Param{Name: "wide", Kind: Int, Low: 0, High: 101}, []float64{0, 25, 51, 76, 101}},
		{Param{Name: "c", Kind: Categorical, Choices: []string{"x", "y", "z"}}, []float64{0, 1, 2}},
		{Param{Name: "fixed", Kind: Float, Low: 3, High: 3}, []float64{3}},
	}
	for _, c := range cases {
		got := gridAxis(c.param, 5)
		if !approxEqual(got, c.want, 1e-12) {
			t.Fatalf("%s: %v, want %v", c.param.Name, got, c.want)
		}
	}
}

func TestGridOrderIsOdometerAndWraps(t *testing.T) {
	space := []Param{
		{Name: "mode", Kind: Categorical, Choices: []string{"a", "b"}},
		{Name: "n", Kind: Int, Low: 1, High: 3},
		{Name: "w", Kind: Float, Low: 0, High: 1},
	}
	g, err := newGrid(space, 3)
	if err != nil {
		t.Fatal(err)
	}
	if g.size != 18 {
		t.Fatalf("size %d, want 18", g.size)
	}
	want := map[int][]float64{
		0:  {0, 1, 0},
		1:  {0, 1, 0.5}, // last parameter varies fastest
		3:  {0, 2, 0},
		9:  {1, 1, 0},
		17: {1, 3, 1},
		18: {0, 1, 0}, // wraps around
	}
	for number, values := range want {
		if got := g.point(number); !reflect.DeepEqual(got, values) {
			t.Errorf("point %d = %v, want %v", number, got, values)
		}
	}

	// Through the Sampler: Ask(k) proposes grid point k, and all 18 differ.
	s := newTestSampler(t, openStorage(t), "grid", space, MethodGrid, 1, Options{GridPoints: 3})
	seen := map[string]bool{}
	for number := 0; number < 18; number++ {
		id, values, err := s.Ask(number)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.space.Encode(values); !reflect.DeepEqual(got, g.point(number)) {
			t.Fatalf("Ask(%d) = %v, want %v", number, got, g.point(number))
		}
		seen[fmt.Sprint(values)] = true
		if err := s.Tell(id, 0); err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) != 18 {
		t.Fatalf("%d distinct grid points in 18 asks", len(seen))
	}
}

func TestGridTooLargeIsRejected(t *testing.T) {
	space := make([]Param, 30)
	for i := range space {
		space[i] = Param{Name: string(rune('a' + i)), Kind: Float, High: 1}
	}
	if _, err := newGrid(space, 5); err == nil {
		t.Fatal("5^30 grid accepted")
	}
}

// approxEqual compares with a relative tolerance.
func approxEqual(a, b []float64, rel float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > rel*math.Max(1, math.Abs(b[i])) {
			return false
		}
	}
	return true
}

// A grid over a conditional space runs each distinct point once: an
// inactive parameter adds no values (the Cartesian product of these axes
// would be 2 × 3 × 2 = 12 points, 8 distinct), in odometer order.
func TestGridConditionalListsDistinctPoints(t *testing.T) {
	space := Space{
		{Name: "mode", Kind: Categorical, Choices: []string{"off", "on"}},
		{Name: "n", Kind: Int, Low: 1, High: 3, When: &When{Param: "mode", Choices: []string{"on"}}},
		{Name: "c", Kind: Categorical, Choices: []string{"x", "y"}},
	}
	g, err := newGrid(space, 5)
	if err != nil {
		t.Fatal(err)
	}
	nan := math.NaN()
	want := [][]float64{{0, nan, 0}, {0, nan, 1}, {1, 1, 0}, {1, 1, 1}, {1, 2, 0}, {1, 2, 1}, {1, 3, 0}, {1, 3, 1}}
	if g.size != len(want) {
		t.Fatalf("size %d, want %d", g.size, len(want))
	}
	for k, w := range append(want, want[0]) { // point 8 wraps to point 0
		got := g.point(k)
		if fmt.Sprint(got) != fmt.Sprint(w) {
			t.Errorf("point %d: %v, want %v", k, got, w)
		}
	}
}
