// Package plot draws a study's pictures with gonum's plot library: the
// optimisation history, the hypervolume history, two objectives of the
// Pareto front, the parameters in parallel coordinates and the parameter
// importance; and renders the study as one self-contained HTML page. It
// also draws a workload's pictures (rate, lengths, prefix reuse).
package plot

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"optimize/strategies"
	"optimize/studies/report"
)

// Kinds are the plot kinds, in the order the report shows them.
var Kinds = []string{"history", "hypervolume", "pareto", "parallel", "importance"}

// Formats are the file formats Write accepts, by file extension.
var Formats = []string{"svg", "png"}

// A picture is Width × Height; a PNG has DPI pixels per inch of it.
const (
	Width  = 8 * vg.Inch
	Height = 5 * vg.Inch
	DPI    = 144
)

// PNGSize is the pixel size of a PNG Write produces.
func PNGSize() (w, h int) {
	return int(Width.Dots(DPI) + 0.5), int(Height.Dots(DPI) + 0.5)
}

// Colours of the pictures.
var (
	blue   = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	orange = color.RGBA{R: 0xe6, G: 0x6a, B: 0x00, A: 0xff}
	red    = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	ink    = color.RGBA{R: 0x22, G: 0x22, B: 0x22, A: 0xff}
	grey   = color.RGBA{R: 0x88, G: 0x88, B: 0x88, A: 0xff}
	faint  = color.RGBA{R: 0xb0, G: 0xb0, B: 0xb0, A: 0xff}
)

// Make draws the plot of kind; x and y name the objectives of "pareto"
// ("" for the defaults: the primary objective and the next one).
func Make(r *report.Report, kind, x, y string) (*gplot.Plot, error) {
	switch kind {
	case "history":
		return History(r)
	case "hypervolume":
		return Hypervolume(r)
	case "pareto":
		return Pareto(r, x, y)
	case "parallel":
		return Parallel(r)
	case "importance":
		return Importance(r)
	}
	return nil, fmt.Errorf("--kind: unknown value %q (allowed: %s)", kind, strings.Join(Kinds, ", "))
}

// FormatOf is the format a file name asks for by its extension.
func FormatOf(path string) (string, error) {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	for _, f := range Formats {
		if ext == f {
			return f, nil
		}
	}
	return "", fmt.Errorf("-o: %q has no known extension (allowed: .svg, .png)", path)
}

// Write renders p as format ("svg" or "png") at Width × Height.
func Write(w io.Writer, p *gplot.Plot, format string) error {
	switch format {
	case "svg":
		c := vgsvg.New(Width, Height)
		drawWithMargin(p, c)
		_, err := c.WriteTo(w)
		return err
	case "png":
		c := vgimg.NewWith(vgimg.UseWH(Width, Height), vgimg.UseDPI(DPI))
		drawWithMargin(p, c)
		_, err := vgimg.PngCanvas{Canvas: c}.WriteTo(w)
		return err
	}
	return fmt.Errorf("format %q (allowed: %s)", format, strings.Join(Formats, ", "))
}

// margin is the white space around a plot.
const margin = 10 * vg.Millimeter / 2

// drawWithMargin paints the canvas white and draws p inside the margin.
func drawWithMargin(p *gplot.Plot, c vg.CanvasSizer) {
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	p.Draw(draw.Crop(dc, margin, -margin, margin, -margin))
}

// sans is the typeface of every text (gonum embeds Liberation Sans; its
// metrics are Arial's and Helvetica's).
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// newPlot is a plot with a title, axis labels, sans-serif text, a light
// grid and the legend at the top right.
func newPlot(title, x, y string) *gplot.Plot {
	p := gplot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sans, 13)
	p.Title.Padding = vg.Points(8)
	p.X.Label.Text, p.Y.Label.Text = x, y
	for _, a := range []*gplot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, 11)
		a.Tick.Label.Font = font.From(sans, 9)
		a.Label.Padding = vg.Points(4)
	}
	p.Y.Tick.Marker = readableTicks{}
	p.Legend.TextStyle.Font = font.From(sans, 9)
	p.Legend.Top = true
	p.Legend.Padding = vg.Points(2)
	p.Legend.ThumbnailWidth = vg.Points(18)
	return p
}

