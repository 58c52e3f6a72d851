package admit

import (
	"math"
	"strings"
	"testing"

	"optimize/simcore"
)

func gate(t *testing.T, pairs string) simcore.PerClass {
	t.Helper()
	p, err := simcore.ParsePerClass(pairs, false)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Listed classes are shed only while the depth is above their threshold;
// unlisted classes always pass.
func TestSLOGated_ShedsListedClassesAboveThreshold(t *testing.T) {
	p, err := New(Config{Policy: SLOGated, SLOGate: gate(t, "standard=200,sheddable=50,background=0")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		class simcore.SLOClass
		depth int64
		want  bool
	}{
		{simcore.SLOSheddable, 0, true},
		{simcore.SLOSheddable, 50, true},
		{simcore.SLOSheddable, 51, false},
		{simcore.SLOStandard, 51, true},
		{simcore.SLOStandard, 200, true},
		{simcore.SLOStandard, 201, false},
		{simcore.SLOBackground, 0, true},
		{simcore.SLOBackground, 1, false},
		{simcore.SLOCritical, 1 << 40, true},
		{simcore.SLOBatch, 1 << 40, true},
		{simcore.SLONone, 1 << 40, true},
		{simcore.SLOBatch, math.MaxInt64, true},
		{simcore.SLOClass(200), math.MaxInt64, true}, // out of range: unclassed
	}
	for _, tc := range tests {
		r := &simcore.Request{SLO: tc.class, InputLen: 100}
		if got := p.Admit(r, 0, &Load{QueueDepthTotal: tc.depth}); got != tc.want {
			t.Errorf("%s at queue depth %d: admitted %v, want %v", tc.class.Label(), tc.depth, got, tc.want)
		}
	}
}

func TestSLOGated_RejectsBadThresholds(t *testing.T) {
	frac := Config{Policy: SLOGated}
	frac.SLOGate.V[simcore.SLOSheddable], frac.SLOGate.Set[simcore.SLOSheddable] = 2.5, true
	inf := Config{Policy: SLOGated}
	inf.SLOGate.V[simcore.SLOStandard], inf.SLOGate.Set[simcore.SLOStandard] = math.Inf(1), true
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"no class listed", Config{Policy: SLOGated}, "admission.policy: slo-gated needs at least one class's gate"},
		{"negative", Config{Policy: SLOGated, SLOGate: gate(t, "sheddable=-1")}, "admission.slo_gate.sheddable: must be a whole number ≥ 0 (cluster queue depth), got -1"},
		{"fractional", frac, "admission.slo_gate.sheddable: must be a whole number ≥ 0 (cluster queue depth), got 2.5"},
		{"infinite", inf, "admission.slo_gate.standard: must be a whole number ≥ 0 (cluster queue depth), got +Inf"},
		{"checked for other policies too", Config{Policy: "always-admit", SLOGate: gate(t, "batch=-3")}, "admission.slo_gate.batch: must be a whole number ≥ 0 (cluster queue depth), got -3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(tc.cfg, nil)
			if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "\n") || p != nil {
				t.Fatalf("got %v, %v; want a one-line error starting %q", p, err, tc.wantErr)
			}
		})
	}
	if _, err := New(Config{Policy: "always-admit", SLOGate: gate(t, "sheddable=5")}, nil); err != nil {
		t.Fatalf("a valid gate with another policy: %v", err)
	}
}

func TestSLOGated_DoesNotAllocate(t *testing.T) {
	p, err := New(Config{Policy: SLOGated, SLOGate: gate(t, "sheddable=5")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &simcore.Request{SLO: simcore.SLOSheddable}
	depth := int64(0)
	var load Load
	if allocs := testing.AllocsPerRun(1000, func() {
		depth++
		load.QueueDepthTotal = depth % 10
		p.Admit(r, 0, &load)
	}); allocs != 0 {
		t.Fatalf("Admit allocates %v times per call", allocs)
	}
}
