package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"optimize/internal/testkit/studykit"
	"optimize/studies/report"
)

// A trial's page writes its parameters as study show does (report's
// ParamText, Go's %.6g): every cell of a real trial's parameter table,
// and the page's formatter on numbers at each of its edges (exponents
// below 1e-4 and from 1e6, trailing zeros, negatives, whole numbers).
func TestTrialPageRoundsParametersAsTheCLI(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	o := studykit.Study("slo-cascade", "s", 2)
	o.Seeds = []int64{42}
	r := studykit.RunStudy(t, env, o)
	ts := newServer(t, env, "127.0.0.1:0", "")
	b := newBrowser(t)

	edges := []float64{0.00001234567, 0.0001234567, 0.07801234567, 0.5, 103, 256, 12345.678, 999999.4, 1234567, -2.5e7, -0.0031415926}
	in, _ := json.Marshal(edges)
	var cells map[string]string
	var formatted []string
	trial := r.Complete[0]
	b.run(t, chromedp.Navigate(ts.URL+"/trial/s/0"), chromedp.WaitVisible("#params", chromedp.ByQuery),
		chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll('#params tr')].map((tr) => [tr.children[0].textContent, tr.children[1].textContent]))`, &cells),
		chromedp.Evaluate(`(`+string(in)+`).map(paramText)`, &formatted))
	want := r.ParamMap(trial.Params)
	if len(cells) != len(want) || len(cells) < 5 {
		t.Fatalf("parameter table %v, want %d parameters", cells, len(want))
	}
	fractional := 0
	for name, v := range want {
		if cells[name] != report.ParamText(v) {
			t.Errorf("%s: page %q, study show %q", name, cells[name], report.ParamText(v))
		}
		if f, ok := v.(float64); ok && f != float64(int64(f)) {
			fractional++
		}
	}
	if fractional == 0 {
		t.Errorf("trial 0 has no fractional parameter to round: %v", want)
	}
	for i, v := range edges {
		if i >= len(formatted) || formatted[i] != report.ParamText(v) {
			t.Errorf("paramText(%v) = %q, study show writes %q (page: %s)", v, formatted[min(i, len(formatted)-1)], report.ParamText(v), strings.Join(formatted, " "))
		}
	}
	b.checkProblems(t)
}
