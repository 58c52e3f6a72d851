package report_test

import (
	"bytes"
	"encoding/csv"
	"math"
	"strconv"
	"strings"
	"testing"

	"optimize/internal/testkit/studykit"
	"optimize/studies/report"
)

// significant counts the significant digits of a plain decimal.
func significant(s string) int {
	s = strings.TrimLeft(strings.ReplaceAll(strings.TrimLeft(s, "-"), ".", ""), "0")
	return len(strings.TrimRight(s, "0"))
}

func TestHumanIsPlainBetweenAThousandthAndABillion(t *testing.T) {
	for v, want := range map[float64]string{17684.3: "17684", 303.27: "303.3", 5379: "5379", 0.99734: "0.9973", 2.5: "2.5",
		0.0012346: "0.001235", -70.71: "-70.71", 0: "0", 999999999: "999999999", 2e9: "2e+09", 0.0001234: "0.0001234", math.NaN(): "–"} {
		if got := report.Human(v); got != want {
			t.Errorf("Human(%v) = %q, want %q", v, got, want)
		}
	}
	for v := 0.001; v < 1e9; v *= 1.37 {
		got := report.Human(v)
		back, err := strconv.ParseFloat(got, 64)
		if strings.ContainsAny(got, "eE") || err != nil || math.Abs(back-v) > 5e-4*v {
			t.Fatalf("Human(%v) = %q: want plain decimals within 0.05 %%", v, got)
		}
		if v < 1e4 && significant(got) > 4 {
			t.Fatalf("Human(%v) = %q: more than 4 significant digits", v, got)
		}
	}
}

func TestCSVNumberHasTheStatedDigits(t *testing.T) {
	if got := report.CSVNumber(521.8557799999999); got != "521.856" {
		t.Fatalf("CSVNumber(521.8557799999999) = %q, want 521.856", got)
	}
	for v := 0.001; v < 1e9; v *= 1.2345 {
		got := report.CSVNumber(v)
		back, err := strconv.ParseFloat(got, 64)
		if strings.ContainsAny(got, "eE") || err != nil || significant(got) > report.CSVDigits || math.Abs(back-v) > 1e-5*v {
			t.Fatalf("CSVNumber(%v) = %q: want at most %d significant digits, plain", v, got, report.CSVDigits)
		}
	}
	if report.CSVNumber(math.Inf(1)) != "" {
		t.Fatal("an infinite number is not an empty cell")
	}
}

// show's table gives every metric a unit and no number in scientific
// notation; the CSV export's numbers have at most CSVDigits digits and
// its Δ columns are fractions named _delta.
func TestShowHasUnitsAndExportsRoundedFractions(t *testing.T) {
	env := studykit.TempEnv(t, 1)
	o := studykit.Study("slo-cascade", "u", 3)
	o.Sampler, o.SamplerSeed = "random", 3
	r := studykit.RunStudy(t, env, o)
	var text bytes.Buffer
	r.WriteTable(&text)
	if strings.Contains(text.String(), "e+") || strings.Contains(text.String(), "e-0") {
		t.Errorf("show prints scientific notation:\n%s", text.String())
	}
	rows := r.Table()
	if len(rows) < 5 {
		t.Fatalf("%d table rows", len(rows))
	}
	for _, row := range rows {
		if row.Unit == "" {
			t.Errorf("row %s has no unit", row.Name)
		}
		if row.Name == "throughput" && (row.Unit != "tokens/s" || row.Baseline < 1e4) {
			t.Errorf("throughput row: unit %q, baseline %v (want tokens/s, above 10⁴ so that the test sees a large number)", row.Unit, row.Baseline)
		}
	}
	if !strings.Contains(text.String(), " tokens/s ") || !strings.Contains(text.String(), " ms ") {
		t.Errorf("show's table names no units:\n%s", text.String())
	}
	var out bytes.Buffer
	if err := r.Export(&out, "csv", false); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	deltas := 0
	for j, h := range recs[0] {
		if strings.HasSuffix(h, "_pct") {
			t.Errorf("column %s: per cent in an export whose every Δ is a fraction", h)
		}
		for _, rec := range recs[1:] {
			if f, err := strconv.ParseFloat(rec[j], 64); err == nil {
				if significant(strings.TrimLeft(rec[j], "-")) > report.CSVDigits {
					t.Errorf("column %s: %q has more than %d significant digits", h, rec[j], report.CSVDigits)
				}
				if strings.HasSuffix(h, "_delta") && math.Abs(f) > 5 {
					t.Errorf("column %s: %v is not a fraction", h, f)
				}
			}
		}
		if strings.HasSuffix(h, "_delta") {
			deltas++
		}
	}
	if deltas != len(r.Template.Objectives) {
		t.Errorf("%d _delta columns, want one per objective (%d): %v", deltas, len(r.Template.Objectives), recs[0])
	}
}
