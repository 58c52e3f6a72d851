package workload

import (
	"strings"
	"testing"

	"optimize/simcore"
)

// slo_targets parse into per-class targets; FillTargets sets only the
// classes the run's configuration left unset.
func TestSLOTargetsFillUnsetClasses(t *testing.T) {
	spec, err := ParseSpec("t.yaml", []byte(baseSpec+`slo_targets:
  critical: {ttft_ms: 200, itl_ms: 30}
  standard: {e2e_ms: 5000}
`))
	if err != nil {
		t.Fatal(err)
	}
	var ttft, itl, e2e simcore.PerClass
	ttft.V[simcore.SLOCritical], ttft.Set[simcore.SLOCritical] = 150, true // the run's own: kept
	spec.FillTargets(&ttft, &itl, &e2e)
	for _, c := range []struct {
		name string
		p    *simcore.PerClass
		cl   simcore.SLOClass
		want float64 // -1: unset
	}{
		{"ttft critical", &ttft, simcore.SLOCritical, 150},
		{"ttft standard", &ttft, simcore.SLOStandard, -1},
		{"itl critical", &itl, simcore.SLOCritical, 30},
		{"itl standard", &itl, simcore.SLOStandard, -1},
		{"e2e critical", &e2e, simcore.SLOCritical, -1},
		{"e2e standard", &e2e, simcore.SLOStandard, 5000},
	} {
		if got := c.p.Or(c.cl, -1); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// Bad slo_targets give one-line errors naming the spec and the field.
func TestSLOTargetErrors(t *testing.T) {
	for _, c := range []struct{ name, targets, want string }{
		{"unknown class", "vip: {ttft_ms: 100}",
			`t.yaml: slo_targets.vip: unknown SLO class "vip" (allowed: critical, standard, sheddable, batch, background)`},
		{"v1 class name", "realtime: {ttft_ms: 100}",
			`t.yaml: slo_targets.realtime: unknown SLO class "realtime" (allowed: critical,`},
		{"class no client sends", "batch: {ttft_ms: 100}",
			"t.yaml: slo_targets.batch: no client sends class batch (classes sent: critical, standard)"},
		{"negative", "critical: {ttft_ms: -5}",
			"t.yaml: slo_targets.critical.ttft_ms: must be a finite number > 0 (ms), got -5"},
		{"zero", "standard: {e2e_ms: 0}",
			"t.yaml: slo_targets.standard.e2e_ms: must be a finite number > 0 (ms), got 0"},
		{"infinite", "standard: {itl_ms: .inf}",
			"t.yaml: slo_targets.standard.itl_ms: must be a finite number > 0 (ms), got +Inf"},
		{"unknown key", "critical: {p99_ms: 100}",
			"t.yaml: slo_targets.critical.p99_ms: line 23: unknown key (allowed: ttft_ms, itl_ms, e2e_ms)"},
		{"not a number", "critical: {ttft_ms: fast}",
			`t.yaml: slo_targets.critical.ttft_ms: line 23: expected a number, got "fast"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseSpec("t.yaml", []byte(baseSpec+"slo_targets:\n  "+c.targets+"\n"))
			if err == nil {
				t.Fatal("no error")
			}
			if msg := err.Error(); !strings.HasPrefix(msg, c.want) || strings.Contains(msg, "\n") {
				t.Fatalf("error %q, want one line starting %q", msg, c.want)
			}
		})
	}
}
