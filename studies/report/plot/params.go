package plot

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

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

// translucent is c with alpha a.
func translucent(c color.Color, a uint8) color.Color {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	n.A = a
	return n
}

// parallelRows is each parameter's row in the parallel plot (0 at the
// bottom): the most important parameter on top, ties in template order,
// so that what matters is read first.
func parallelRows(r *report.Report) []float64 {
	imp := r.Importance()
	order := make([]int, len(imp))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return imp[order[a]] > imp[order[b]] })
	rows := make([]float64, len(order))
	for k, j := range order {
		rows[j] = float64(len(order) - 1 - k)
	}
	return rows
}

// parallelLines are the trials' polylines (x = axis position, y = the
// parameter's row; inactive parameters skipped), worst primary value
// first and best last, each with its colour position t: its rank by the
// primary value over the last rank (0 = best, 1 = worst), so that one
// outlier does not paint every other line the same colour.
func parallelLines(r *report.Report, rows []float64) (lines []plotter.XYs, ts []float64, lo, hi float64) {
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
				line = append(line, plotter.XY{X: axisPosition(tpl.Params[j].Param, c.Params[j]), Y: rows[j]})
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

// axisMarks are the texts along a parameter's axis and their positions:
// every choice of a categorical at its place, the two ends of a number's
// range.
func axisMarks(prm search.Param) (texts []string, at []float64) {
	if prm.Kind == search.Categorical {
		for _, c := range prm.Choices {
			texts, at = append(texts, c), append(at, axisPosition(prm, search.Value{Choice: c}))
		}
		return texts, at
	}
	return []string{prm.Format(search.Value{Number: prm.Low}), prm.Format(search.Value{Number: prm.High})}, []float64{0, 1}
}

// Parallel draws one horizontal axis per parameter, a row each with its
// name beside it (so that names and choices have room however many
// parameters there are), the most important on top; every complete trial
// is a line down through the rows, at its value's position in each range
// (a log scale for log-float, categoricals by choice index; inactive
// values skipped), coloured by its rank on the primary objective from
// blue (best) to orange (worst).
func Parallel(r *report.Report) (*gplot.Plot, error) {
	tpl := r.Template
	if len(r.Complete) == 0 {
		return nil, noTrials(r)
	}
	if len(tpl.Params) == 0 {
		return nil, fmt.Errorf("template %s has no parameters to plot", tpl.Name)
	}
	o := tpl.Objectives[tpl.Primary]
	rows := parallelRows(r)
	lines, ts, lo, hi := parallelLines(r, rows)
	best, worst := lo, hi
	if !o.Minimize {
		best, worst = hi, lo
	}
	unit := Unit(o.Metric)
	p := newPlot(fmt.Sprintf("Parameters of %s's %d trials, the most important on top", r.Study.Name, len(r.Complete)),
		strings.TrimSpace(fmt.Sprintf("colour: rank of %s, blue best (%s %s) to orange worst (%s %s)", o.Name, report.Human(best), unit, report.Human(worst), unit)), "")
	names := make([]string, len(tpl.Params))
	marks := boxedLabels{Style: draw.TextStyle{Color: ink, Font: font.From(sans, 7.5), Handler: p.X.Tick.Label.Handler, YAlign: draw.YBottom}}
	for j, prm := range tpl.Params {
		names[int(rows[j])] = prm.Name
		axis, err := hline(0, 1, rows[j])
		if err != nil {
			return nil, err
		}
		axis.LineStyle = draw.LineStyle{Color: grey, Width: vg.Points(0.8)}
		p.Add(axis)
		texts, at := axisMarks(prm.Param)
		for k, text := range texts {
			align := draw.XCenter
			switch {
			case len(texts) > 1 && k == 0:
				align = draw.XLeft
			case len(texts) > 1 && k == len(texts)-1:
				align = draw.XRight
			}
			marks.Labels = append(marks.Labels, boxedLabel{X: at[k], Y: rows[j], Text: text, Align: align})
		}
	}
	for i, line := range lines {
		if len(line) == 0 {
			continue
		}
		l, err := plotter.NewLine(line)
		if err != nil {
			return nil, err
		}
		// Thin and translucent: where many trials agree the colour deepens.
		l.LineStyle = draw.LineStyle{Color: translucent(gradient(ts[i]), 0x80), Width: vg.Points(0.8)}
		p.Add(l)
	}
	p.Add(marks)
	p.NominalY(names...)
	p.Y.Tick.Label.Font = font.From(sans, 8.5)
	p.Y.Max = float64(len(names)) - 0.3 // room above the top axis for its labels
	p.X.Min, p.X.Max = -0.01, 1.01
	p.X.Tick.Marker = gplot.ConstantTicks([]gplot.Tick{{Value: 0, Label: "low end of each range"}, {Value: 1, Label: "high end"}})
	return p, nil
}

// boxedLabel is a text above the point (X, Y), aligned at X.
type boxedLabel struct {
	X, Y  float64
	Text  string
	Align draw.XAlignment
}

// boxedLabels draws texts just above their points on a white box, so that
// the trials' lines beneath never make them unreadable.
type boxedLabels struct {
	Style  draw.TextStyle
	Labels []boxedLabel
}

// Plot implements gplot.Plotter.
func (b boxedLabels) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, trY := p.Transforms(&c)
	lift, pad := vg.Points(1.5), vg.Points(1)
	for _, l := range b.Labels {
		sty := b.Style
		sty.XAlign = l.Align
		pt := vg.Point{X: trX(l.X), Y: trY(l.Y) + lift}
		box := sty.Rectangle(l.Text)
		c.FillPolygon(color.White, []vg.Point{
			{X: pt.X + box.Min.X - pad, Y: pt.Y + box.Min.Y}, {X: pt.X + box.Max.X + pad, Y: pt.Y + box.Min.Y},
			{X: pt.X + box.Max.X + pad, Y: pt.Y + box.Max.Y}, {X: pt.X + box.Min.X - pad, Y: pt.Y + box.Max.Y}})
		c.FillText(sty, pt, l.Text)
	}
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
		labels.Labels = append(labels.Labels, percent(imp[i]))
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
	p.X.Tick.Marker = percentTicks{}
	return p, nil
}

// percent is a share as a percentage with two significant digits, so that
// a bar one can see never reads 0 ("<0.1%" below a thousandth).
func percent(v float64) string {
	switch {
	case v == 0:
		return "0%"
	case math.Abs(v) < 0.001:
		return "<0.1%"
	}
	return strconv.FormatFloat(100*v, 'g', 2, 64) + "%"
}

// percentTicks are gonum's default ticks of a share, labelled in per cent.
type percentTicks struct{}

// Ticks implements gplot.Ticker.
func (percentTicks) Ticks(lo, hi float64) []gplot.Tick {
	ticks := gplot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = strconv.FormatFloat(100*ticks[i].Value, 'g', 4, 64) + "%"
		}
	}
	return ticks
}
