package latency

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"
)

func TestModelFormulas(t *testing.T) {
	m, err := New(Coeffs{Alpha: [3]float64{1601.35, 3.5124, 1805.54}, Beta: [3]float64{6910.42, 17.6705, 2.8377}})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.StepTime(256, 0); got != 11434 {
		t.Errorf("prefill step = %d µs, want 11434 (β0 + β1·256, truncated)", got)
	}
	if got := m.QueueingTime(256); got != 2500 {
		t.Errorf("queueing = %d µs, want 2500", got)
	}
	if got := m.OutputTokenTime(); got != 1805 {
		t.Errorf("α2 = %d, want 1805", got)
	}
	zero, _ := New(Coeffs{})
	if zero.StepTime(0, 0) != 1 {
		t.Error("an empty step must still advance the clock by 1 µs")
	}
	for _, bad := range []Coeffs{{Alpha: [3]float64{-1}}, {Beta: [3]float64{0, math.NaN()}}, {Beta: [3]float64{math.Inf(1)}}} {
		if _, err := New(bad); err == nil {
			t.Errorf("coefficients %+v accepted", bad)
		}
	}
}

func TestCatalog(t *testing.T) {
	c, err := ReadCatalog(os.DirFS("../../templates"), "models") // the built-in profiles
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
	if _, err := ReadCatalog(os.DirFS(t.TempDir()), "models"); err == nil {
		t.Fatal("a folder without profiles gives an empty catalog, want an error")
	}
	var bad Catalog
	if err := bad.ParseProfiles("m.yaml", []byte("model: x\nprofiles:\n  - {gpu: H100, tp: 1, alpha: [1, 2], beta: [1, 2, 3], total_kv_blocks: 5}\n")); err == nil || !strings.Contains(err.Error(), "m.yaml") {
		t.Fatalf("bad profile: %v", err)
	}
	if err := bad.ParseProfiles("m.yaml", []byte("model: x\nextra: 1\n")); err == nil || !strings.Contains(err.Error(), "extra") {
		t.Fatalf("unknown key: %v", err)
	}
}
