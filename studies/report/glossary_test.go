package report_test

import (
	"bytes"
	"flag"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"optimize/studies/report"
)

var update = flag.Bool("update", false, "rewrite the README's Glossary section from the glossary")

// The glossary explains every word the brief of a report uses and every
// unit of the metric table.
func TestGlossaryNamesEveryTermAndUnit(t *testing.T) {
	doc := report.Glossary()
	for _, want := range []string{"slo_gap", "attainment", "goodput", "hypervolume", "score", "importance", "Δ (delta)", "seed range", "baseline"} {
		if !slices.ContainsFunc(doc.Terms, func(term report.Term) bool { return term.Name == want }) {
			t.Errorf("no glossary term %q", want)
		}
	}
	units := map[string]bool{}
	for _, u := range doc.Units {
		units[u.Unit] = true
	}
	if len(doc.Metrics) < 25 {
		t.Fatalf("%d metrics", len(doc.Metrics))
	}
	for _, m := range doc.Metrics {
		if !units[m.Unit] {
			t.Errorf("metric %s: unit %q is not explained among the units", m.Name, m.Unit)
		}
	}
	for _, term := range doc.Terms {
		if term.Name == "hypervolume" && !strings.Contains(term.Meaning, "reference point "+strconv.FormatFloat(report.HypervolumeReference, 'g', -1, 64)) {
			t.Errorf("the hypervolume's meaning does not state its reference point: %s", term.Meaning)
		}
	}
	var text bytes.Buffer
	report.WriteGlossary(&text)
	for _, want := range []string{"slo_gap (ratio)", "per_slo.<class>.ttft_ms.<stat>", "tokens_per_sec", "Units"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the printed glossary has no %q", want)
		}
	}
}

// The glossary guide's Glossary section is the generated one.
func TestREADMEGlossary(t *testing.T) {
	const path = "../../docs/glossary.md"
	const heading = "## Glossary\n\n"
	readme, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	want := report.GlossaryMarkdown()
	start := strings.Index(text, heading)
	end := len(text) // the glossary ends its guide
	got := ""
	if start >= 0 {
		got = text[start+len(heading) : end]
	}
	if got == want+"\n" {
		return
	}
	if *update {
		if start < 0 {
			start = end
		}
		text = text[:start] + heading + want + "\n" + text[end:]
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README's Glossary section differs from report.GlossaryMarkdown (go test ./studies/report -run TestREADMEGlossary -update rewrites it)")
}
