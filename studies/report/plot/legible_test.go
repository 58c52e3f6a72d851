package plot

import (
	"bytes"
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
var svgTextRE = regexp.MustCompile(`<text x="([-\d.]+)" y="([-\d.]+)" transform="scale\(1, -1\)"\s+style="[^"]*font-size:([\d.]+)px[^"]*">([^<]*)</text>`)

// svgTexts are the texts of an SVG drawn by Write, each boxed with
// Liberation Sans's metrics (the font gonum measured it with).
func svgTexts(t *testing.T, svg string) []svgText {
	t.Helper()
	var out []svgText
	for _, m := range svgTextRE.FindAllStringSubmatch(svg, -1) {
		txt := html.UnescapeString(m[4])
		x, _ := strconv.ParseFloat(m[1], 64)
		y, _ := strconv.ParseFloat(m[2], 64)
		size, _ := strconv.ParseFloat(m[3], 64)
		sty := draw.TextStyle{Font: font.From(sans, vg.Length(size)), Handler: gplot.DefaultTextHandler}
		ext := sty.FontExtents()
		out = append(out, svgText{text: txt, left: x, right: x + float64(sty.Width(txt)),
			bot: -y - float64(ext.Descent), top: -y + float64(ext.Ascent)})
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
	for i, a := range texts {
		if a.left < 0 || a.right > w || a.bot < 0 || a.top > h {
			t.Errorf("%q [%.1f, %.1f]×[%.1f, %.1f] leaves the %.0f×%.0f canvas", a.text, a.left, a.right, a.bot, a.top, w, h)
		}
		for _, b := range texts[i+1:] {
			if min(a.right, b.right)-max(a.left, b.left) > 0.1 && min(a.top, b.top)-max(a.bot, b.bot) > 0.1 {
				t.Errorf("%q overlaps %q", a.text, b.text)
			}
		}
	}
}
