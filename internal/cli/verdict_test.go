package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// verdictCandidate is a validated trial as `validate --output json` gives it.
type verdictCandidate struct {
	Trial      int                      `json:"trial"`
	Overfit    bool                     `json:"overfit"`
	Verdict    string                   `json:"verdict"`
	Detail     string                   `json:"detail"`
	Failed     string                   `json:"failed"`
	Objectives map[string]objectiveJSON `json:"objectives"`
}

type verdictValidation struct {
	Kind       string             `json:"kind"`
	RanAt      *time.Time         `json:"ran_at"`
	Seeds      []int64            `json:"seeds"`
	Candidates []verdictCandidate `json:"candidates"`
	Regimes    []struct {
		Name       string             `json:"name"`
		Candidates []verdictCandidate `json:"candidates"`
	} `json:"regimes"`
	Verdicts []struct {
		Verdict string `json:"verdict"`
		When    string `json:"when"`
	} `json:"verdicts"`
}

// On a 100-trial joint-slo study, a trial whose held-out interval of the
// primary objective (critical TTFT P99, minimised) lies below zero and
// that beats the baseline on ≥ 8 of 10 held-out seeds holds: the JSON
// says holds (or holds, smaller than in-study) and overfit false, and the
// text says the same words, never "overfit", for each such candidate.
func TestValidateSaysHoldsOnAJointSLOStudy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 100-trial study")
	}
	dsn := createTemplateStudy(t, "joint-slo", "j", 100)
	holding := 0
	for _, which := range [][]string{nil, {"--pareto"}} {
		args := append([]string{"study", "validate", "j", "--storage", dsn}, which...)
		code, js, errs := run(t, append(args, "--output", "json")...)
		if code != 0 {
			t.Fatalf("%v: %s", args, errs)
		}
		var v verdictValidation
		if err := json.Unmarshal([]byte(js), &v); err != nil {
			t.Fatal(err)
		}
		_, text, _ := run(t, args...)
		for _, c := range v.Candidates {
			crit := c.Objectives["critical_ttft_p99"]
			line := candidateLine(text, c.Trial)
			if !strings.HasPrefix(line, fmt.Sprintf("trial %d: %s — ", c.Trial, c.Verdict)) {
				t.Errorf("%v trial %d: the text says %q, the JSON %q", which, c.Trial, line, c.Verdict)
			}
			if crit.CI95[1] == nil || !(*crit.CI95[1] < 0) || crit.Better < 8 || crit.NumSeeds != 10 || c.Failed != "" {
				continue
			}
			holding++
			if c.Overfit || !strings.HasPrefix(c.Verdict, "holds") || strings.Contains(line, "overfit") {
				t.Errorf("%v trial %d (%s): verdict %q, overfit %v, text %q; want holds, not overfit",
					which, c.Trial, c.Detail, c.Verdict, c.Overfit, line)
			}
		}
		if len(v.Verdicts) != 5 || !strings.Contains(text, "≥ 8 of 10 held-out seeds") {
			t.Errorf("%v: the rule is not stated: %d verdicts in the JSON; text:\n%s", which, len(v.Verdicts), text)
		}
	}
	if holding < 2 {
		t.Fatalf("only %d candidates with an interval below zero on ≥ 8 of 10 seeds: the study no longer shows the case", holding)
	}
}

// candidateLine is the text's line for trial n's verdict, trimmed.
func candidateLine(text string, n int) string {
	for line := range strings.SplitSeq(text, "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, fmt.Sprintf("trial %d: ", n)) {
			return l
		}
	}
	return ""
}

// A later validation does not erase an earlier one: after `validate
// --regimes` then `validate --pareto --seeds 200-219`, show's JSON has
// the regimes' result (with when it ran) beside the Pareto one, lists both
// requests, and keeps `validation` as the latest; the text and the HTML
// report show both.
func TestLaterValidationKeepsTheRegimes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a study and two validations")
	}
	dsn := createTemplateStudy(t, "slo-cascade", "k", 20)
	began := time.Now().Add(-time.Second)
	for _, args := range [][]string{{"--regimes", "--seeds", "100-102"}, {"--pareto", "--seeds", "200-219"}} {
		if code, _, errs := run(t, append([]string{"study", "validate", "k", "--storage", dsn}, args...)...); code != 0 {
			t.Fatalf("validate %v: %s", args, errs)
		}
	}
	code, out, errs := run(t, "study", "show", "k", "--storage", dsn, "--output", "json")
	if code != 0 {
		t.Fatal(errs)
	}
	var show struct {
		Validation   *verdictValidation  `json:"validation"`
		Validations  []verdictValidation `json:"validations"`
		EvidenceRuns []struct {
			Kind    string    `json:"kind"`
			RanAt   time.Time `json:"ran_at"`
			Seeds   []int64   `json:"seeds"`
			Regimes []string  `json:"regimes"`
		} `json:"evidence_runs"`
	}
	if err := json.Unmarshal([]byte(out), &show); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, v := range show.Validations {
		kinds = append(kinds, v.Kind)
	}
	if !slices.Equal(kinds, []string{"regimes", "pareto"}) {
		t.Fatalf("show's validations: %v, want the regimes' and the Pareto one", kinds)
	}
	rg, pa := show.Validations[0], show.Validations[1]
	if len(rg.Regimes) < 2 || !slices.Equal(rg.Seeds, []int64{100, 101, 102}) || rg.RanAt == nil || rg.RanAt.Before(began) {
		t.Errorf("regimes' result: %d regimes, seeds %v, ran %v", len(rg.Regimes), rg.Seeds, rg.RanAt)
	}
	for _, r := range rg.Regimes {
		if len(r.Candidates) != 1 || r.Candidates[0].Verdict == "" {
			t.Errorf("regime %s: %+v", r.Name, r.Candidates)
		}
	}
	if len(pa.Seeds) != 20 || len(pa.Candidates) == 0 || pa.RanAt == nil || pa.RanAt.Before(*rg.RanAt) {
		t.Errorf("Pareto result: %d seeds, %d candidates, ran %v (regimes %v)", len(pa.Seeds), len(pa.Candidates), pa.RanAt, rg.RanAt)
	}
	if show.Validation == nil || show.Validation.Kind != "pareto" {
		t.Errorf("validation (the latest) is %+v, want the Pareto one", show.Validation)
	}
	if len(show.EvidenceRuns) != 2 || show.EvidenceRuns[0].Kind != "regimes" || show.EvidenceRuns[1].Kind != "pareto" ||
		len(show.EvidenceRuns[0].Regimes) != len(rg.Regimes) {
		t.Errorf("evidence runs: %+v", show.EvidenceRuns)
	}

	_, text, _ := run(t, "study", "show", "k", "--storage", dsn)
	for _, want := range []string{"latest `study validate --regimes`, ran ", "latest `study validate --pareto`, ran ", "Regimes (same seeds",
		"Held-out validation: seeds 200–219", "Evidence runs (2, oldest first"} {
		if !strings.Contains(text, want) {
			t.Errorf("show lacks %q", want)
		}
	}
	if n := strings.Count(text, "Verdicts on critical_ttft_p99"); n != 2 {
		t.Errorf("show states the rule %d times, want once per number of seeds (3 and 20)", n)
	}
	html := filepath.Join(t.TempDir(), "k.html")
	if code, _, errs := run(t, "study", "report", "k", "--storage", dsn, "--output", html); code != 0 {
		t.Fatal(errs)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<code>study validate --regimes</code>", "<code>study validate --pareto</code>", "<h3>Regimes</h3>"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}
