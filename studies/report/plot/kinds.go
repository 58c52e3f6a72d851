package plot

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"optimize/search"
	"optimize/strategies"
	"optimize/studies/report"
)

// historyMarks splits the trials' primary objective values by trial number
// into trials within the constraints and trials that miss one; incumbent
// is the best feasible value so far (Report.BestFeasibleSoFar), from the
// first feasible trial on.
func historyMarks(r *report.Report) (feasible, infeasible, incumbent plotter.XYs) {
	prim := r.Template.Primary
	best := r.BestFeasibleSoFar()
	for i := range r.Complete {
		c := &r.Complete[i]
		pt := plotter.XY{X: float64(c.Number), Y: c.Objectives[prim]}
		if search.Feasible(c.Violation) {
			feasible = append(feasible, pt)
		} else {
			infeasible = append(infeasible, pt)
		}
		if !math.IsNaN(best[i]) {
			incumbent = append(incumbent, plotter.XY{X: pt.X, Y: best[i]})
		}
	}
	return
}

// History is the optimisation history: every complete trial's primary
// objective against its number (a cross where the trial violates a
// constraint), the best feasible value so far as a step line (it never
// rises on a minimised objective), and the baseline's value.
func History(r *report.Report) (*gplot.Plot, error) {
	if len(r.Complete) == 0 {
		return nil, noTrials(r)
	}
	o := r.Template.Objectives[r.Template.Primary]
	yLabel, logScale := objectiveLabel(o), r.PrimaryLogScale()
	if logScale {
		yLabel = strings.Replace(yLabel, " (", " (log scale; ", 1)
	}
	p := newPlot(fmt.Sprintf("Optimisation history of %s: %s per trial", r.Study.Name, o.Name), "trial number", yLabel)
	p.X.Tick.Marker = wholeTicks{}
	if logScale {
		p.Y.Scale = gplot.LogScale{}
		p.Y.Tick.Marker = gplot.LogTicks{Prec: -1}
	}
	feasible, infeasible, incumbent := historyMarks(r)
	base := r.PrimaryBaseline()
	baseLine, err := hline(float64(r.Complete[0].Number), float64(r.Complete[len(r.Complete)-1].Number), base)
	if err != nil {
		return nil, err
	}
	baseLine.LineStyle = draw.LineStyle{Color: grey, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}
	p.Add(plotter.NewGrid(), baseLine)
	p.Legend.Add(strings.TrimSpace(fmt.Sprintf("baseline %s %s", report.Human(base), Unit(o.Metric))), baseLine)
	if len(incumbent) > 0 { // none while no trial meets every constraint
		step, err := plotter.NewLine(incumbent)
		if err != nil {
			return nil, err
		}
		step.StepStyle = plotter.PostStep
		step.LineStyle = draw.LineStyle{Color: ink, Width: vg.Points(1.6)}
		p.Add(step)
		p.Legend.Add("best feasible so far", step)
	}
	if err := addScatter(p, feasible, draw.CircleGlyph{}, blue, 2.6, "trial"); err != nil {
		return nil, err
	}
	if err := addScatter(p, infeasible, crossGlyph{}, red, 3.8, "trial violating a constraint"); err != nil {
		return nil, err
	}
	if logScale {
		// The legend's room, as a share of the axis's decades.
		p.Y.Max *= math.Pow(p.Y.Max/p.Y.Min, 0.3)
	} else {
		headroom(p, 0.3)
	}
	return p, nil
}

