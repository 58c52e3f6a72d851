package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A user's model (a Hugging Face config.json) and GPU (a one-GPU YAML file)
// run like the built-ins: the world line names them, the KV capacity is
// derived from the file's memory, and a faster GPU shortens TTFT. Bad
// files are one-line errors naming the file and the key.
func TestUserModelAndGPUFiles(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "config.json")
	write(t, model, `{"architectures": ["LlamaForCausalLM"], "hidden_act": "silu", "hidden_size": 4096, "intermediate_size": 14336,
	  "max_position_embeddings": 131072, "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
	  "tie_word_embeddings": false, "torch_dtype": "bfloat16", "vocab_size": 128256}`)
	gpu := func(name string, tflops, mem float64) string {
		p := filepath.Join(dir, name+".yaml")
		write(t, p, "gpus:\n  - {name: "+name+", source: test, tflops_peak: "+ftoa(tflops)+", tflops_fp8: 0, bw_peak_tbs: 3.35, mfu_prefill: 0.45, mfu_decode: 0.30, memory_gib: "+ftoa(mem)+", price_per_gpu_hour: 1}\n")
		return p
	}
	base := []string{"simulate", "--num-requests", "200", "--num-instances", "1", "--tp", "1", "--output", "text"}
	// The file's model is llama-3.1-8b: on H100 it gets 28796 blocks by
	// vLLM's rule (BLIS's gives 26312).
	code, out, errs := run(t, append(base, "--model-config", model)...)
	if code != 0 || !strings.Contains(out, "world "+strings.ToLower(model)+" on H100, TP1, trained-physics latency model · 28796 KV blocks per instance") {
		t.Fatalf("user model: exit %d, %s %s", code, firstLines(out, 2), errs)
	}
	slowTTFT := metricOf(t, out, "TTFT mean ms")
	code, out, errs = run(t, append(base, "--model-config", model, "--hardware-config", gpu("X1", 4*989.5, 160))...)
	if code != 0 || !strings.Contains(out, "on X1, TP1, trained-physics") {
		t.Fatalf("user GPU: exit %d, %s %s", code, firstLines(out, 2), errs)
	}
	if fast := metricOf(t, out, "TTFT mean ms"); !(fast < 0.9*slowTTFT) {
		t.Errorf("a GPU of 4× the FLOPS gives TTFT mean %v ms against %v: want at least 10%% less", fast, slowTTFT)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model-config", model, "--model", "qwen/qwen3-14b"}, "--model-config: --model is given too; give one"},
		{[]string{"--model-config", filepath.Join(dir, "none.json")}, "--model-config: open "},
		{[]string{"--model-config", tempFile(t, dir, "bad.json", `{"torch_dtype": "float8", "hidden_size": 8}`)}, "--model-config: " + filepath.Join(dir, "bad.json") + ": torch_dtype: \"float8\" is not one of"},
		{[]string{"--model-config", tempFile(t, dir, "bad.yaml", "model: m\nextra: 1\n")}, "--model-config: " + filepath.Join(dir, "bad.yaml") + ": yaml: unmarshal errors: line 2: field extra not found"},
		{[]string{"--hardware-config", tempFile(t, dir, "two.yaml", "gpus: []\n")}, "--hardware-config: " + filepath.Join(dir, "two.yaml") + ": gpus: want exactly one GPU, got 0"},
		{[]string{"--hardware-config", gpu("Tiny", 100, 8), "--model-config", model}, "--tp: tp: " + strings.ToLower(model) + " on Tiny at TP1: does not fit"},
	} {
		code, out, errs := run(t, append(base, c.args...)...)
		msg := strings.TrimPrefix(strings.TrimRight(errs, "\n"), "optimize: ")
		if code != 2 || out != "" || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line starting %q", c.args, code, errs, c.want)
		}
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func tempFile(t *testing.T, dir, name, text string) string {
	p := filepath.Join(dir, name)
	write(t, p, text)
	return p
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// firstLines is the first n lines of text.
func firstLines(text string, n int) []string {
	lines := strings.SplitN(text, "\n", n+1)
	return lines[:min(n, len(lines))]
}

// metricOf reads the first column of a row of the simulate text report.
func metricOf(t *testing.T, report, row string) float64 {
	t.Helper()
	for _, line := range strings.Split(report, "\n") {
		f := strings.Fields(line)
		if strings.HasPrefix(strings.TrimSpace(line), row+" ") && len(f) > 0 {
			v, err := strconv.ParseFloat(f[len(f)-1], 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Fatalf("no row %q in %s", row, report)
	return 0
}
