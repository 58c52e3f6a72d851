package latency

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"
)

func TestModelFormulas(t *testing.T) {
	m, err := NewBlackbox(Coeffs{Alpha: [3]float64{1601.35, 3.5124, 1805.54}, Beta: [3]float64{6910.42, 17.6705, 2.8377}})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.StepTime(&Step{Requests: 1, PrefillTokens: 256}); got != 11434 {
		t.Errorf("prefill step = %d µs, want 11434 (β0 + β1·256, truncated)", got)
	}
	if got := m.QueueingTime(256); got != 2500 {
		t.Errorf("queueing = %d µs, want 2500", got)
	}
	if got := m.OutputTokenTime(); got != 1805 {
		t.Errorf("α2 = %d, want 1805", got)
	}
	zero, _ := NewBlackbox(Coeffs{})
	if zero.StepTime(&Step{}) != 1 {
		t.Error("an empty step must still advance the clock by 1 µs")
	}
	for _, bad := range []Coeffs{{Alpha: [3]float64{-1}}, {Beta: [3]float64{0, math.NaN()}}, {Beta: [3]float64{math.Inf(1)}}} {
		if _, err := NewBlackbox(bad); err == nil {
			t.Errorf("coefficients %+v accepted", bad)
		}
	}
}

func TestCatalog(t *testing.T) {
	c, err := ReadCatalog(os.DirFS("../../data")) // the built-in world data
	if err != nil {
		t.Fatal(err)
	}
	const model = "meta-llama/llama-3.1-8b-instruct"
	p, err := c.Find(model, "", 0)
	if err != nil || p.TP != 2 || p.TotalKVBlocks != 132139 {
		t.Fatalf("default profile %+v, %v", p, err)
	}
	if p, _ := c.Find(model, "h100", 1); p.TotalKVBlocks != 29205 {
		t.Fatalf("TP1 profile %+v", p)
	}
	if _, err := c.Find(model, "H100", 8); err == nil || !strings.Contains(err.Error(), "TP2") || errors.Is(err, ErrUnknownModel) {
		t.Fatalf("unknown TP: %v", err)
	}
	if _, err := c.Find("no/such-model", "", 0); !errors.Is(err, ErrUnknownModel) || !strings.Contains(err.Error(), model) {
		t.Fatalf("unknown model: %v", err)
	}
	if len(c.Models()) != 14 || len(c.GPUs()) != 4 {
		t.Fatalf("%d models, %d GPUs; want the 13 BLIS ships, Llama-2-70B (real runs of it are calibrated against) and H100, A100-80, L40S, H200", len(c.Models()), len(c.GPUs()))
	}
	if _, err := c.GPU("B200"); err == nil || !strings.Contains(err.Error(), "L40S") {
		t.Fatalf("unknown GPU: %v", err)
	}
	if _, err := ReadCatalog(os.DirFS(t.TempDir())); err == nil {
		t.Fatal("a folder without data gives an empty catalog, want an error")
	}
	bad := c.Clone()
	arch := "architecture: {num_hidden_layers: 2, hidden_size: 8, num_attention_heads: 2, intermediate_size: 16, vocab_size: 10, bytes_per_param: 2}\n"
	if err := bad.ParseModel("m.yaml", []byte("model: x\ndefault: {gpu: H100, tp: 1}\n"+arch+"profiles:\n  - {gpu: H100, tp: 1, alpha: [1, 2], beta: [1, 2, 3], total_kv_blocks: 5}\n")); err == nil || !strings.Contains(err.Error(), "m.yaml") {
		t.Fatalf("bad profile: %v", err)
	}
	if err := bad.ParseModel("m.yaml", []byte("model: x\nextra: 1\n")); err == nil || !strings.Contains(err.Error(), "extra") {
		t.Fatalf("unknown key: %v", err)
	}
	if err := bad.ParseModel("m.yaml", []byte("model: x\ndefault: {gpu: H100, tp: 1}\n")); err == nil || !strings.Contains(err.Error(), "architecture: required") {
		t.Fatalf("no architecture: %v", err)
	}
	if _, err := c.Model("x"); err == nil {
		t.Fatal("adding to a clone changed the original")
	}
}
