package server

import (
	"bytes"
	"io/fs"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"optimize/internal/testkit/studykit"
	"optimize/studies/report"
)

// GET /api/glossary is `study show --explain --output json`, byte for
// byte, and the dashboard's scripts hold none of its text.
func TestGlossaryRouteIsTheCLIDocument(t *testing.T) {
	env := studykit.TempEnv(t, 1)
	ts := newServer(t, env, "127.0.0.1:0", "")
	status, body := get(t, ts.URL+"/api/glossary")
	var want bytes.Buffer
	_ = report.WriteJSON(&want, report.Glossary())
	if status != 200 || !bytes.Equal(body, want.Bytes()) {
		t.Fatalf("status %d; the API's glossary differs from the CLI's:\n%s", status, body)
	}
	scripts, err := fs.Glob(web, "web/*.js")
	if err != nil || len(scripts) < 2 {
		t.Fatalf("the dashboard's scripts: %v, %v", scripts, err)
	}
	for _, name := range scripts {
		js, err := fs.ReadFile(web, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, term := range report.Glossary().Terms {
			if strings.Contains(string(js), term.Meaning[:40]) {
				t.Errorf("%s holds a copy of the glossary's %s", name, term.Name)
			}
		}
	}
}

// The study page shows the glossary, every metric of its tables with a
// unit, and no number in scientific notation.
func TestDashboardShowsGlossaryAndUnits(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	studykit.RunStudy(t, env, studykit.Study("slo-cascade", "g", 4))
	ts := newServer(t, env, "127.0.0.1:0", "")
	b := newBrowser(t)
	var help, perClass, trialsHead, body string
	b.run(t, chromedp.Navigate(ts.URL+"/study/g"), chromedp.WaitVisible("#glossary", chromedp.ByQuery),
		chromedp.Evaluate(`document.getElementById('glossary').textContent`, &help),
		chromedp.Text("#per-class", &perClass, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('#trials tr').textContent`, &trialsHead),
		chromedp.Evaluate(`[...document.querySelectorAll('td, .sub')].map((n) => n.textContent).join('\n')`, &body))
	for _, term := range report.Glossary().Terms {
		if !strings.Contains(help, term.Name) || !strings.Contains(help, term.Meaning) {
			t.Errorf("the help panel lacks %s: %q", term.Name, help)
		}
	}
	for _, unit := range []string{"ms", "fraction", "tokens/s"} {
		if !strings.Contains(perClass, unit) {
			t.Errorf("the baseline-against-best table names no %s:\n%s", unit, perClass)
		}
	}
	if !strings.Contains(trialsHead, "critical_ttft_p99 (ms)") || !strings.Contains(trialsHead, "tokens_per_sec (tokens/s)") {
		t.Errorf("the trials table's header gives no units: %q", trialsHead)
	}
	if m := regexp.MustCompile(`\de[+-]?\d`).FindString(body); m != "" {
		t.Errorf("a table shows %q in scientific notation:\n%s", m, body)
	}
	var seedsHead string
	b.run(t, chromedp.Navigate(ts.URL+"/trial/g/1"), chromedp.WaitVisible("#seeds", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('#seeds tr').textContent`, &seedsHead))
	if !strings.Contains(seedsHead, "TTFT p99, ms") || !strings.Contains(seedsHead, "throughput, tokens/s") {
		t.Errorf("the trial page's seeds table gives no units: %q", seedsHead)
	}
	b.checkProblems(t)
}
