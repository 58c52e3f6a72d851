package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"optimize/studies/report"
)

// `study show --trial N` on a conditional template prints every parameter
// (the inactive ones as "inactive", never a Go nil), then the trial against
// the baseline with the per-class price: goodput per class, the same
// critical TTFT P99 as the JSON view.
func TestShowTrialPrintsInactiveAndPerClassPrice(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a study")
	}
	dsn := createTemplateStudy(t, "joint-slo", "j", 8)
	inactive, shedding := 0, 0
	for n := 0; n < 8; n++ {
		code, out, errs := run(t, "study", "show", "j", "--trial", fmt.Sprint(n), "--storage", dsn)
		if code != 0 {
			t.Fatalf("trial %d: %s", n, errs)
		}
		if strings.Contains(out, "<nil>") {
			t.Errorf("trial %d prints a Go nil:\n%s", n, out)
		}
		inactive += strings.Count(out, "= inactive")
		if strings.Contains(out, "sheddable rejected") {
			shedding++
		}
		for _, want := range []string{"  probabilistic_power ", "trial " + fmt.Sprint(n) + " ", "critical goodput ", "sheddable goodput "} {
			if !strings.Contains(out, want) {
				t.Errorf("trial %d: no %q in\n%s", n, want, out)
			}
		}
		_, js, _ := run(t, "study", "show", "j", "--trial", fmt.Sprint(n), "--storage", dsn, "--output", "json")
		var d struct {
			Objectives map[string]float64 `json:"objectives"`
		}
		if err := json.Unmarshal([]byte(js), &d); err != nil {
			t.Fatal(err)
		}
		want := report.Human(d.Objectives["critical_ttft_p99"])
		found := false
		for _, line := range strings.Split(out, "\n") {
			// name, unit, baseline, this trial, Δ, seed range
			if f := strings.Fields(line); len(f) > 3 && f[0] == "critical_ttft_p99" {
				found = f[1] == "ms" && f[3] == want
			}
		}
		if !found {
			t.Errorf("trial %d: the table's critical_ttft_p99 is not the JSON's %s:\n%s", n, want, out)
		}
	}
	// The first trials are random; slo-gated and probabilistic admission
	// each come up, and their rejections are priced per class.
	if shedding == 0 {
		t.Error("no trial prints its rejections per class")
	}
	// joint-slo has 7 conditional parameters; at most 5 are active at once
	// (priority-fcfs with slo-tiered plus one admission policy's).
	if inactive < 2*8 {
		t.Errorf("%d inactive parameters over 8 trials, want at least 16", inactive)
	}
}

// `template show joint-slo` prints each conditional parameter's condition,
// all in one column, and no line ends in padding.
func TestTemplateShowPrintsConditionsInOneColumn(t *testing.T) {
	code, out, errs := run(t, "template", "show", "joint-slo")
	if code != 0 {
		t.Fatal(errs)
	}
	want := map[string]string{
		"priority_policy":     "only when scheduler is priority-fcfs",
		"critical_base":       "only when scheduler is priority-fcfs",
		"age_weight_per_ms":   "only when priority_policy is slo-tiered",
		"probabilistic_power": "only when admission is probabilistic",
	}
	column := -1
	for _, line := range strings.Split(out, "\n") {
		if strings.HasSuffix(line, " ") {
			t.Errorf("line ends in padding: %q", line)
		}
		at := strings.Index(line, "only when")
		if at < 0 {
			continue
		}
		if column < 0 {
			column = at
		}
		if at != column {
			t.Errorf("condition at column %d, want %d: %q", at, column, line)
		}
		name := strings.Fields(line)[0]
		if w, ok := want[name]; ok && !strings.HasSuffix(line, w) {
			t.Errorf("%s: want %q in %q", name, w, line)
		}
		delete(want, name)
	}
	if len(want) > 0 {
		t.Errorf("no condition printed for %v", want)
	}
}