// Hypervolume is the hypervolume of the Pareto front of the trials so far
// against the trial number, with a dot where it grew.
func Hypervolume(r *report.Report) (*gplot.Plot, error) {
	if len(r.Complete) == 0 {
		return nil, noTrials(r)
	}
	h := r.HypervolumeHistory()
	p := newPlot(fmt.Sprintf("Hypervolume of %s's Pareto front over %d objectives", r.Study.Name, len(r.Template.Objectives)),
		"trial number", fmt.Sprintf("hypervolume (ratios to the baseline, reference %g)", report.HypervolumeReference))
	p.X.Tick.Marker = wholeTicks{}
	line, grew := make(plotter.XYs, len(h)), plotter.XYs{}
	for i, v := range h {
		line[i] = plotter.XY{X: float64(r.Complete[i].Number), Y: v}
		if v > 0 && (i == 0 || v > h[i-1]) {
			grew = append(grew, line[i])
		}
	}
	l, err := plotter.NewLine(line)
	if err != nil {
		return nil, err
	}
	l.StepStyle = plotter.PostStep
	l.LineStyle = draw.LineStyle{Color: blue, Width: vg.Points(1.6)}
	p.Add(plotter.NewGrid(), l)
	p.Legend.Add("hypervolume", l)
	if err := addScatter(p, grew, draw.CircleGlyph{}, orange, 2.6, "a trial enlarged the front"); err != nil {
		return nil, err
	}
	p.Legend.Left = true
	pad(p, 0.04)
	headroom(p, 0.2)
	return p, nil
}

// Pareto plots objective x against objective y (names; "" for the
// primary objective and the next one): every trial faint, the Pareto
// trials (of all the objectives) highlighted, the baseline marked.
func Pareto(r *report.Report, x, y string) (*gplot.Plot, error) {
	tpl := r.Template
	xi, err := objective(r, "--x", x, tpl.Primary)
	if err != nil {
		return nil, err
	}
	yi, err := objective(r, "--y", y, (tpl.Primary+1)%len(tpl.Objectives))
	if err != nil {
		return nil, err
	}
	if len(r.Complete) == 0 {
		return nil, noTrials(r)
	}
	ox, oy := tpl.Objectives[xi], tpl.Objectives[yi]
	p := newPlot(fmt.Sprintf("Pareto front of %s over %d objectives, seen on two", r.Study.Name, len(tpl.Objectives)),
		objectiveLabel(ox), objectiveLabel(oy))
	feasible, infeasible, front := plotter.XYs{}, plotter.XYs{}, plotter.XYs{}
	for i, c := range r.Complete {
		pt := plotter.XY{X: c.Objectives[xi], Y: c.Objectives[yi]}
		switch {
		case slices.Contains(r.Pareto, i):
			front = append(front, pt)
		case search.Feasible(c.Violation):
			feasible = append(feasible, pt)
		default:
			infeasible = append(infeasible, pt)
		}
	}
	bx, _ := strategies.Metric(&r.Baseline, ox.Metric)
	by, _ := strategies.Metric(&r.Baseline, oy.Metric)
	base := plotter.XYs{{X: bx, Y: by}}
	// The axes span the trials within the constraints and the baseline:
	// a trial that violates one may lie orders of magnitude away (an
	// overloaded cluster's TTFT in minutes) and would flatten the front.
	// Such trials are drawn at the edge they are beyond, and counted.
	box := bounds(slices.Concat(front, feasible, base))
	if len(front)+len(feasible) == 0 {
		box = bounds(slices.Concat(infeasible, base))
	}
	box.pad(0.06)
	beyond := 0
	for k, pt := range infeasible {
		if c := box.clamp(pt); c != pt {
			infeasible[k] = c
			beyond++
		}
	}
	p.Add(plotter.NewGrid())
	if err := addScatter(p, feasible, draw.CircleGlyph{}, faint, 2.4, "trial"); err != nil {
		return nil, err
	}
	label := fmt.Sprintf("violates a constraint (%d)", len(infeasible))
	if beyond > 0 {
		label = fmt.Sprintf("violates a constraint (%d; %d beyond the axes, drawn at the edge)", len(infeasible), beyond)
	}
	if err := addScatter(p, infeasible, crossGlyph{}, faint, 2.4, label); err != nil {
		return nil, err
	}
	if err := addScatter(p, front, draw.CircleGlyph{}, orange, 3.4, fmt.Sprintf("Pareto trial (%d)", len(front))); err != nil {
		return nil, err
	}
	if err := addScatter(p, base, draw.PyramidGlyph{}, ink, 5, "baseline"); err != nil {
		return nil, err
	}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = box.x0, box.x1, box.y0, box.y1
	// The legend goes in the corner away from the better values, in room
	// of its own: the y axis grows by 15% of its span on the legend's
	// side, and the legend stands 4 pt off the axes.
	p.Legend.Left = !ox.Minimize
	p.Legend.Top = oy.Minimize
	off := vg.Points(4)
	p.Legend.XOffs, p.Legend.YOffs = -off, off
	if p.Legend.Left {
		p.Legend.XOffs = off
	}
	if p.Legend.Top {
		p.Legend.YOffs = -off
		headroom(p, 0.15)
	} else {
		p.Y.Min -= 0.15 * (p.Y.Max - p.Y.Min)
	}
	return p, nil
}

