package plot

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"io"
	"math"
	"regexp"
	"strings"
	"testing"

	gplot "gonum.org/v1/plot"

	"optimize/internal/testkit/studykit"
	"optimize/search"
)

// Every kind draws, on a template with numeric parameters and on one with
// categorical and conditional ones: a well-formed SVG and a PNG of the
// documented size.
func TestEveryKindRenders(t *testing.T) {
	wantW, wantH := PNGSize()
	if wantW != 1152 || wantH != 720 {
		t.Fatalf("PNG size %d×%d, want 8 × 5 in at 144 dpi = 1152×720", wantW, wantH)
	}
	for _, template := range []string{"slo-cascade", "precise-routing"} {
		r, _ := studykit.SyntheticReport(t, template, 30)
		for _, kind := range Kinds {
			p, err := Make(r, kind, "", "")
			if err != nil {
				t.Fatalf("%s %s: %v", template, kind, err)
			}
			var svg, img bytes.Buffer
			if err := Write(&svg, p, "svg"); err != nil {
				t.Fatal(err)
			}
			if err := wellFormed(svg.Bytes()); err != nil || svg.Len() < 2000 {
				t.Fatalf("%s %s: SVG of %d bytes: %v", template, kind, svg.Len(), err)
			}
			if err := Write(&img, p, "png"); err != nil {
				t.Fatal(err)
			}
			cfg, err := png.DecodeConfig(&img)
			if err != nil || cfg.Width != wantW || cfg.Height != wantH {
				t.Fatalf("%s %s: PNG %d×%d (%v), want %d×%d", template, kind, cfg.Width, cfg.Height, err, wantW, wantH)
			}
		}
	}
}

