package search

import (
	"fmt"
	"math"
	"slices"
)

// exhaustiveIntValues: an Int axis with at most max(GridPoints, this many)
// values is enumerated completely; wider ones get GridPoints evenly spaced
// whole numbers.
const exhaustiveIntValues = 10

// maxGridSize keeps the odometer arithmetic far from int overflow (and
// within int on 32-bit machines).
const maxGridSize = min(1<<40, math.MaxInt)

// maxConditionalGrid bounds the distinct points a grid over a conditional
// space lists (they are held in memory).
const maxConditionalGrid = 1 << 20

// grid enumerates the full Cartesian grid in a fixed odometer order: the
// LAST parameter of the space varies fastest, the first slowest. Point k of
// the study is grid point k mod size, so a study with more trials than grid
// points wraps around and re-runs the grid from the start (useful as extra
// seeds of noise; the lead decides whether to allow it). Over a space with
// conditional parameters the grid is the distinct points only: an
// inactive parameter takes no values of its own (the Cartesian product
// would run each point once per value of every parameter inactive there),
// in the same odometer order.
type grid struct {
	axes [][]float64
	size int
	// points are a conditional space's distinct points (inactive: NaN);
	// nil for a space without conditions.
	points [][]float64
}

func newGrid(space Space, floatPoints int) (*grid, error) {
	g := &grid{size: 1}
	conditional := false
	for _, p := range space {
		axis := gridAxis(p, floatPoints)
		conditional = conditional || p.When != nil
		if !conditional && g.size > maxGridSize/len(axis) {
			return nil, fmt.Errorf("options.GridPoints: the grid over %d parameters exceeds %d points; lower GridPoints or use tpe", len(space), maxGridSize)
		}
		g.size *= len(axis)
		g.axes = append(g.axes, axis)
	}
	if !conditional {
		return g, nil
	}
	if err := g.listActive(space, make([]float64, 0, len(space))); err != nil {
		return nil, err
	}
	g.size = len(g.points)
	return g, nil
}

// listActive appends to g.points every distinct point that extends prefix
// (the values of the first len(prefix) parameters): a parameter inactive
// given the prefix is NaN, an active one takes each value of its axis.
func (g *grid) listActive(space Space, prefix []float64) error {
	i := len(prefix)
	if i == len(space) {
		if len(g.points) == maxConditionalGrid {
			return fmt.Errorf("options.GridPoints: the grid over %d parameters exceeds %d distinct points; lower GridPoints or use tpe", len(space), maxConditionalGrid)
		}
		g.points = append(g.points, append([]float64(nil), prefix...))
		return nil
	}
	if w := space[i].When; w != nil {
		j := space.Index(w.Param)
		x := prefix[j]
		if math.IsNaN(x) || !slices.Contains(w.Choices, space[j].Choices[int(x)]) {
			return g.listActive(space, append(prefix, math.NaN()))
		}
	}
	for _, v := range g.axes[i] {
		if err := g.listActive(space, append(prefix, v)); err != nil {
			return err
		}
	}
	return nil
}

// gridAxis: categoricals in choice order; ints exhaustively when small;
// floats at points evenly spaced including both bounds (log-spaced for
// log-floats). A zero-width axis has one point.
func gridAxis(p Param, floatPoints int) []float64 {
	low, high := p.bounds()
	if low == high {
		return []float64{low}
	}
	switch p.Kind {
	case Categorical:
		return wholeNumbers(low, high)
	case Int:
		if high-low+1 <= float64(max(floatPoints, exhaustiveIntValues)) {
			return wholeNumbers(low, high)
		}
		return dedupeSorted(roundAll(linspace(low, high, floatPoints)))
	case LogFloat:
		axis := linspace(math.Log(low), math.Log(high), floatPoints)
		for i := range axis {
			axis[i] = math.Exp(axis[i])
		}
		axis[0], axis[len(axis)-1] = low, high // exact bounds despite exp(log(x))
		return axis
	}
	return linspace(low, high, floatPoints)
}

// point returns the values of grid point number (wrapping around).
func (g *grid) point(number int) []float64 {
	if g.points != nil {
		return append([]float64(nil), g.points[number%g.size]...)
	}
	index := number % g.size
	values := make([]float64, len(g.axes))
	for i := len(g.axes) - 1; i >= 0; i-- {
		n := len(g.axes[i])
		values[i] = g.axes[i][index%n]
		index /= n
	}
	return values
}

func linspace(low, high float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = low + (high-low)*float64(i)/float64(n-1)
	}
	out[n-1] = high
	return out
}

func wholeNumbers(low, high float64) []float64 {
	out := make([]float64, 0, int(high-low)+1)
	for v := low; v <= high; v++ {
		out = append(out, v)
	}
	return out
}

func roundAll(xs []float64) []float64 {
	for i := range xs {
		xs[i] = math.Round(xs[i])
	}
	return xs
}

func dedupeSorted(xs []float64) []float64 {
	out := xs[:1]
	for _, x := range xs[1:] {
		if x != out[len(out)-1] {
			out = append(out, x)
		}
	}
	return out
}
