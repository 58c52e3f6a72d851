package server

import (
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"optimize/internal/testkit"
	"optimize/internal/testkit/studykit"
)

// The dashboard states each study's world: a column of the list, a line
// under the study's heading, the best trial's world and a table of the
// Pareto trials' worlds when the template tunes the world (one row per
// Pareto trial, each its own GPU and instances), and the world on a
// trial's page. A shipped template's study shows the seeds' world and no
// such table.
func TestDashboardStatesTheWorld(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	testkit.AddWorldTemplate(t, env.Registry)
	o := studykit.Study(testkit.WorldTemplateName, "w", 5)
	o.Seeds = []int64{42}
	r := studykit.RunStudy(t, env, o)
	studykit.RunStudy(t, env, studykit.Study("slo-cascade", "s", 2))
	ts := newServer(t, env, "127.0.0.1:0", "")
	b := newBrowser(t)

	var list, world, bestWorld, paretoGPUs, trialWorld, seedsWorld string
	var rows, seedsTables int
	b.run(t, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible("#studies", chromedp.ByQuery),
		chromedp.Text("#studies", &list, chromedp.ByQuery),
		chromedp.Navigate(ts.URL+"/study/w"), chromedp.WaitVisible("#pareto-worlds", chromedp.ByQuery),
		chromedp.Text("#world", &world, chromedp.ByQuery),
		chromedp.Text("#best-world", &bestWorld, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('#pareto-worlds tr').length - 1`, &rows),
		chromedp.Evaluate(`[...document.querySelectorAll('#pareto-worlds tr')].slice(1).map((r) => r.children[2].textContent + '×' + r.children[5].textContent).join(' ')`, &paretoGPUs),
		chromedp.Navigate(ts.URL+"/trial/w/0"), chromedp.WaitVisible("#seeds", chromedp.ByQuery),
		chromedp.Text("#world", &trialWorld, chromedp.ByQuery),
		chromedp.Navigate(ts.URL+"/study/s"), chromedp.WaitVisible("svg#history", chromedp.ByQuery),
		chromedp.Text("#world", &seedsWorld, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('#pareto-worlds').length`, &seedsTables))
	if !strings.Contains(list, "qwen3-14b H100×4 TP2 trained-physics") || !strings.Contains(list, "llama-3.1-8b-instruct H100×8 TP2 blackbox") {
		t.Errorf("list: %q lacks the studies' worlds", list)
	}
	if !strings.Contains(world, "world qwen/qwen3-14b on H100, TP2, trained-physics latency model · 4 instances") || !strings.Contains(world, "tunes gpu, num_instances") {
		t.Errorf("study line: %q", world)
	}
	best := &r.Complete[r.Best]
	if want := r.TrialWorld(best).String(); !strings.Contains(bestWorld, want) {
		t.Errorf("best trial's world %q, want %q", bestWorld, want)
	}
	var want []string
	for _, i := range r.Pareto {
		w := r.TrialWorld(&r.Complete[i])
		want = append(want, w.GPU+"×"+strconv.Itoa(w.Instances))
	}
	if rows != len(r.Pareto) || rows == 0 || paretoGPUs != strings.Join(want, " ") {
		t.Errorf("Pareto worlds: %d rows %q, want %d: %q", rows, paretoGPUs, len(r.Pareto), strings.Join(want, " "))
	}
	if !strings.HasPrefix(trialWorld, "world qwen/qwen3-14b on ") {
		t.Errorf("trial page: %q", trialWorld)
	}
	if !strings.HasPrefix(seedsWorld, "world meta-llama/llama-3.1-8b-instruct on H100, TP2, blackbox latency model · 8 instances") || seedsTables != 0 {
		t.Errorf("slo-cascade study: %q, %d Pareto world tables", seedsWorld, seedsTables)
	}
	b.tablesFit(t)
	b.checkProblems(t)
}
