package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"optimize/internal/testkit"
)

// A study create whose run fails before any trial finishes leaves nothing
// behind: the error says why and that the study was removed, study list
// is empty, and the same command meets the same error again rather than
// a name taken. A study with finished trials is kept (the failure is
// recorded with it: TestAFailedStudySaysWhyItFailed).
func TestACreateThatFailsLeavesNothingBehind(t *testing.T) {
	dir := testkit.StarvedTemplateDir(t)
	dsn := filepath.Join(t.TempDir(), "s.db")
	create := []string{"--templates-dir", dir, "study", "create", testkit.StarvedTemplateName, "--name", "s", "--trials", "3", "--seeds", "42", "--storage", dsn, "--workers", "1"}
	for attempt := 1; attempt <= 2; attempt++ {
		code, _, errs := run(t, create...)
		if code == 0 || !strings.Contains(errs, testkit.StarvedError) || !strings.Contains(errs, "study s removed: no trial finished before the error") {
			t.Fatalf("attempt %d: exit %d: %s", attempt, code, errs)
		}
		code, out, errs := run(t, "--templates-dir", dir, "study", "list", "--storage", dsn, "--output", "json")
		if code != 0 || strings.TrimSpace(out) != "[]" {
			t.Fatalf("attempt %d: study list: exit %d: %s %s", attempt, code, out, errs)
		}
	}
}
