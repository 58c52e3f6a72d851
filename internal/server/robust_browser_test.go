package server

import (
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"optimize/internal/testkit/studykit"
	"optimize/strategies"
	"optimize/studies/report"
)

// The dashboard shows, from show's JSON, a robust study's best trial in
// each scenario with the binding one marked and named, and the latest
// max-rate search: its sentence with the stored rates and a row per seed.
func TestDashboardShowsRobustScenariosAndMaxRate(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	r := studykit.RobustStudyWithMaxRate(t, env, "rb", 3)
	rj, err := r.Robust(&r.Complete[r.Best])
	if err != nil || rj == nil {
		t.Fatalf("robust table: %v, %v", rj, err)
	}
	m := r.MaxRate
	ts := newServer(t, env, "127.0.0.1:0", "")
	b := newBrowser(t)
	var scenarios, bound []string
	var binding, summary string
	var seeds int
	b.run(t, chromedp.Navigate(ts.URL+"/study/rb"), chromedp.WaitVisible("#max-rate", chromedp.ByQuery),
		chromedp.Evaluate(`[...document.querySelectorAll('#robust tr')].slice(1).map((r) => r.cells[0].textContent)`, &scenarios),
		chromedp.Evaluate(`[...document.querySelectorAll('#robust tr.binding')].map((r) => r.cells[0].textContent)`, &bound),
		chromedp.Evaluate(`document.querySelector('#robust-binding').textContent`, &binding),
		chromedp.Evaluate(`document.querySelector('#max-rate-summary').textContent`, &summary),
		chromedp.Evaluate(`document.querySelectorAll('#max-rate tr').length - 1`, &seeds))
	if strings.Join(scenarios, ",") != "base,near-capacity" {
		t.Errorf("robust rows %q, want base then near-capacity", scenarios)
	}
	if len(bound) != 1 || bound[0] != rj.Binding || !strings.HasPrefix(binding, "binds: "+rj.Binding) {
		t.Errorf("binding rows %q, sentence %q: want %s marked and named", bound, binding, rj.Binding)
	}
	for _, want := range []string{"trial " + strconv.Itoa(m.Trial) + " sustains " + report.RateText(float64(m.Winner)) + " " + m.Unit,
		"the baseline " + report.RateText(float64(m.Baseline)) + " (", "2 seeds)"} {
		if !strings.Contains(summary, want) {
			t.Errorf("max-rate sentence %q lacks %q", summary, want)
		}
	}
	if seeds != len(m.PerSeed) || seeds != 2 {
		t.Errorf("%d max-rate rows, want one per seed (%d)", seeds, len(m.PerSeed))
	}
	b.checkProblems(t)
}

// A robust study run with --prune says on the dashboard how many trials
// were pruned, in the header and in the scenario card with the
// simulations run, as show's JSON counts them.
func TestDashboardShowsPruning(t *testing.T) {
	env := studykit.TempEnv(t, 1)
	o := studykit.Study("slo-cascade", "pr", 10)
	o.Seeds = []int64{42, 43}
	o.Robust = strategies.Robust{Regimes: []string{strategies.BaseRegime, "near-capacity"}, Prune: true}
	r := studykit.RunStudy(t, env, o)
	rj, err := r.Robust(&r.Complete[r.Best])
	if err != nil || rj == nil || rj.Pruned == 0 {
		t.Fatalf("robust table %+v, %v: want pruned trials", rj, err)
	}
	ts := newServer(t, env, "127.0.0.1:0", "")
	b := newBrowser(t)
	var head, pruning string
	b.run(t, chromedp.Navigate(ts.URL+"/study/pr"), chromedp.WaitVisible("#robust-pruning", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('.sub').textContent`, &head),
		chromedp.Evaluate(`document.querySelector('#robust-pruning').textContent`, &pruning))
	if want := strconv.Itoa(len(r.Pruned)) + " pruned"; !strings.Contains(head, want) {
		t.Errorf("header %q lacks %q", head, want)
	}
	if want := strconv.Itoa(rj.Pruned) + " trials stopped"; !strings.Contains(pruning, want) || !strings.Contains(pruning, strconv.FormatInt(rj.Simulations, 10)+" simulations run") {
		t.Errorf("pruning line %q: want %q and %d simulations run", pruning, want, rj.Simulations)
	}
	b.tablesFit(t)
	b.checkProblems(t)
}