// crossGlyph is an × drawn as one path with strokes a third of its radius
// wide (draw.CrossGlyph's hairlines vanish next to filled circles).
type crossGlyph struct{}

func (crossGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: sty.Radius / 3})
	r := sty.Radius * math.Sqrt2 / 2
	var p vg.Path
	p.Move(vg.Point{X: pt.X - r, Y: pt.Y - r})
	p.Line(vg.Point{X: pt.X + r, Y: pt.Y + r})
	p.Move(vg.Point{X: pt.X - r, Y: pt.Y + r})
	p.Line(vg.Point{X: pt.X + r, Y: pt.Y - r})
	c.Stroke(p)
}

// addScatter adds pts (if any) with a glyph and a legend entry.
func addScatter(p *gplot.Plot, pts plotter.XYs, shape draw.GlyphDrawer, c color.Color, radius float64, legend string) error {
	if len(pts) == 0 {
		return nil
	}
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return err
	}
	s.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(radius), Shape: shape}
	p.Add(s)
	p.Legend.Add(legend, s)
	return nil
}

// hline is a horizontal line at y from x0 to x1.
func hline(x0, x1, y float64) (*plotter.Line, error) {
	return plotter.NewLine(plotter.XYs{{X: x0, Y: y}, {X: x1, Y: y}})
}

// headroom raises the top of the y axis by frac of its span, so that the
// legend at the top does not cover the data.
func headroom(p *gplot.Plot, frac float64) {
	span := p.Y.Max - p.Y.Min
	if span == 0 {
		span = math.Max(math.Abs(p.Y.Max), 1)
	}
	p.Y.Max += frac * span
}

// area is a rectangle of the plot's data.
type area struct{ x0, x1, y0, y1 float64 }

// bounds is the smallest area holding pts' finite points.
func bounds(pts plotter.XYs) area {
	a := area{math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)}
	for _, pt := range pts {
		if math.IsInf(pt.X, 0) || math.IsNaN(pt.X) || math.IsInf(pt.Y, 0) || math.IsNaN(pt.Y) {
			continue
		}
		a.x0, a.x1 = math.Min(a.x0, pt.X), math.Max(a.x1, pt.X)
		a.y0, a.y1 = math.Min(a.y0, pt.Y), math.Max(a.y1, pt.Y)
	}
	if a.x0 > a.x1 {
		return area{0, 1, 0, 1}
	}
	return a
}

// pad widens the area by frac of its span on each side.
func (a *area) pad(frac float64) {
	grow := func(lo, hi *float64) {
		span := *hi - *lo
		if span == 0 {
			span = math.Max(math.Abs(*hi), 1)
		}
		*lo -= frac * span
		*hi += frac * span
	}
	grow(&a.x0, &a.x1)
	grow(&a.y0, &a.y1)
}

// clamp moves pt onto the area's edge if it lies beyond it.
func (a area) clamp(pt plotter.XY) plotter.XY {
	return plotter.XY{X: math.Min(math.Max(pt.X, a.x0), a.x1), Y: math.Min(math.Max(pt.Y, a.y0), a.y1)}
}

// pad widens both axes by frac of their span on each side.
func pad(p *gplot.Plot, frac float64) {
	for _, a := range []*gplot.Axis{&p.X, &p.Y} {
		span := a.Max - a.Min
		if span == 0 {
			span = math.Max(math.Abs(a.Max), 1)
		}
		a.Min -= frac * span
		a.Max += frac * span
	}
}
