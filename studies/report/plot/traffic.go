package plot

import (
	"fmt"
	"image/color"
	"io"
	"slices"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"optimize/traffic"
)

// Figure is a picture with the caption printed beneath it.
type Figure struct {
	Name    string // file name without extension
	Caption string
	Plot    *gplot.Plot
}

// TrafficFigures are a workload's pictures: its rate over time, the CDFs
// of its input and output lengths, and (when it has prefix identity) its
// prefix reuse over time.
func TrafficFigures(name string, st *traffic.Stats) ([]Figure, error) {
	rate, err := rateFigure(name, st)
	if err != nil {
		return nil, err
	}
	lengths, err := lengthFigure(name, st)
	if err != nil {
		return nil, err
	}
	out := []Figure{rate, lengths}
	if st.Reuse != nil {
		reuse, err := reuseFigure(name, st)
		if err != nil {
			return nil, err
		}
		out = append(out, reuse)
	}
	return out, nil
}

func rateFigure(name string, st *traffic.Stats) (Figure, error) {
	p := newPlot(fmt.Sprintf("%s: request rate per %s window", name, seconds(st.WindowS)), "time since the first request (minutes)", "rate (requests/s)")
	pts := make(plotter.XYs, 0, len(st.Windows)+1)
	for _, w := range st.Windows {
		pts = append(pts, plotter.XY{X: w.StartS / 60, Y: w.Rate})
	}
	last := st.Windows[len(st.Windows)-1]
	pts = append(pts, plotter.XY{X: st.SpanS / 60, Y: last.Rate})
	line, err := plotter.NewLine(pts)
	if err != nil {
		return Figure{}, err
	}
	line.StepStyle = plotter.PostStep
	line.LineStyle = draw.LineStyle{Color: blue, Width: vg.Points(1.4)}
	mean, err := hline(0, st.SpanS/60, st.MeanRate)
	if err != nil {
		return Figure{}, err
	}
	mean.LineStyle = draw.LineStyle{Color: grey, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}
	p.Add(plotter.NewGrid(), line, mean)
	p.Legend.Add(fmt.Sprintf("rate per %s window", seconds(st.WindowS)), line)
	p.Legend.Add(fmt.Sprintf("mean %.2f req/s", st.MeanRate), mean)
	p.Y.Min = 0
	headroom(p, 0.2)
	caption := fmt.Sprintf("%d requests over %s; mean %.2f req/s, peak %.2f req/s in the %s window from minute %.0f; inter-arrival CV %.2f (1 for a Poisson stream).",
		st.Requests, seconds(st.SpanS), st.MeanRate, st.PeakRate, seconds(st.WindowS), st.PeakWindowS/60, st.InterArrivalCV)
	return Figure{Name: "rate", Caption: caption, Plot: p}, nil
}

func lengthFigure(name string, st *traffic.Stats) (Figure, error) {
	p := newPlot(fmt.Sprintf("%s: prompt and output lengths", name), "tokens (log scale)", "share of requests at or below (CDF)")
	p.X.Scale = gplot.LogScale{}
	p.X.Tick.Marker = gplot.LogTicks{Prec: -1}
	for _, s := range []struct {
		label string
		xs    []int
		c     color.Color
	}{{"input (prompt)", st.Inputs, blue}, {"output", st.Outputs, orange}} {
		line, err := plotter.NewLine(cdf(s.xs))
		if err != nil {
			return Figure{}, err
		}
		line.StepStyle = plotter.PostStep
		line.LineStyle = draw.LineStyle{Color: s.c, Width: vg.Points(1.6)}
		p.Add(line)
		p.Legend.Add(s.label, line)
	}
	p.Add(plotter.NewGrid())
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top, p.Legend.Left = false, false
	caption := fmt.Sprintf("Input tokens: mean %.0f, median %.0f, p90 %.0f, p99 %.0f, max %.0f. Output tokens: mean %.0f, median %.0f, p90 %.0f, p99 %.0f, max %.0f.",
		st.Input.Mean, st.Input.P50, st.Input.P90, st.Input.P99, st.Input.Max, st.Output.Mean, st.Output.P50, st.Output.P90, st.Output.P99, st.Output.Max)
	return Figure{Name: "lengths", Caption: caption, Plot: p}, nil
}

// cdf is the empirical CDF of xs (values below 1 drawn at 1, for the log
// scale).
func cdf(xs []int) plotter.XYs {
	s := slices.Clone(xs)
	slices.Sort(s)
	pts := plotter.XYs{}
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] == s[i] {
			j++
		}
		pts = append(pts, plotter.XY{X: float64(max(1, s[i])), Y: float64(j) / float64(len(s))})
		i = j
	}
	return pts
}

