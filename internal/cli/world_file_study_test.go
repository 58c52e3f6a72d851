package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// worldFileText is a Qwen3-14B world on H100 as calibrate --fit writes
// one, its prefill priced at beta1a × FLOPs at the GPU's peak.
func worldFileText(beta1a string) string {
	return `# a world file
world:
  model: qwen/qwen3-14b
  gpu: H100
  tp: 1
  latency.model: trained-physics
  kv.total_blocks: 18038
  latency.physics.beta.1a: ` + beta1a + `
  latency.physics.alpha.0: 14000
provenance:
  runs: [qwen-2rps/trace.yaml]
`
}

// A study created with --world-file runs in that world — its baseline,
// its trials, its validation and its export — keeps the file with it
// (show says so, resume needs no flag), and runs slower where the world's
// prefill is slower; a template that fixes a setting the file gives to
// another value is refused before anything runs.
func TestStudyRunsInItsWorldFile(t *testing.T) {
	dir := t.TempDir()
	slow, fast := filepath.Join(dir, "slow.yaml"), filepath.Join(dir, "fast.yaml")
	if err := os.WriteFile(slow, []byte(worldFileText("3")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fast, []byte(worldFileText("1")), 0o644); err != nil {
		t.Fatal(err)
	}
	dsn := filepath.Join(dir, "w.db")
	ttft := map[string]float64{}
	for name, file := range map[string]string{"slow": slow, "fast": fast} {
		if code, _, errs := run(t, "study", "create", "slo-cascade", "--trials", "2", "--seeds", "42", "--name", name,
			"--world-file", file, "--storage", dsn, "--workers", "1"); code != 0 {
			t.Fatalf("create %s: %s", name, errs)
		}
		code, out, errs := run(t, "study", "show", name, "--output", "json", "--storage", dsn)
		if code != 0 {
			t.Fatal(errs)
		}
		var doc struct {
			WorldFile string `json:"world_file"`
			World     struct {
				Line string `json:"line"`
			} `json:"world"`
			Baseline struct {
				TTFT struct {
					Mean float64 `json:"mean"`
				} `json:"ttft_ms"`
			} `json:"baseline"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.WorldFile != file || !strings.Contains(doc.World.Line, "qwen/qwen3-14b on H100, TP1, trained-physics") {
			t.Errorf("%s: world file %q, world %q", name, doc.WorldFile, doc.World.Line)
		}
		ttft[name] = doc.Baseline.TTFT.Mean
	}
	// Prefill at 3× the FLOPs floor against 1×: the baseline's TTFT mean
	// is at least a third higher (prefill is most of a TTFT here).
	if !(ttft["slow"] > 1.33*ttft["fast"]) {
		t.Errorf("baseline TTFT mean %.1f ms in the slow world, %.1f ms in the fast one: want ≥ 1.33×", ttft["slow"], ttft["fast"])
	}
	_, text, _ := run(t, "study", "show", "slow", "--storage", dsn)
	if !strings.Contains(text, "in the world of "+slow) {
		t.Errorf("show does not name the world file:\n%s", text)
	}
	if code, _, errs := run(t, "study", "validate", "slow", "--seeds", "45,46", "--storage", dsn); code != 0 {
		t.Fatalf("validate: %s", errs)
	}
	// Validated in another world given by a world file: the built-in one
	// fitted to the real runs (the same model, GPU and TP, other
	// coefficients: another world).
	code, vout, errs := run(t, "study", "validate", "slow", "--seeds", "45,46", "--world", "qwen3-14b-h100-vllm0.23", "--storage", dsn)
	if code != 0 || !strings.Contains(vout, "In another world: qwen/qwen3-14b on H100, TP1, trained-physics latency model (model=qwen/qwen3-14b") {
		t.Errorf("validate --world with a built-in world: exit %d, %s\n%s", code, errs, vout)
	}
	out := filepath.Join(dir, "export")
	if code, _, errs := run(t, "study", "export", "slow", "--format", "llm-d", "-o", out, "--storage", dsn); code != 0 {
		t.Fatalf("export: %s", errs)
	}
	args, err := os.ReadFile(filepath.Join(out, "vllm-args.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(args), "--num-gpu-blocks-override=18038") || !strings.Contains(string(args), "--model=Qwen/Qwen3-14B") {
		t.Errorf("the export is not of the world file's world:\n%s", args)
	}
	roofline := filepath.Join(dir, "roofline.yaml")
	if err := os.WriteFile(roofline, []byte("world:\n  model: qwen/qwen3-14b\n  latency.model: roofline\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = run(t, "study", "create", "capacity", "--trials", "1", "--name", "cap", "--world-file", roofline, "--storage", dsn)
	if code != 2 || !strings.Contains(errs, "--world-file: latency.model is given as roofline, and template capacity fixes it to trained-physics") {
		t.Errorf("capacity in a world of another latency model: exit %d, %s", code, errs)
	}
	// Created without running its trials, the study resumes in its world
	// file's world with no flag naming it again.
	if code, _, errs := run(t, "study", "create", "slo-cascade", "--trials", "2", "--seeds", "42", "--name", "later",
		"--world-file", slow, "--storage", dsn, "--workers", "0"); code != 0 {
		t.Fatalf("create --workers 0: %s", errs)
	}
	code, rout, errs := run(t, "study", "resume", "later", "--storage", dsn)
	if code != 0 || !strings.Contains(rout, "2/2 trials complete") || !strings.Contains(rout, "world qwen/qwen3-14b on H100, TP1") || !strings.Contains(rout, "in the world of "+slow) {
		t.Errorf("resume: exit %d, %s\n%s", code, errs, rout)
	}
	// A robust study runs every trial in a built-in world fitted to real
	// runs as in a latency model's.
	code, out2, errs := run(t, "study", "create", "slo-cascade", "--trials", "1", "--seeds", "42", "--name", "robust",
		"--worlds", "blackbox,qwen3-14b-h100-vllm0.23", "--storage", dsn, "--workers", "1")
	if code != 0 || !strings.Contains(out2, "base/qwen3-14b-h100-vllm0.23") {
		t.Errorf("robust over a built-in world: exit %d, %s\n%s", code, errs, out2)
	}
	code, _, errs = run(t, "study", "create", "slo-cascade", "--trials", "1", "--name", "r2", "--worlds", "nope", "--storage", dsn)
	if code != 2 || !strings.Contains(errs, `unknown world "nope" (latency models: blackbox, trained-physics, roofline; built-in worlds: qwen3-14b-h100-vllm0.23)`) {
		t.Errorf("--worlds nope: exit %d, %s", code, errs)
	}
}
