package testkit

import (
	"os"
	"path/filepath"
	"testing"
)

// StarvedTemplate is a user template, StarvedTemplateName, whose every
// trial fails: its token bucket (at most 20 tokens, refilling at 0.001
// tokens/s) admits no request of hundreds of input tokens, and it is
// scored by cost per million output tokens, undefined without output.
// Its baseline (the baseline template's) serves every request, so a study
// of it is created and its first trial stops the run.
const (
	StarvedTemplateName = "starved"
	StarvedTemplate     = `name: starved
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
	// StarvedError is what its trials fail with.
	StarvedError = "the run produced no output tokens"
)

// StarvedTemplateDir writes StarvedTemplate into a folder of its own (for
// --templates-dir) and returns the folder.
func StarvedTemplateDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, StarvedTemplateName+".yaml"), []byte(StarvedTemplate), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