func reuseFigure(name string, st *traffic.Stats) (Figure, error) {
	p := newPlot(fmt.Sprintf("%s: prefix reuse per %s window", name, seconds(st.WindowS)), "time since the first request (minutes)",
		fmt.Sprintf("reused share of prompt (%%, %d-token blocks)", st.Reuse.BlockTokens))
	var byBlocks, byTokens plotter.XYs
	for _, w := range st.Windows {
		if w.BlockReuse == nil {
			continue
		}
		byBlocks = append(byBlocks, plotter.XY{X: w.StartS / 60, Y: 100 * *w.BlockReuse})
		byTokens = append(byTokens, plotter.XY{X: w.StartS / 60, Y: 100 * *w.TokenReuse})
	}
	p.Add(plotter.NewGrid())
	for _, s := range []struct {
		label string
		pts   plotter.XYs
		c     color.Color
		dash  []vg.Length
	}{{"blocks seen earlier / all blocks", byBlocks, blue, nil}, {"tokens of those blocks / all prompt tokens", byTokens, orange, []vg.Length{vg.Points(4), vg.Points(2)}}} {
		if len(s.pts) == 0 {
			continue
		}
		line, err := plotter.NewLine(s.pts)
		if err != nil {
			return Figure{}, err
		}
		line.StepStyle = plotter.PostStep
		line.LineStyle = draw.LineStyle{Color: s.c, Width: vg.Points(1.4), Dashes: s.dash}
		p.Add(line)
		p.Legend.Add(s.label, line)
	}
	p.Y.Min, p.Y.Max = 0, 100
	p.Legend.Top = false
	caption := fmt.Sprintf("A prompt block is reused when an earlier request contained it. Whole trace: %.1f %% of %d blocks, %.1f %% of prompt tokens; early windows reuse less (the cache of earlier requests is still empty).",
		100*st.Reuse.ByBlocks, st.Reuse.Blocks, 100*st.Reuse.ByTokens)
	return Figure{Name: "reuse", Caption: caption, Plot: p}, nil
}

// seconds names a duration in seconds as "60 s", "1 h 2 min", …
func seconds(s float64) string {
	switch {
	case s >= 3600:
		return fmt.Sprintf("%.0f s (%.2f h)", s, s/3600)
	case s >= 120:
		return fmt.Sprintf("%.0f s (%.1f min)", s, s/60)
	}
	return fmt.Sprintf("%g s", s)
}

// WriteFigure renders f as format ("svg" or "png") at Width × Height,
// its caption beneath the plot.
func WriteFigure(w io.Writer, f Figure, format string) error {
	switch format {
	case "svg":
		c := vgsvg.New(Width, Height)
		drawCaptioned(f, c)
		_, err := c.WriteTo(w)
		return err
	case "png":
		c := vgimg.NewWith(vgimg.UseWH(Width, Height), vgimg.UseDPI(DPI))
		drawCaptioned(f, c)
		_, err := vgimg.PngCanvas{Canvas: c}.WriteTo(w)
		return err
	}
	return fmt.Errorf("format %q (allowed: %s)", format, strings.Join(Formats, ", "))
}

// drawCaptioned paints the canvas white, prints the caption wrapped to
// the width at the bottom and draws the plot above it.
func drawCaptioned(f Figure, c vg.CanvasSizer) {
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	sty := text.Style{Color: ink, Font: font.From(sans, 10), Handler: gplot.DefaultTextHandler, YAlign: text.YTop}
	width := dc.Max.X - dc.Min.X - 2*margin
	lines := wrapTo(f.Caption, width, sty)
	lineH := sty.Height("Mg") * 1.25
	y := dc.Min.Y + margin + lineH*vg.Length(len(lines))
	for _, l := range lines {
		dc.FillText(sty, vg.Point{X: dc.Min.X + margin, Y: y}, l)
		y -= lineH
	}
	captionH := lineH*vg.Length(len(lines)) + margin
	f.Plot.Draw(draw.Crop(dc, margin, -margin, margin+captionH, -margin))
}

// wrapTo breaks s into lines no wider than width in sty.
func wrapTo(s string, width vg.Length, sty text.Style) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		next := word
		if line != "" {
			next = line + " " + word
		}
		if line != "" && sty.Width(next) > width {
			lines = append(lines, line)
			next = word
		}
		line = next
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
