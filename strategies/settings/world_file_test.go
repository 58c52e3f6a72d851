package settings

import (
	"bytes"
	"strings"
	"testing"
)

// A world file written is read back to the same world; what it may hold
// is checked strictly, each mistake one line naming the file, line and
// key.
func TestWorldFile(t *testing.T) {
	var buf bytes.Buffer
	w := WorldFile{World: []WorldSetting{{"model", "qwen/qwen3-14b"}, {"gpu", "H100"}, {"tp", "1"}, {"latency.model", "trained-physics"},
		{"kv.total_blocks", "18038"}, {"latency.physics.beta.1a", "1.25"}, {"latency.physics.alpha.0", "14000"}},
		Provenance: map[string]any{"runs": []string{"a/trace.yaml"}}}
	if err := WriteWorldFile(&buf, "a test world", w); err != nil {
		t.Fatal(err)
	}
	c, err := StandardConfig()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ApplyWorldFile("w.yaml", buf.Bytes(), &c); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if c.Model != "qwen/qwen3-14b" || c.TP != 1 || c.TotalKVBlocks != 18038 || c.Physics.Beta[0] != 1.25 || !c.Physics.BetaSet[0] || c.Physics.Alpha[0] != 14000 {
		t.Errorf("read back as model %s, TP %d, %d blocks, physics %+v", c.Model, c.TP, c.TotalKVBlocks, c.Physics)
	}
	if r, _ := c.Resolve(); r.Spec.Physics.Beta[0] != 1.25 || r.Spec.Physics.Beta[2] == 0 {
		t.Errorf("the resolved world's β are %v: the file's β1a over the data's others", r.Spec.Physics.Beta)
	}
	for _, c := range []struct{ text, want string }{
		{"world: {model: qwen/qwen3-14b}\nextra: 1\n", `w.yaml: line 2: unknown section "extra" (allowed: world, provenance)`},
		{"provenance: {}\n", "w.yaml: world: missing or empty"},
		{"world:\n  scheduler: fcfs\n", "w.yaml: world: line 2: scheduler is not a world setting (allowed: era, gpu, gpu_memory_utilization"},
		{"world:\n  tp: 3.5\n", "w.yaml: line 2: tp"},
		{"world:\n  model: qwen/qwen3-14b\n  latency.model: roofline\n  latency.physics.beta.1a: 2\n", "latency.physics.beta.1a"},
		{"- 1\n", "w.yaml: line 1: expected world: and provenance:"},
	} {
		cfg, _ := StandardConfig()
		_, err := ApplyWorldFile("w.yaml", []byte(c.text), &cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v; want one line with %q", c.text, err, c.want)
		}
	}
}
