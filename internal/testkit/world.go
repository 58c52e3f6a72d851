package testkit

import (
	"os"
	"path/filepath"
	"testing"

	"optimize/strategies"
)

// WorldTemplate is a user template, WorldTemplateName, in a world other
// than the seeds': Qwen3-14B (trained-physics, every GPU's KV derived from
// memory) routed round-robin on the baseline's mechanism, whose
// parameters choose the GPU and the number of instances.
const (
	WorldTemplateName = "gpus"
	WorldTemplate     = `name: gpus
description: Round-robin routing of Qwen3-14B; which GPU, and how many instances of it.
base: baseline
workload: orthogonal-slo@moderate
mechanism:
  model: qwen/qwen3-14b
  routing.policy: round-robin
parameters:
  - {name: gpu, type: categorical, choices: [H100, A100-80, L40S], default: H100, setting: gpu}
  - {name: instances, type: int, low: 2, high: 8, default: 4, setting: num_instances}
`
)

// WorldTemplateDir writes WorldTemplate into a folder of its own (for
// --templates-dir) and returns the folder.
func WorldTemplateDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, WorldTemplateName+".yaml"), []byte(WorldTemplate), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// AddWorldTemplate adds WorldTemplate to reg.
func AddWorldTemplate(t testing.TB, reg *strategies.Registry) {
	t.Helper()
	if err := reg.AddDir(WorldTemplateDir(t)); err != nil {
		t.Fatal(err)
	}
}
