package latency

import (
	"math"
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
	c, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Find(DefaultModel, "", 0)
	if err != nil || p.TP != 2 || p.TotalKVBlocks != 132139 {
		t.Fatalf("default profile %+v, %v", p, err)
	}
	if p, _ := c.Find(DefaultModel, "h100", 1); p.TotalKVBlocks != 29205 {
		t.Fatalf("TP1 profile %+v", p)
	}
	if _, err := c.Find(DefaultModel, "H100", 8); err == nil || !strings.Contains(err.Error(), "TP2") {
		t.Fatalf("unknown TP: %v", err)
	}
	var bad Catalog
	if err := bad.ParseProfiles("m.yaml", []byte("model: x\nprofiles:\n  - {gpu: H100, tp: 1, alpha: [1, 2], beta: [1, 2, 3], total_kv_blocks: 5}\n")); err == nil || !strings.Contains(err.Error(), "m.yaml") {
		t.Fatalf("bad profile: %v", err)
	}
	if err := bad.ParseProfiles("m.yaml", []byte("model: x\nextra: 1\n")); err == nil || !strings.Contains(err.Error(), "extra") {
		t.Fatalf("unknown key: %v", err)
	}
}
