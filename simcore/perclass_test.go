package simcore

import (
	"strings"
	"testing"
)

func TestParsePerClass(t *testing.T) {
	p, err := ParsePerClass("critical=100ms, standard=0.5s,sheddable=2500us", true)
	if err != nil {
		t.Fatal(err)
	}
	if p.V[SLOCritical] != 100 || p.V[SLOStandard] != 500 || p.V[SLOSheddable] != 2.5 || p.Set[SLOBatch] {
		t.Fatalf("parsed %+v", p)
	}
	if got := p.String(); got != "critical=100,standard=500,sheddable=2.5" {
		t.Fatalf("String() = %q", got)
	}
	// BLIS f90a1e3a's --slo-ttft "critical=100ms,standard=500ms" syntax:
	// values are Go durations; a bare number stays ms.
	p, err = ParsePerClass("critical=1m30s,standard=250,batch=1.5s,background=750µs", true)
	if err != nil {
		t.Fatal(err)
	}
	if p.V[SLOCritical] != 90000 || p.V[SLOStandard] != 250 || p.V[SLOBatch] != 1500 || p.V[SLOBackground] != 0.75 {
		t.Fatalf("durations parsed %+v", p)
	}
	if _, err := ParsePerClass("critical=5parsecs", true); err == nil || !strings.Contains(err.Error(), "duration") {
		t.Errorf("bad duration: error %v, want one naming durations", err)
	}
	for _, bad := range []struct{ in, want string }{
		{"critcal=1", "critcal"},
		{"critical", "class=value"},
		{"critical=x", "finite"},
		{"critical=1,critical=2", "twice"},
		{"critical=NaN", "finite"},
	} {
		if _, err := ParsePerClass(bad.in, false); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: error %v, want one mentioning %q", bad.in, err, bad.want)
		}
	}
}

func TestPerClassResolve_GivenClassesOverrideDefaults(t *testing.T) {
	p, err := ParsePerClass("standard=7,background=0", false)
	if err != nil {
		t.Fatal(err)
	}
	defaults := [NumSLOClasses]float64{1, 2, 3, 4, 5, 6}
	want := [NumSLOClasses]float64{1, 2, 7, 4, 5, 0}
	if got := p.Resolve(defaults); got != want {
		t.Fatalf("Resolve = %v, want %v", got, want)
	}
	if defaults != [NumSLOClasses]float64{1, 2, 3, 4, 5, 6} {
		t.Fatalf("Resolve changed the caller's defaults: %v", defaults)
	}
}