// wellFormed reads every token of an XML document.
func wellFormed(doc []byte) error {
	d := xml.NewDecoder(bytes.NewReader(doc))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// glyphPaths counts the history's trial marks in its SVG: circles (a path
// of two arcs) and crosses (a path of two strokes), each including its
// legend entry.
func glyphPaths(svg string) (circles, crosses int) {
	circles = len(regexp.MustCompile(`<path d="M[-\d.,]+A[^"]*A[^"]*Z"`).FindAllString(svg, -1))
	crosses = len(regexp.MustCompile(`<path d="M[-\d.,]+L[-\d.,]+M[-\d.,]+L[-\d.,]+"`).FindAllString(svg, -1))
	return
}

// The history marks every trial once, infeasible trials as crosses, and
// its step line is the best feasible value so far: it starts at the first
// feasible trial and never rises (the primary is minimised), even where an
// infeasible trial has the better value or score.
func TestHistoryMarksEveryTrial(t *testing.T) {
	r, penalised := studykit.SyntheticReport(t, "slo-cascade", 40)
	// The first four trials miss a constraint, the second with a value far
	// better than any other trial's.
	for i := range 4 {
		c := &r.Complete[i]
		c.Violations, c.Violation, c.Score = []float64{0.003}, 0.003, c.Score+3
	}
	r.Complete[1].Objectives[r.Template.Primary] = 1
	penalised += 4 // and trial 4, as every fifth
	feasible, infeasible, incumbent := historyMarks(r)
	if len(feasible)+len(infeasible) != 40 || len(infeasible) != penalised || penalised != 12 {
		t.Fatalf("%d circles and %d crosses for 40 trials of which %d penalised", len(feasible), len(infeasible), penalised)
	}
	if len(incumbent) != 35 || incumbent[0].X != 5 {
		t.Fatalf("the line has %d points from trial %v, want 35 from the first feasible trial, 5", len(incumbent), incumbent[0].X)
	}
	lowest := math.Inf(1)
	for i, pt := range incumbent {
		lowest = min(lowest, r.Complete[int(pt.X)].Objectives[r.Template.Primary])
		if !search.Feasible(r.Complete[int(pt.X)].Violation) {
			lowest = incumbent[max(i-1, 0)].Y
		}
		if pt.Y != lowest || (i > 0 && pt.Y > incumbent[i-1].Y) || pt.Y == 1 {
			t.Fatalf("trial %v: step at %v, want the lowest feasible value so far %v", pt.X, pt.Y, lowest)
		}
	}
	p, err := History(r)
	if err != nil {
		t.Fatal(err)
	}
	var svg bytes.Buffer
	if err := Write(&svg, p, "svg"); err != nil {
		t.Fatal(err)
	}
	circles, crosses := glyphPaths(svg.String())
	if circles != 28+1 || crosses != 12+1 {
		t.Fatalf("SVG has %d circles and %d crosses, want 28 and 12 plus one of each in the legend", circles, crosses)
	}
}

func TestParetoObjectives(t *testing.T) {
	r, _ := studykit.SyntheticReport(t, "slo-cascade", 20)
	if _, err := Pareto(r, "e2e_p99", "slo_gap"); err != nil {
		t.Fatal(err)
	}
	_, err := Pareto(r, "nope", "")
	if err == nil || !strings.HasPrefix(err.Error(), "--x: ") || !strings.Contains(err.Error(), "critical_ttft_p99, tokens_per_sec, e2e_p99, slo_gap") {
		t.Fatalf("unknown --x: %v", err)
	}
	if err := CheckObjectives(r, "", "nope"); err == nil || !strings.HasPrefix(err.Error(), "--y: ") {
		t.Fatalf("unknown --y: %v", err)
	}
}

func TestAxisPosition(t *testing.T) {
	logp := search.Param{Kind: search.LogFloat, Low: 0.001, High: 0.1}
	cat := search.Param{Kind: search.Categorical, Choices: []string{"a", "b", "c", "d"}}
	lin := search.Param{Kind: search.Int, Low: 0, High: 512}
	for _, c := range []struct {
		p    search.Param
		v    search.Value
		want float64
	}{{logp, search.Value{Number: 0.01}, 0.5}, {logp, search.Value{Number: 0.1}, 1}, {cat, search.Value{Choice: "c"}, 2.0 / 3}, {lin, search.Value{Number: 128}, 0.25}} {
		if got := axisPosition(c.p, c.v); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s at %v: %v, want %v", c.p.Kind, c.v, got, c.want)
		}
	}
	if !math.IsNaN(axisPosition(lin, search.Inactive())) {
		t.Error("an inactive value has a position")
	}
}

// A trial's line crosses only the axes of its active parameters, and the
// best trial is drawn last in the best colour.
func TestParallelSkipsInactive(t *testing.T) {
	r, _ := studykit.SyntheticReport(t, "precise-routing", 30)
	lines, ts, _, _ := parallelLines(r, parallelRows(r))
	if len(lines) != 30 {
		t.Fatalf("%d lines for 30 trials", len(lines))
	}
	inactive := 0
	for _, c := range r.Complete {
		for _, v := range c.Params {
			if v.Absent() {
				inactive++
			}
		}
	}
	points := 0
	for _, l := range lines {
		points += len(l)
	}
	if inactive == 0 || points != 30*len(r.Template.Params)-inactive {
		t.Fatalf("%d points for 30 trials of %d parameters with %d inactive values", points, len(r.Template.Params), inactive)
	}
	if ts[len(ts)-1] != 0 || ts[0] != 1 {
		t.Fatalf("colour positions run from %v to %v, want worst (1) first and best (0) last", ts[0], ts[len(ts)-1])
	}
}

func TestFormatOf(t *testing.T) {
	for path, want := range map[string]string{"a.svg": "svg", "b/c.PNG": "png"} {
		if got, err := FormatOf(path); got != want || err != nil {
			t.Errorf("%s: %q, %v", path, got, err)
		}
	}
	if _, err := FormatOf("a.pdf"); err == nil || !strings.Contains(err.Error(), "-o") || !strings.Contains(err.Error(), ".svg, .png") {
		t.Fatalf("a.pdf: %v", err)
	}
}

