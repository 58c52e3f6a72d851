package cli

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"optimize/studies/report/plot"
)

// Every kind writes a well-formed SVG and a PNG of the documented size;
// the history marks each complete trial once; the report holds the
// pictures, the validation and the ablation, and refers to nothing
// outside itself.
func TestStudyPlotAndReport(t *testing.T) {
	dir := t.TempDir()
	dsn := filepath.Join(dir, "s.db")
	if code, _, errs := run(t, "study", "create", "slo-cascade", "--trials", "12", "--name", "p", "--storage", dsn, "--workers", "1"); code != 0 {
		t.Fatalf("create: exit %d: %s", code, errs)
	}
	wantW, wantH := plot.PNGSize()
	for _, kind := range plot.Kinds {
		for _, ext := range []string{"svg", "png"} {
			out := filepath.Join(dir, kind+"."+ext)
			code, stdout, errs := run(t, "study", "plot", "p", "--kind", kind, "-o", out, "--storage", dsn)
			if code != 0 || stdout != "" {
				t.Fatalf("plot %s: exit %d, stdout %q, stderr %s", out, code, stdout, errs)
			}
			data, err := os.ReadFile(out)
			if err != nil || len(data) == 0 {
				t.Fatalf("%s: %d bytes, %v", out, len(data), err)
			}
			if ext == "svg" {
				if err := xmlWellFormed(data); err != nil {
					t.Fatalf("%s is not well-formed XML: %v", out, err)
				}
				continue
			}
			img, err := png.Decode(bytes.NewReader(data))
			if err != nil || img.Bounds().Dx() != wantW || img.Bounds().Dy() != wantH {
				t.Fatalf("%s: %v (%v), want %d×%d", out, img.Bounds(), err, wantW, wantH)
			}
		}
	}
	svg, _ := os.ReadFile(filepath.Join(dir, "history.svg"))
	if n := trialMarks(string(svg)); n != 12 {
		t.Fatalf("the history marks %d trials, want the study's 12", n)
	}
	out := filepath.Join(dir, "tps.svg")
	if code, _, errs := run(t, "study", "plot", "p", "--kind", "pareto", "--x", "e2e_p99", "--y", "tokens_per_sec", "-o", out, "--storage", dsn); code != 0 {
		t.Fatalf("pareto --x --y: exit %d: %s", code, errs)
	}
	if svg, _ := os.ReadFile(out); !strings.Contains(string(svg), "e2e_p99 (ms, lower is better)") || !strings.Contains(string(svg), "tokens_per_sec (tokens/s, higher is better)") {
		t.Fatal("the pareto plot does not label the chosen objectives with their units")
	}

	for _, args := range [][]string{{"validate", "p", "--seeds", "100,101"}, {"ablate", "p"}} {
		if code, _, errs := run(t, append(append([]string{"study"}, args...), "--storage", dsn, "--workers", "2")...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
	}
	report := filepath.Join(dir, "report.html")
	if code, _, errs := run(t, "study", "report", "p", "-o", report, "--storage", dsn); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	html, _ := os.ReadFile(report)
	page := string(html)
	if n := strings.Count(page, "<svg"); n < 4 {
		t.Errorf("the report has %d inline SVGs, want the five pictures", n)
	}
	for _, banned := range []string{"http://", "https://"} {
		if strings.Contains(page, banned) {
			t.Errorf("the report contains %q", banned)
		}
	}
	for _, want := range []string{"<h1>Study p</h1>", "slo-cascade", "orthogonal-slo", "Held-out validation", "Ablation of trial", "critical_prefill_chunk"} {
		if !strings.Contains(page, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	t.Logf("report: %d bytes", len(html))
}

// trialMarks counts a history SVG's trial marks: circles (a path of two
// arcs) and crosses (a path of two strokes), less one legend entry per
// kind of mark present.
func trialMarks(svg string) int {
	n := 0
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`<path d="M[-\d.,]+A[^"]*A[^"]*Z"`),
		regexp.MustCompile(`<path d="M[-\d.,]+L[-\d.,]+M[-\d.,]+L[-\d.,]+"`),
	} {
		if k := len(re.FindAllString(svg, -1)); k > 0 {
			n += k - 1
		}
	}
	return n
}

func xmlWellFormed(doc []byte) error {
	d := xml.NewDecoder(bytes.NewReader(doc))
	for {
		if _, err := d.Token(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// Text from a user template is escaped in the report; a study whose every
// trial violates a constraint is drawn with one cross per trial.
func TestStudyReportEscapesTemplateText(t *testing.T) {
	dir := t.TempDir()
	writeAttainmentFloorTemplate(t, dir, "hostile", `"<script>alert(1)</script> The baseline's queue-depth weight, holding critical attainment to 0.99."`)
	dsn := filepath.Join(dir, "s.db")
	if code, _, errs := run(t, "--templates-dir", dir, "study", "create", "hostile", "--trials", "4", "--name", "h", "--storage", dsn, "--workers", "1"); code != 0 {
		t.Fatalf("create: exit %d: %s", code, errs)
	}
	code, page, errs := run(t, "--templates-dir", dir, "study", "report", "h", "--storage", dsn)
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	if strings.Contains(page, "<script") || !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Fatal("the template's description is not escaped in the report")
	}
	svg := filepath.Join(dir, "h.svg")
	if code, _, errs := run(t, "--templates-dir", dir, "study", "plot", "h", "-o", svg, "--storage", dsn); code != 0 {
		t.Fatalf("plot: exit %d: %s", code, errs)
	}
	data, _ := os.ReadFile(svg)
	crosses := regexp.MustCompile(`<path d="M[-\d.,]+L[-\d.,]+M[-\d.,]+L[-\d.,]+"`).FindAllString(string(data), -1)
	if trialMarks(string(data)) != 4 || len(crosses) != 4+1 {
		t.Fatalf("%d marks, %d crosses with the legend's: want 4 trials, all violating the attainment floor", trialMarks(string(data)), len(crosses))
	}
}

// Bad requests exit 2 with one line naming the flag and what is allowed,
// and write no file.
func TestStudyPlotUsageErrors(t *testing.T) {
	dir := t.TempDir()
	dsn := filepath.Join(dir, "s.db")
	if code, _, errs := run(t, "study", "create", "slo-cascade", "--trials", "2", "--name", "u", "--storage", dsn, "--workers", "1"); code != 0 {
		t.Fatalf("create: exit %d: %s", code, errs)
	}
	svg := filepath.Join(dir, "x.svg")
	for _, c := range []struct {
		name string
		args []string
		say  []string
	}{
		{"unknown kind", []string{"--kind", "pie", "-o", svg}, []string{"--kind", "history, hypervolume, pareto, parallel, importance"}},
		{"unknown objective", []string{"--kind", "pareto", "--x", "nope", "-o", svg}, []string{"--x", "critical_ttft_p99, tokens_per_sec, e2e_p99, slo_gap"}},
		{"unknown y objective", []string{"--kind", "pareto", "--y", "nope", "-o", svg}, []string{"--y", "critical_ttft_p99"}},
		{"bad extension", []string{"-o", filepath.Join(dir, "x.pdf")}, []string{"-o", ".svg, .png"}},
		{"no output", nil, []string{"-o", ".svg, .png"}},
		{"x without pareto", []string{"--kind", "history", "--x", "slo_gap", "-o", svg}, []string{"--x", "pareto"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := run(t, append([]string{"study", "plot", "u", "--storage", dsn}, c.args...)...)
			if code != 2 || out != "" || strings.Count(strings.TrimRight(errs, "\n"), "\n") != 0 {
				t.Fatalf("exit %d, stdout %q, stderr %q (want exit 2 and one line)", code, out, errs)
			}
			for _, s := range c.say {
				if !strings.Contains(errs, s) {
					t.Errorf("stderr %q does not name %q", errs, s)
				}
			}
			if _, err := os.Stat(svg); err == nil {
				t.Fatal("a file was written")
			}
		})
	}
}
