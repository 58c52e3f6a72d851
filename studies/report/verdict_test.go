package report_test

import (
	"math"
	"strings"
	"testing"

	"optimize/studies/report"
)

// The verdict rule at its edges. Changes are signed so that positive is
// better: the case, −70.7 % [−73.1 %, −68.3 %] held out against
// −74.2 % in study on 10/10 seeds, holds (smaller than in-study), and is
// not called overfit.
func TestGrade(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		name           string
		lo, hi, in     float64
		better, seeds  int
		failed         string
		regime         bool
		want           report.Verdict
		overfitAllowed bool
	}{
		{"issue: held out a little smaller", 0.683, 0.731, 0.742, 10, 10, "", false, report.VerdictHoldsSmaller, false},
		{"interval reaches the in-study Δ", 0.683, 0.75, 0.742, 10, 10, "", false, report.VerdictHolds, false},
		{"held out better than in study", 0.80, 0.85, 0.742, 10, 10, "", false, report.VerdictHolds, false},
		{"8 of 10 seeds is enough", 0.1, 0.3, 0.2, 8, 10, "", false, report.VerdictHolds, false},
		{"7 of 10 seeds is not", 0.1, 0.3, 0.2, 7, 10, "", false, report.VerdictDoesNotHold, false},
		{"16 of 20 seeds is enough", 0.1, 0.3, 0.2, 16, 20, "", false, report.VerdictHolds, false},
		{"15 of 20 seeds is not", 0.1, 0.3, 0.2, 15, 20, "", false, report.VerdictDoesNotHold, false},
		{"3 seeds need all 3", 0.1, 0.3, 0.2, 2, 3, "", false, report.VerdictDoesNotHold, false},
		{"interval includes zero after an in-study gain", -0.05, 0.3, 0.2, 8, 10, "", false, report.VerdictOverfit, true},
		{"interval touches zero", 0, 0.3, 0.2, 9, 10, "", false, report.VerdictOverfit, true},
		{"includes zero without an in-study gain", -0.05, 0.3, -0.1, 8, 10, "", false, report.VerdictDoesNotHold, false},
		{"wholly worse than the baseline", -0.3, -0.1, 0.2, 0, 10, "", false, report.VerdictDoesNotHold, false},
		{"a constraint fails held out", 0.2, 0.3, 0.25, 10, 10, "tokens_per_sec ≥ 0.98 × baseline", false, report.VerdictOverfit, true},
		{"regime: includes zero", -0.05, 0.3, 0.2, 8, 10, "", true, report.VerdictDoesNotHold, false},
		{"regime: a constraint fails", 0.2, 0.3, 0.25, 10, 10, "tokens_per_sec ≥ 0.98 × baseline", true, report.VerdictDoesNotHold, false},
		{"regime: smaller than the study's Δ still holds", 0.1, 0.2, 0.7, 10, 10, "", true, report.VerdictHolds, false},
		{"one seed", nan, nan, 0.2, 1, 1, "", false, report.VerdictNotRun, false},
		{"no interval (a baseline of 0)", nan, nan, 0.2, 10, 10, "", false, report.VerdictDoesNotHold, false},
	} {
		got := report.Grade(c.lo, c.hi, c.in, c.better, c.seeds, c.failed, c.regime)
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		if got == report.VerdictOverfit && !c.overfitAllowed {
			t.Errorf("%s: overfit where neither the interval includes zero nor a constraint fails", c.name)
		}
	}
}

// The rule names every verdict once, in the seeds' own numbers.
func TestVerdictRules(t *testing.T) {
	for _, n := range []int{10, 20, 3} {
		rules := report.VerdictRules("critical_ttft_p99", n)
		seen := map[report.Verdict]int{}
		for _, r := range rules {
			seen[r.Verdict]++
			if r.When == "" {
				t.Errorf("%q has no rule", r.Verdict)
			}
		}
		for _, v := range []report.Verdict{report.VerdictHolds, report.VerdictHoldsSmaller, report.VerdictOverfit, report.VerdictDoesNotHold, report.VerdictNotRun} {
			if seen[v] != 1 {
				t.Errorf("%d seeds: %q stated %d times, want once", n, v, seen[v])
			}
		}
		want := map[int]string{10: "≥ 8 of 10", 20: "≥ 16 of 20", 3: "≥ 3 of 3"}[n]
		if !strings.Contains(rules[0].When, want) || rules[0].Verdict != report.VerdictHolds {
			t.Errorf("%d seeds: the holds rule %q lacks %q", n, rules[0].When, want)
		}
	}
}
