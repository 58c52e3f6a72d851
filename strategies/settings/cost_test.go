package settings

import (
	"strings"
	"testing"

	"optimize/simcore/cluster"
)

// Every built-in GPU has a price setting whose default is the hardware
// file's price, documented with its source; the price resolved for a run
// is its GPU's, the one given over the file's.
func TestGPUHourPricesAreSettingsOverTheData(t *testing.T) {
	cat, err := WorldData()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range cat.GPUs() {
		g, _ := cat.GPU(name)
		s, ok := Lookup("cost.gpu_hour." + name)
		if !ok {
			t.Fatalf("no setting cost.gpu_hour.%s", name)
		}
		if s.Default() != formatNumber(g.PricePerHr) || !(g.PricePerHr > 0) {
			t.Errorf("%s: default %s, want the file's %v (> 0)", s.Key, s.Default(), g.PricePerHr)
		}
		if g.PriceSource == "" || !strings.Contains(s.Doc, g.PriceSource) || s.FlagText() != "--gpu-hour-price "+name+"=V" {
			t.Errorf("%s: doc %q should cite %q; flag %q", s.Key, s.Doc, g.PriceSource, s.FlagText())
		}
	}
	c, err := Standard()
	if err != nil {
		t.Fatal(err)
	}
	h100, _ := cat.GPU("H100")
	if c.GPU != "H100" || priceOf(&c) != h100.PricePerHr {
		t.Fatalf("standard world on %s priced %v, want H100 at %v", c.GPU, priceOf(&c), h100.PricePerHr)
	}
	set(t, &c, "cost.gpu_hour.L40S", "1.25")
	set(t, &c, "gpu", "L40S")
	c.LatencyModel = "trained-physics"
	if err := CheckConfig(&c); err != nil {
		t.Fatal(err)
	}
	if priceOf(&c) != 1.25 {
		t.Errorf("L40S with cost.gpu_hour.L40S=1.25 priced %v", priceOf(&c))
	}
	if s, _ := Lookup("cost.gpu_hour.H100"); s.Active.Holds(&c) {
		t.Error("cost.gpu_hour.H100 counts as having an effect on an L40S run")
	}
}

// A study's base configuration is shared by every trial: setting a price
// on a copy never shows through in the base or in another copy, and
// Restore brings an unset price back to unset.
func TestGPUHourPricesNeverAlias(t *testing.T) {
	base := cluster.Defaults()
	set(t, &base, "cost.gpu_hour.H100", "5")
	set(t, &base, "cost.gpu_hour.A100-80", "4")
	a, b := base, base
	set(t, &a, "cost.gpu_hour.H100", "9")
	set(t, &b, "cost.gpu_hour.L40S", "2")
	set(t, &b, "cost.gpu_hour.A100-80", "3")
	for _, tc := range []struct {
		name string
		c    *cluster.Config
		gpu  string
		want float64
		ok   bool
	}{
		{"base", &base, "H100", 5, true}, {"base", &base, "A100-80", 4, true}, {"base", &base, "L40S", 0, false},
		{"a", &a, "H100", 9, true}, {"a", &a, "A100-80", 4, true}, {"a", &a, "L40S", 0, false},
		{"b", &b, "H100", 5, true}, {"b", &b, "A100-80", 3, true}, {"b", &b, "L40S", 2, true},
	} {
		if v, ok := tc.c.Prices.Get(tc.gpu); v != tc.want || ok != tc.ok {
			t.Errorf("%s: %s price %v (given %v), want %v (%v)", tc.name, tc.gpu, v, ok, tc.want, tc.ok)
		}
	}
	s, _ := Lookup("cost.gpu_hour.L40S")
	s.Restore(&b, &base)
	if _, ok := b.Prices.Get("L40S"); ok || s.Value(&b) != s.Default() {
		t.Errorf("Restore from a configuration without an L40S price left %s", s.Value(&b))
	}
}

// priceOf is the price per GPU-hour c's world resolves to (0 if none).
func priceOf(c *cluster.Config) float64 {
	w, _ := c.Resolve()
	return w.PricePerGPUHour
}
