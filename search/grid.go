package search

import (
	"fmt"
	"math"
)

// exhaustiveIntValues: an Int axis with at most max(GridPoints, this many)
// values is enumerated completely; wider ones get GridPoints evenly spaced
// whole numbers.
const exhaustiveIntValues = 10

// maxGridSize keeps the odometer arithmetic far from int overflow (and
// within int on 32-bit machines).
const maxGridSize = min(1<<40, math.MaxInt)

// grid enumerates the full Cartesian grid in a fixed odometer order: the
// LAST parameter of the space varies fastest, the first slowest. Point k of
// the study is grid point k mod size, so a study with more trials than grid
// points wraps around and re-runs the grid from the start (useful as extra
// seeds of noise; the lead decides whether to allow it).
type grid struct {
	axes [][]float64
	size int
}

func newGrid(space Space, floatPoints int) (*grid, error) {
	g := &grid{size: 1}
	for _, p := range space {
		axis := gridAxis(p, floatPoints)
		if g.size > maxGridSize/len(axis) {
			return nil, fmt.Errorf("options.GridPoints: the grid over %d parameters exceeds %d points; lower GridPoints or use tpe", len(space), maxGridSize)
		}
		g.size *= len(axis)
		g.axes = append(g.axes, axis)
	}
	return g, nil
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