// noTrials is the error of a plot of a study without a complete trial.
func noTrials(r *report.Report) error {
	return fmt.Errorf("study %s has no complete trial to plot yet", r.Study.Name)
}

// objectiveLabel names an objective with its unit and direction, e.g.
// "critical_ttft_p99 (ms, lower is better)".
func objectiveLabel(o strategies.Objective) string {
	dir := "higher is better"
	if o.Minimize {
		dir = "lower is better"
	}
	if u := Unit(o.Metric); u != "" {
		return fmt.Sprintf("%s (%s, %s)", o.Name, u, dir)
	}
	return fmt.Sprintf("%s (%s)", o.Name, dir)
}

// Unit is a metric path's unit from the one table of units
// (strategies.MetricUnit): "ms" for latencies, "tokens/s", "req/s",
// "fraction", "ratio", "requests".
func Unit(metric string) string { return strategies.MetricUnit(metric) }

// objective finds an objective by name; "" is def.
func objective(r *report.Report, flag, name string, def int) (int, error) {
	if name == "" {
		return def, nil
	}
	names := make([]string, len(r.Template.Objectives))
	for i, o := range r.Template.Objectives {
		if o.Name == name {
			return i, nil
		}
		names[i] = o.Name
	}
	return 0, fmt.Errorf("%s: unknown objective %q (allowed: %s)", flag, name, strings.Join(names, ", "))
}

// CheckObjectives checks the names --x and --y give against the study's
// template ("" is the default).
func CheckObjectives(r *report.Report, x, y string) error {
	if _, err := objective(r, "--x", x, 0); err != nil {
		return err
	}
	_, err := objective(r, "--y", y, 0)
	return err
}

// readableTicks are gonum's default ticks with the minor ticks labelled
// too when the defaults label fewer than four: an axis labelled only at
// 200, 600 and 1000 leaves a reader guessing where 300 ms is.
type readableTicks struct{}

// Ticks implements gplot.Ticker.
func (readableTicks) Ticks(lo, hi float64) []gplot.Tick {
	ticks := gplot.DefaultTicks{}.Ticks(lo, hi)
	labelled := 0
	for _, t := range ticks {
		if t.Label != "" {
			labelled++
		}
	}
	if labelled >= 4 || len(ticks) < 2 {
		return ticks
	}
	values := make([]float64, len(ticks))
	for i, t := range ticks {
		values[i] = t.Value
	}
	slices.Sort(values)
	step := math.Inf(1)
	for i := 1; i < len(values); i++ {
		if d := values[i] - values[i-1]; d > 0 {
			step = math.Min(step, d)
		}
	}
	if math.IsInf(step, 1) {
		return ticks
	}
	// Every label with the decimals the finest step needs, so that 3 and
	// 3.1 are not written 3 and 3.1 beside 3.0.
	decimals := max(0, int(math.Ceil(-math.Log10(step)-1e-9)))
	for i := range ticks {
		ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'f', decimals, 64)
	}
	return ticks
}

// wholeTicks label an axis of counts (trial numbers) at whole numbers
// only: gonum's defaults would put a tick at trial 2.5 on a short study.
type wholeTicks struct{}

// Ticks implements gplot.Ticker.
func (wholeTicks) Ticks(lo, hi float64) []gplot.Tick {
	var out []gplot.Tick
	for _, t := range (gplot.DefaultTicks{}).Ticks(lo, hi) {
		if t.Label != "" && t.Value == math.Trunc(t.Value) {
			out = append(out, gplot.Tick{Value: t.Value, Label: strconv.FormatFloat(t.Value, 'f', 0, 64)})
		}
	}
	if len(out) >= 2 {
		return out
	}
	out = out[:0]
	for v := math.Ceil(lo); v <= hi; v++ {
		out = append(out, gplot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', 0, 64)})
	}
	return out
}
