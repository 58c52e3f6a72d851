package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"optimize/internal/testkit/studykit"
	"optimize/studies"
)

// The dashboard shows the latest validation of each kind, each with when
// it ran, its verdicts in the JSON's words and the JSON's rule, and lists
// every stored request: a Pareto validation after a regimes one hides
// nothing.
func TestDashboardShowsEveryKindOfValidation(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	studykit.RunStudy(t, env, studykit.Study("slo-cascade", "e", 10))
	ctx := context.Background()
	if _, err := env.Validate(ctx, "e", studies.ValidateOptions{Trial: -1, Seeds: []int64{100, 101, 102}, Regimes: []string{"rate-0.5x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Validate(ctx, "e", studies.ValidateOptions{Pareto: true, Seeds: []int64{200, 201}}); err != nil {
		t.Fatal(err)
	}
	ts := newServer(t, env, "127.0.0.1:0", "")
	code, body := get(t, ts.URL+"/api/studies/e")
	if code != 200 {
		t.Fatalf("show: %d %s", code, body)
	}
	var show struct {
		Validations []struct {
			Kind       string `json:"kind"`
			Candidates []struct {
				Trial   int    `json:"trial"`
				Verdict string `json:"verdict"`
			} `json:"candidates"`
			Verdicts []struct {
				When string `json:"when"`
			} `json:"verdicts"`
		} `json:"validations"`
	}
	if err := json.Unmarshal(body, &show); err != nil || len(show.Validations) != 2 {
		t.Fatalf("show JSON: %v, %d validations", err, len(show.Validations))
	}

	b := newBrowser(t)
	var charts, runs int
	var cards []string
	b.run(t, chromedp.Navigate(ts.URL+"/study/e"), chromedp.WaitVisible("svg.validation", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('svg.validation').length`, &charts),
		chromedp.Evaluate(`document.querySelectorAll('#evidence-runs tr').length - 1`, &runs),
		chromedp.Evaluate(`[...document.querySelectorAll('svg.validation')].map((s) => s.closest('.card').textContent)`, &cards))
	if charts != 2 || runs != 2 || len(cards) != 2 {
		t.Fatalf("%d validation charts, %d runs listed, %d cards; want 2, 2, 2", charts, runs, len(cards))
	}
	for i, v := range show.Validations {
		text := cards[i]
		if !strings.Contains(text, "Validation ("+v.Kind+")") || !strings.Contains(text, "ran ") || !strings.Contains(text, v.Verdicts[0].When) {
			t.Errorf("card %d lacks its kind %q, when it ran, or the JSON's rule: %q", i, v.Kind, text)
		}
		for _, c := range v.Candidates {
			if want := fmt.Sprintf("trial %d: %s", c.Trial, c.Verdict); !strings.Contains(text, want) {
				t.Errorf("card %d lacks %q", i, want)
			}
		}
	}
	b.tablesFit(t)
	b.checkProblems(t)
}

// tablesFit fails t for each table of the page wider than the card that
// holds it (it would scroll, or run off the card's edge).
func (b *browser) tablesFit(t *testing.T) {
	t.Helper()
	var overflows []string
	b.run(t, chromedp.Evaluate(`[...document.querySelectorAll('.card table')].filter((tb) => tb.scrollWidth > tb.closest('.card').clientWidth + 1).map((tb) => (tb.id || tb.closest('.card').querySelector('h2, h3')?.textContent || '?') + ' ' + tb.scrollWidth + '>' + tb.closest('.card').clientWidth)`, &overflows))
	if len(overflows) > 0 {
		t.Errorf("tables wider than their cards: %q", overflows)
	}
}
