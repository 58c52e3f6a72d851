package server

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"optimize/internal/testkit"
	"optimize/internal/testkit/studykit"
	"optimize/studies/report"
)

// A study whose run stops on an error says why wherever it is shown: the
// error is stored with the study (show's state is "failed" and its
// failure the error; list's too; the CLI's text says it and how to run
// on), and the dashboard's study page shows the error in place of charts
// with nothing to draw.
func TestAFailedStudySaysWhyItFailed(t *testing.T) {
	env := studykit.TempEnv(t, 1)
	if err := env.Registry.AddDir(testkit.StarvedTemplateDir(t)); err != nil {
		t.Fatal(err)
	}
	o := studykit.Study(testkit.StarvedTemplateName, "f", 3)
	o.Seeds = []int64{42}
	ctx := context.Background()
	row, err := env.Create(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	const why = testkit.StarvedError
	if err := env.Run(ctx, row); err == nil || !strings.Contains(err.Error(), why) {
		t.Fatalf("run: %v, want its trial's error (%s)", err, why)
	}
	r, err := report.Load(env.Store, env.Registry, "f")
	if err != nil {
		t.Fatal(err)
	}
	show := r.JSON()
	if show.State != "failed" || !strings.Contains(show.Failure, why) || show.TrialsComplete != 0 {
		t.Fatalf("show: state %q, failure %q, %d complete", show.State, show.Failure, show.TrialsComplete)
	}
	var text bytes.Buffer
	r.WriteTable(&text)
	if !strings.Contains(text.String(), "its last run stopped on an error: ") || !strings.Contains(text.String(), "optimize study resume f") {
		t.Errorf("study show's text does not say why it stopped:\n%s", text.String())
	}
	list, err := report.Summaries(env.Store, env.Registry)
	if err != nil || len(list) != 1 || list[0].State != "failed" || !strings.Contains(list[0].Failure, why) {
		t.Fatalf("list: %+v, %v", list, err)
	}

	ts := newServer(t, env, "127.0.0.1:0", "")
	b := newBrowser(t)
	var pill, failure, noTrials, listPill string
	var charts int
	b.run(t, chromedp.Navigate(ts.URL+"/study/f"), chromedp.WaitVisible("#failure", chromedp.ByQuery),
		chromedp.Text(".sub .pill", &pill, chromedp.ByQuery),
		chromedp.Text("#failure", &failure, chromedp.ByQuery),
		chromedp.Text("#no-trials", &noTrials, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('main svg').length`, &charts),
		chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible("#studies", chromedp.ByQuery),
		chromedp.Text("#studies .pill", &listPill, chromedp.ByQuery))
	if pill != "failed" || listPill != "failed" {
		t.Errorf("state pills: study page %q, list %q; want failed", pill, listPill)
	}
	if !strings.Contains(failure, why) || !strings.Contains(failure, "optimize study resume f") {
		t.Errorf("the study page's failure box: %q", failure)
	}
	if charts != 0 || !strings.Contains(noTrials, "the error above says why") {
		t.Errorf("the study page draws %d charts for a study without a finished trial; its card says %q", charts, noTrials)
	}
	b.checkProblems(t)
}
