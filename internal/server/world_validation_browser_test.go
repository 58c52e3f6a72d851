package server

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"optimize/internal/testkit/studykit"
	"optimize/studies"
)

// The dashboard shows a validation in other worlds from show's JSON: an
// interval per world in the chart, each world's verdict with the world
// named, and the worlds in the list of runs.
func TestDashboardShowsAValidationInAnotherWorld(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	studykit.RunStudy(t, env, studykit.Study("slo-cascade", "e", 6))
	worlds := []studies.WorldChange{{{Key: "latency.model", Value: "blackbox"}}, {{Key: "latency.model", Value: "trained-physics"}}}
	if _, err := env.Validate(context.Background(), "e", studies.ValidateOptions{Trial: -1, Seeds: []int64{100, 101, 102}, Worlds: worlds}); err != nil {
		t.Fatal(err)
	}
	ts := newServer(t, env, "127.0.0.1:0", "")
	b := newBrowser(t)
	var labels []string
	var card, runs string
	b.run(t, chromedp.Navigate(ts.URL+"/study/e"), chromedp.WaitVisible("svg.validation", chromedp.ByQuery),
		chromedp.Evaluate(`[...document.querySelectorAll('svg.validation > text')].map((t) => t.textContent).filter((t) => t.includes(' · trial '))`, &labels),
		chromedp.Evaluate(`document.querySelector('svg.validation').closest('.card').textContent`, &card),
		chromedp.Evaluate(`document.querySelector('#evidence-runs').textContent`, &runs))
	if len(labels) != 2 || !strings.HasPrefix(labels[0], "world blackbox · trial") || !strings.HasPrefix(labels[1], "world trained-physics · trial") {
		t.Errorf("chart labels %q: want one interval per world, blackbox then trained-physics", labels)
	}
	for _, want := range []string{"Validation (worlds)", "in a world the study was tuned in, meta-llama/llama-3.1-8b-instruct on H100, TP2, blackbox latency model, trial",
		"in another world, meta-llama/llama-3.1-8b-instruct on H100, TP2, trained-physics latency model, trial"} {
		if !strings.Contains(card, want) {
			t.Errorf("validation card lacks %q: %q", want, card)
		}
	}
	if !strings.Contains(runs, "latency.model=blackbox, latency.model=trained-physics") {
		t.Errorf("evidence runs lack the worlds: %q", runs)
	}
	b.checkProblems(t)
}

// With --regime too, each world's block at a regime is its own interval
// and verdict, the regime named in both.
func TestDashboardShowsAWorldAtARegime(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	studykit.RunStudy(t, env, studykit.Study("slo-cascade", "r", 4))
	worlds := []studies.WorldChange{{{Key: "latency.model", Value: "trained-physics"}}}
	if _, err := env.Validate(context.Background(), "r", studies.ValidateOptions{Trial: -1, Seeds: []int64{100, 101}, Worlds: worlds, Regimes: []string{"near-capacity"}}); err != nil {
		t.Fatal(err)
	}
	ts := newServer(t, env, "127.0.0.1:0", "")
	b := newBrowser(t)
	var labels []string
	var card string
	b.run(t, chromedp.Navigate(ts.URL+"/study/r"), chromedp.WaitVisible("svg.validation", chromedp.ByQuery),
		chromedp.Evaluate(`[...document.querySelectorAll('svg.validation > text')].map((t) => t.textContent).filter((t) => t.includes(' · trial '))`, &labels),
		chromedp.Evaluate(`document.querySelector('svg.validation').closest('.card').textContent`, &card))
	if len(labels) != 2 || !strings.HasPrefix(labels[0], "world trained-physics · trial") || !strings.HasPrefix(labels[1], "world trained-physics @ near-capacity · trial") {
		t.Errorf("chart labels %q: want trained-physics at the operating point, then at near-capacity", labels)
	}
	if want := "in another world at near-capacity, meta-llama/llama-3.1-8b-instruct on H100, TP2, trained-physics latency model, trial"; !strings.Contains(card, want) {
		t.Errorf("validation card lacks %q: %q", want, card)
	}
	b.tablesFit(t)
	b.checkProblems(t)
}
