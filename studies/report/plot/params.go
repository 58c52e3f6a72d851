package plot

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"optimize/search"
	"optimize/studies/report"
)

// axisPosition maps a parameter value to [0, 1] along its range: linear
// for float and int, logarithmic for log-float, the choice index over the
// last index for a categorical (0.5 for a single choice). An inactive
// value has no position (NaN).
func axisPosition(p search.Param, v search.Value) float64 {
	x := v.Number
	switch {
	case v.Absent():
		return math.NaN()
	case p.Kind == search.Categorical:
		if len(p.Choices) < 2 {
			return 0.5
		}
		return float64(slices.Index(p.Choices, v.Choice)) / float64(len(p.Choices)-1)
	case p.High == p.Low:
		return 0.5
	case p.Kind == search.LogFloat && p.Low > 0:
		return (math.Log(x) - math.Log(p.Low)) / (math.Log(p.High) - math.Log(p.Low))
	}
	return (x - p.Low) / (p.High - p.Low)
}

// gradient runs from blue (t = 0, the best) to orange (t = 1), slightly
// transparent.
func gradient(t float64) color.Color {
	t = math.Max(0, math.Min(1, t))
	mix := func(a, b uint8) uint8 { return uint8(float64(a) + t*(float64(b)-float64(a)) + 0.5) }
	return color.NRGBA{R: mix(blue.R, orange.R), G: mix(blue.G, orange.G), B: mix(blue.B, orange.B), A: 0xc0}
}

// parallelLines are the trials' polylines (x = parameter index, y = axis
// position; inactive parameters skipped), worst primary value first and
// best last, each with its colour position t: its rank by the primary
// value over the last rank (0 = best, 1 = worst), so that one outlier does
// not paint every other line the same colour.
func parallelLines(r *report.Report) (lines []plotter.XYs, ts []float64, lo, hi float64) {
	tpl := r.Template
	o := tpl.Objectives[tpl.Primary]
	order := make([]int, len(r.Complete))
	for i := range order {
		order[i] = i
	}
	// goodness orders "better" first whatever the direction.
	goodness := func(i int) float64 {
		v := r.Complete[i].Objectives[tpl.Primary]
		if o.Minimize {
			return v
		}
		return -v
	}
	sort.SliceStable(order, func(a, b int) bool { return goodness(order[a]) > goodness(order[b]) })
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, c := range r.Complete {
		lo, hi = math.Min(lo, c.Objectives[tpl.Primary]), math.Max(hi, c.Objectives[tpl.Primary])
	}
	for k, i := range order {
		c := &r.Complete[i]
		var line plotter.XYs
		for j := range tpl.Params {
			if !c.Params[j].Absent() {
				line = append(line, plotter.XY{X: float64(j), Y: axisPosition(tpl.Params[j].Param, c.Params[j])})
			}
		}
		t := 0.0
		if len(order) > 1 {
			t = 1 - float64(k)/float64(len(order)-1)
		}
		lines, ts = append(lines, line), append(ts, t)
	}
	return lines, ts, lo, hi
}

