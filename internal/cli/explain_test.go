package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// `study show --explain` prints the glossary (alone without a study, as
// JSON with --output json); show without NAME or --explain is a usage
// error.
func TestStudyShowExplain(t *testing.T) {
	code, out, errs := run(t, "study", "show", "--explain")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"slo_gap (ratio)", "hypervolume (ratio^k)", "reference point 2", "importance (fraction)", "score (ratio)", "per_slo.<class>.goodput", "req/s"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the glossary:\n%s", want, out)
		}
	}
	code, out, errs = run(t, "study", "show", "--explain", "--output", "json")
	var doc struct {
		Terms   []struct{ Name, Unit, Meaning string }
		Metrics []struct{ Name, Unit string }
	}
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || len(doc.Terms) < 8 || len(doc.Metrics) < 25 {
		t.Fatalf("exit %d, %d terms, %d metrics: %s %s", code, len(doc.Terms), len(doc.Metrics), errs, out)
	}
	if code, _, errs = run(t, "study", "show"); code != 2 || !strings.Contains(errs, "--explain") {
		t.Fatalf("show without NAME: exit %d, %q", code, errs)
	}
}
