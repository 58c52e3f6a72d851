package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// starvedTemplate admits no request (a token bucket of at most 20 tokens
// refilling at 0.001 tokens/s) and is scored by cost per million output
// tokens, undefined without output: its first trial fails.
const starvedTemplate = `name: starved
description: Token-bucket admission too small for any request, scored by cost per million output tokens.
base: baseline
mechanism:
  admission.policy: token-bucket
  admission.token_bucket.refill_rate: 0.001
parameters:
  - {name: capacity, type: float, low: 1, high: 20, default: 10, setting: admission.token_bucket.capacity}
objectives:
  - {name: cost_per_million_tokens, metric: cost_per_million_tokens, direction: minimize}
primary: cost_per_million_tokens
`

// A study create whose run fails before any trial finishes leaves nothing
// behind: the error says why and that the study was removed, study list
// is empty, and the same command meets the same error again rather than
// a name taken. A study with finished trials is kept (the failure is
// recorded with it: TestAFailedStudySaysWhyItFailed).
func TestACreateThatFailsLeavesNothingBehind(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "starved.yaml"), []byte(starvedTemplate), 0o644); err != nil {
		t.Fatal(err)
	}
	dsn := filepath.Join(t.TempDir(), "s.db")
	create := []string{"--templates-dir", dir, "study", "create", "starved", "--name", "s", "--trials", "3", "--seeds", "42", "--storage", dsn, "--workers", "1"}
	for attempt := 1; attempt <= 2; attempt++ {
		code, _, errs := run(t, create...)
		if code == 0 || !strings.Contains(errs, "the run produced no output tokens") || !strings.Contains(errs, "study s removed: no trial finished before the error") {
			t.Fatalf("attempt %d: exit %d: %s", attempt, code, errs)
		}
		code, out, errs := run(t, "--templates-dir", dir, "study", "list", "--storage", dsn, "--output", "json")
		if code != 0 || strings.TrimSpace(out) != "[]" {
			t.Fatalf("attempt %d: study list: exit %d: %s %s", attempt, code, out, errs)
		}
	}
}