// Parallel draws every complete trial as a line across one vertical axis
// per parameter (each normalised to its range, its ends labelled;
// categoricals by choice index; inactive values skipped), coloured by the
// primary objective from blue (best) to orange (worst).
func Parallel(r *report.Report) (*gplot.Plot, error) {
	tpl := r.Template
	if len(r.Complete) == 0 {
		return nil, noTrials(r)
	}
	if len(tpl.Params) == 0 {
		return nil, fmt.Errorf("template %s has no parameters to plot", tpl.Name)
	}
	o := tpl.Objectives[tpl.Primary]
	p := newPlot(fmt.Sprintf("Parameters of %s's %d trials, coloured by rank of %s", r.Study.Name, len(r.Complete), o.Name),
		"", "position in the parameter's range")
	names := make([]string, len(tpl.Params))
	var ends plotter.XYLabels
	for j, prm := range tpl.Params {
		names[j] = prm.Name
		axis, err := plotter.NewLine(plotter.XYs{{X: float64(j), Y: 0}, {X: float64(j), Y: 1}})
		if err != nil {
			return nil, err
		}
		axis.LineStyle = draw.LineStyle{Color: grey, Width: vg.Points(0.8)}
		p.Add(axis)
		low, high := prm.Format(search.Value{Number: prm.Low}), prm.Format(search.Value{Number: prm.High})
		if prm.Kind == search.Categorical {
			low, high = prm.Choices[0], prm.Choices[len(prm.Choices)-1]
		}
		ends.XYs = append(ends.XYs, plotter.XY{X: float64(j), Y: -0.04}, plotter.XY{X: float64(j), Y: 1.02})
		ends.Labels = append(ends.Labels, low, high)
	}
	lines, ts, lo, hi := parallelLines(r)
	for i, line := range lines {
		if len(line) == 0 {
			continue
		}
		l, err := plotter.NewLine(line)
		if err != nil {
			return nil, err
		}
		l.LineStyle = draw.LineStyle{Color: gradient(ts[i]), Width: vg.Points(1)}
		p.Add(l)
	}
	labels, err := plotter.NewLabels(ends)
	if err != nil {
		return nil, err
	}
	for i := range labels.TextStyle {
		labels.TextStyle[i].Font = font.From(sans, 8)
		labels.TextStyle[i].XAlign = draw.XCenter
	}
	p.Add(labels)
	best, worst := lo, hi
	if !o.Minimize {
		best, worst = hi, lo
	}
	unit := Unit(o.Metric)
	for _, e := range []struct {
		t float64
		v float64
		w string
	}{{0, best, "best"}, {1, worst, "worst"}} {
		l, _ := plotter.NewLine(plotter.XYs{})
		l.LineStyle = draw.LineStyle{Color: gradient(e.t), Width: vg.Points(2.5)}
		p.Legend.Add(fmt.Sprintf("%s %s %.4g %s", e.w, o.Name, e.v, unit), l)
	}
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = math.Pi / 12
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Min, p.X.Max = -0.4, float64(len(names))-0.6
	p.Y.Min, p.Y.Max = -0.1, 1.25
	p.Y.Tick.Marker = gplot.ConstantTicks([]gplot.Tick{{Value: 0, Label: "low"}, {Value: 0.5, Label: "middle"}, {Value: 1, Label: "high"}})
	p.Legend.Left = true
	return p, nil
}

// Importance draws r.Importance() as horizontal bars, the largest on top.
func Importance(r *report.Report) (*gplot.Plot, error) {
	tpl := r.Template
	if len(r.Complete) == 0 {
		return nil, noTrials(r)
	}
	if len(tpl.Params) == 0 {
		return nil, fmt.Errorf("template %s has no parameters to plot", tpl.Name)
	}
	imp := r.Importance()
	order := make([]int, len(imp))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return imp[order[a]] < imp[order[b]] })
	values, names := make(plotter.Values, len(order)), make([]string, len(order))
	var labels plotter.XYLabels
	for k, i := range order {
		values[k], names[k] = imp[i], tpl.Params[i].Name
		labels.XYs = append(labels.XYs, plotter.XY{X: imp[i], Y: float64(k)})
		labels.Labels = append(labels.Labels, fmt.Sprintf("%.2f", imp[i]))
	}
	p := newPlot(fmt.Sprintf("Parameter importance in %s (%d trials)", r.Study.Name, len(r.Complete)),
		"share of the score's rank variance the parameter explains", "")
	// Bars fill about 60% of the height each parameter gets.
	width := vg.Length(math.Max(4, math.Min(28, 0.6*float64(Height-1.6*vg.Inch)/float64(len(values)))))
	bars, err := plotter.NewBarChart(values, width)
	if err != nil {
		return nil, err
	}
	bars.Horizontal = true
	bars.Color = blue
	bars.LineStyle.Width = 0
	text, err := plotter.NewLabels(labels)
	if err != nil {
		return nil, err
	}
	for i := range text.TextStyle {
		text.TextStyle[i].Font = font.From(sans, 9)
		text.TextStyle[i].YAlign = draw.YCenter
	}
	text.Offset = vg.Point{X: vg.Points(4)}
	p.Add(plotter.NewGrid(), bars, text)
	p.NominalY(names...)
	p.X.Min = 0
	p.X.Max = math.Max(p.X.Max*1.15, 0.1)
	return p, nil
}