func TestUnit(t *testing.T) {
	for metric, want := range map[string]string{"per_slo.critical.ttft_ms.p99": "ms", "kv.transfer_ms": "ms", "tokens_per_sec": "tokens/s",
		"goodput": "req/s", "per_slo.critical.goodput": "req/s", "slo_gap": "ratio", "per_slo.critical.attainment": "fraction",
		"per_slo.sheddable.rejected": "requests"} {
		if got := Unit(metric); got != want {
			t.Errorf("%s: %q, want %q", metric, got, want)
		}
	}
}

// A trial that violates a constraint far away (an overloaded cluster's
// TTFT in minutes) is drawn at the edge of axes that span the feasible
// trials and the baseline, and counted in the legend; it does not flatten
// the front.
func TestParetoAxesSpanTheFeasibleTrials(t *testing.T) {
	r, _ := studykit.SyntheticReport(t, "slo-cascade", 20)
	far := -1
	for i := range r.Complete {
		if !search.Feasible(r.Complete[i].Violation) {
			far = i
			break
		}
	}
	if far < 0 {
		t.Fatal("the synthetic study has no infeasible trial")
	}
	yi := (r.Template.Primary + 1) % len(r.Template.Objectives)
	r.Complete[far].Objectives[yi] = 1e9
	p, err := Pareto(r, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if p.Y.Max >= 1e6 {
		t.Fatalf("y axis reaches %v: the far infeasible trial sets the scale", p.Y.Max)
	}
	var svg bytes.Buffer
	if err := Write(&svg, p, "svg"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(svg.String(), "beyond the axes, drawn at the edge") {
		t.Fatal("the legend does not say that a trial is drawn at the edge")
	}
}

// A value axis is labelled at four ticks or more, every label with the
// same decimals; a trial axis only at whole numbers.
func TestAxisTicks(t *testing.T) {
	for _, c := range []struct{ lo, hi float64 }{{90, 1050}, {2.75, 3.2}, {0, 1}, {0.001, 0.004}} {
		var labels []string
		for _, tk := range (readableTicks{}).Ticks(c.lo, c.hi) {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		if len(labels) < 4 {
			t.Errorf("[%g, %g]: labels %v, want at least 4", c.lo, c.hi, labels)
		}
		_, frac, _ := strings.Cut(labels[0], ".")
		for _, l := range labels {
			if _, f, _ := strings.Cut(l, "."); len(f) != len(frac) {
				t.Errorf("[%g, %g]: labels %v with different decimals", c.lo, c.hi, labels)
				break
			}
		}
	}
	for _, c := range []struct{ lo, hi float64 }{{0, 3}, {0, 39}, {5, 7}} {
		ticks := (wholeTicks{}).Ticks(c.lo, c.hi)
		if len(ticks) < 2 {
			t.Errorf("[%g, %g]: %d whole ticks", c.lo, c.hi, len(ticks))
		}
		for _, tk := range ticks {
			if tk.Value != math.Trunc(tk.Value) {
				t.Errorf("[%g, %g]: a trial tick at %v", c.lo, c.hi, tk.Value)
			}
		}
	}
}

// The history's y axis is logarithmic exactly when the report says the
// primary values span more than a decade (Report.PrimaryLogScale), and
// its label says so.
func TestHistoryLogAxisOverADecade(t *testing.T) {
	r, _ := studykit.SyntheticReport(t, "slo-cascade", 20)
	for _, far := range []bool{false, true} {
		if far {
			r.Complete[3].Objectives[r.Template.Primary] = 1000 * r.PrimaryBaseline()
		}
		p, err := History(r)
		if err != nil {
			t.Fatal(err)
		}
		_, isLog := p.Y.Scale.(gplot.LogScale)
		if isLog != far || r.PrimaryLogScale() != far || strings.Contains(p.Y.Label.Text, "log scale") != far {
			t.Errorf("a trial at 1000× the baseline %v: log axis %v, label %q", far, isLog, p.Y.Label.Text)
		}
	}
}
