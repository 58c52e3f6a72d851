package plot

import (
	"bytes"
	"fmt"
	"html"
	"regexp"
	"strconv"
	"strings"
	"testing"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"optimize/internal/testkit/studykit"
)

// svgText is a text of a gonum SVG and its box in points, origin at the
// bottom left.
type svgText struct {
	text                  string
	left, right, bot, top float64
}

// svgTextRE reads vgsvg's texts: the start x, the negated baseline y (the
// page is flipped), the font size and the text.
var svgTextRE = regexp.MustCompile(`(<g transform="rotate\(90\)">\s*)?<text x="([-\d.]+)" y="([-\d.]+)" transform="scale\(1, -1\)"\s+style="[^"]*font-size:([\d.]+)px[^"]*">([^<]*)</text>`)

// svgTexts are the texts of an SVG drawn by Write, each boxed with
// Liberation Sans's metrics (the font gonum measured it with).
func svgTexts(t *testing.T, svg string) []svgText {
	t.Helper()
	var out []svgText
	for _, m := range svgTextRE.FindAllStringSubmatch(svg, -1) {
		txt := html.UnescapeString(m[5])
		x, _ := strconv.ParseFloat(m[2], 64)
		y, _ := strconv.ParseFloat(m[3], 64)
		size, _ := strconv.ParseFloat(m[4], 64)
		sty := draw.TextStyle{Font: font.From(sans, vg.Length(size)), Handler: gplot.DefaultTextHandler}
		ext, w := sty.FontExtents(), float64(sty.Width(txt))
		asc, desc := float64(ext.Ascent), float64(ext.Descent)
		if m[1] != "" {
			// Turned a quarter anticlockwise (a y axis label): the
			// baseline runs up from (y, x), the glyphs' tops face left.
			out = append(out, svgText{text: txt, left: y - asc, right: y + desc, bot: x, top: x + w})
			continue
		}
		out = append(out, svgText{text: txt, left: x, right: x + w, bot: -y - desc, top: -y + asc})
	}
	if n := strings.Count(svg, "<text"); n != len(out) || n == 0 {
		t.Fatalf("read %d of the SVG's %d texts", len(out), n)
	}
	return out
}

// On joint-slo's 17 parameters the parallel plot is legible: each
// parameter's name is one text of at least 8 pt, every text lies on the
// canvas, and no two texts (names, choices, range ends, title, axis
// texts) overlap.
func TestParallelLegibleAtSeventeenParameters(t *testing.T) {
	r, _ := studykit.SyntheticReport(t, "joint-slo", 60)
	if len(r.Template.Params) < 17 {
		t.Fatalf("joint-slo has %d parameters, the test wants 17+", len(r.Template.Params))
	}
	p, err := Parallel(r)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, p, "svg"); err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(t, buf.String())
	w, h := float64(Width.Points()), float64(Height.Points())
	for _, prm := range r.Template.Params {
		n := 0
		for _, tx := range texts {
			if tx.text == prm.Name {
				n++
				if tx.top-tx.bot < 8 {
					t.Errorf("%s: %.1f pt high, want at least 8", prm.Name, tx.top-tx.bot)
				}
			}
		}
		if n != 1 {
			t.Errorf("%s: %d labels, want 1", prm.Name, n)
		}
	}
	for _, o := range overlaps(texts, w, h) {
		t.Error(o)
	}
}

// overlaps lists the texts that leave a w×h canvas or overlap another.
func overlaps(texts []svgText, w, h float64) []string {
	var out []string
	for i, a := range texts {
		if a.left < 0 || a.right > w || a.bot < 0 || a.top > h {
			out = append(out, fmt.Sprintf("%q [%.1f, %.1f]×[%.1f, %.1f] leaves the %.0f×%.0f canvas", a.text, a.left, a.right, a.bot, a.top, w, h))
		}
		for _, b := range texts[i+1:] {
			// Half a point: a font's ascent and descent bound its tallest
			// glyphs, and gonum sets a legend's lines that close.
			if min(a.right, b.right)-max(a.left, b.left) > 0.5 && min(a.top, b.top)-max(a.bot, b.bot) > 0.5 {
				out = append(out, fmt.Sprintf("%q overlaps %q ", a.text, b.text))
			}
		}
	}
	return out
}

// Every kind, on joint-slo's five objectives and 17 parameters, has no
// text off the canvas and no two texts overlapping (the axis labels
// clear their ticks).
func TestEveryKindTextsApart(t *testing.T) {
	r, _ := studykit.SyntheticReport(t, "joint-slo", 60)
	for _, kind := range Kinds {
		p, err := Make(r, kind, "", "")
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := Write(&buf, p, "svg"); err != nil {
			t.Fatal(err)
		}
		for _, o := range overlaps(svgTexts(t, buf.String()), float64(Width.Points()), float64(Height.Points())) {
			t.Errorf("%s: %s", kind, o)
		}
	}
}
