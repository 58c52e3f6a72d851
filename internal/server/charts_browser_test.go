package server

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"optimize/internal/testkit/studykit"
	"optimize/search"
	"optimize/studies"
	"optimize/studies/report"
)

// overlapsJS lists, for the text elements a CSS selector picks, every
// pair whose bounding boxes overlap by more than half a pixel each way,
// and every element that leaves its SVG; it returns the count checked
// first, then the problems.
const overlapsJS = `((sel) => {
  const nodes = [...document.querySelectorAll(sel)].filter((n) => n.textContent !== '');
  const box = (n) => n.getBoundingClientRect();
  const out = [String(nodes.length)];
  for (let i = 0; i < nodes.length; i++) {
    const a = box(nodes[i]), s = nodes[i].ownerSVGElement.getBoundingClientRect();
    if (a.left < s.left - 0.5 || a.right > s.right + 0.5 || a.top < s.top - 0.5 || a.bottom > s.bottom + 0.5) out.push('outside its chart: ' + nodes[i].textContent);
    for (let j = i + 1; j < nodes.length; j++) {
      const b = box(nodes[j]);
      if (Math.min(a.right, b.right) - Math.max(a.left, b.left) > 0.5 && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 0.5)
        out.push(nodes[i].textContent + ' overlaps ' + nodes[j].textContent);
    }
  }
  return out;
})`

// textOverlaps runs overlapsJS on sel and fails the test on a problem or
// when fewer than want texts were checked.
func textOverlaps(t *testing.T, b *browser, what, sel string, want int) {
	t.Helper()
	var out []string
	b.run(t, chromedp.Evaluate(overlapsJS+`(`+"`"+sel+"`"+`)`, &out))
	if len(out) == 0 {
		t.Fatalf("%s: nothing returned", what)
	}
	if len(out) > 1 {
		t.Errorf("%s: %s texts checked; %s", what, out[0], strings.Join(out[1:], "; "))
	}
	if n, _ := strconv.Atoi(out[0]); n < want {
		t.Errorf("%s: %s texts checked, want at least %d", what, out[0], want)
	}
}

// On a real joint-slo study of 100 trials (17 parameters, five objectives, validated on
// held-out seeds and two regimes) at 1400 px, the study page's charts are
// legible: no two texts of the parallel-coordinates chart (one name per
// parameter, its range's ends or choices) overlap or leave the chart, nor
// the Pareto chart's axis label and ticks, nor the validation chart's
// labels and ticks; the baseline marker lies inside the Pareto plot area.
func TestJointSLOChartsAreLegible(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	r := studykit.RunStudy(t, env, studykit.Study("joint-slo", "js", 100))
	if len(r.Template.Params) < 17 {
		t.Fatalf("joint-slo has %d parameters: the test wants the 17+ the pictures must hold", len(r.Template.Params))
	}
	if _, err := env.Validate(context.Background(), "js", studies.ValidateOptions{Trial: -1, Regimes: []string{"rate-0.5x", "sustained-overload"}}); err != nil {
		t.Fatal(err)
	}
	ts := newServer(t, env, "127.0.0.1:0", "")
	b := newBrowser(t)
	b.run(t, chromedp.Navigate(ts.URL+"/study/js"), chromedp.WaitVisible("svg#parallel", chromedp.ByQuery),
		chromedp.WaitVisible("svg.validation", chromedp.ByQuery))
	if shot := os.Getenv("OPTIMIZE_SCREENSHOT_JOINT_SLO"); shot != "" {
		// The page down to the validation card's bottom: the charts,
		// without the table of trials beneath them.
		var bottom float64
		var png []byte
		b.run(t, chromedp.Evaluate(`[...document.querySelectorAll('svg.validation')].pop().closest('.card').getBoundingClientRect().bottom + window.scrollY + 16`, &bottom),
			chromedp.ActionFunc(func(ctx context.Context) error {
				var err error
				png, err = page.CaptureScreenshot().WithFormat(page.CaptureScreenshotFormatPng).
					WithClip(&page.Viewport{Width: 1400, Height: bottom, Scale: 1}).WithCaptureBeyondViewport(true).Do(ctx)
				return err
			}))
		if err := os.WriteFile(shot, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var names int
	b.run(t, chromedp.Evaluate(`document.querySelectorAll('svg#parallel text.param-name').length`, &names))
	if names != len(r.Template.Params) {
		t.Errorf("parallel: %d parameter names, want one per parameter (%d)", names, len(r.Template.Params))
	}
	textOverlaps(t, b, "parallel", "svg#parallel text", 2*len(r.Template.Params))
	// Objective axes name their unit.
	var labels []string
	b.run(t, chromedp.Evaluate(`[...document.querySelectorAll('svg#history text, svg#pareto text')].map((t) => t.textContent)`, &labels))
	historyLabel := "critical_ttft_p99 (ms)"
	if r.PrimaryLogScale() { // values over more than a decade: a log axis, as study plot draws it
		historyLabel += " (log scale)"
	}
	if !slices.Contains(labels, historyLabel) || !slices.Contains(labels, "tokens_per_sec (tokens/s)") {
		t.Errorf("history and Pareto axis labels %q: want %s and tokens_per_sec (tokens/s)", labels, historyLabel)
	}
	textOverlaps(t, b, "history", "svg#history text", 4)
	// The colour key names the best trial and its primary objective's
	// value, and says whether it is the best feasible one.
	var key string
	b.run(t, chromedp.Text("#parallel-key", &key, chromedp.ByQuery))
	best := r.Complete[r.Best]
	want := fmt.Sprintf("trial %d, the best feasible (%s ", best.Number, r.Template.Objectives[r.Template.Primary].Name)
	if !search.Feasible(best.Violation) {
		want = fmt.Sprintf("trial %d (", best.Number)
	}
	if !strings.Contains(key, want) || !strings.Contains(key, " ms") {
		t.Errorf("parallel key %q: want it to name %q with its value in ms", key, want)
	}

	textOverlaps(t, b, "validation", "svg.validation text", 6)
	textOverlaps(t, b, "importance", "svg#importance text", 2*len(r.Template.Params))
	// Every pair of objectives on the Pareto chart: the axis labels clear
	// the ticks, and the baseline's marker lies inside the plot area.
	for x := range r.Template.Objectives {
		for y := range r.Template.Objectives {
			var inside bool
			b.run(t, chromedp.Evaluate(fmt.Sprintf(`(() => {
			  for (const [id, v] of [['pareto-x', %d], ['pareto-y', %d]]) { const s = document.getElementById(id); s.value = String(v); s.dispatchEvent(new Event('change')); }
			  const m = document.querySelector('svg#pareto .baseline').getBoundingClientRect();
			  const a = document.querySelector('svg#pareto .plot-area').getBoundingClientRect();
			  return m.left >= a.left && m.right <= a.right && m.top >= a.top && m.bottom <= a.bottom;
			})()`, x, y), &inside))
			if !inside {
				t.Errorf("pareto %s × %s: the baseline marker is outside the plot area", r.Template.Objectives[x].Name, r.Template.Objectives[y].Name)
			}
			textOverlaps(t, b, "pareto "+r.Template.Objectives[x].Name+" × "+r.Template.Objectives[y].Name, "svg#pareto text", 6)
		}
	}
	var xTicks int
	b.run(t, chromedp.Evaluate(`document.querySelectorAll('svg.validation text.tick').length`, &xTicks))
	if xTicks < 3 {
		t.Errorf("validation: %d x ticks, want at least 3", xTicks)
	}

	// The comparison's history: ratios to the baseline spanning more than
	// 3× (an early feasible trial far above the baseline, the later ones
	// far below) are drawn on a log axis, its texts apart.
	o := studykit.Study("joint-slo", "js2", 30)
	o.SamplerSeed = 2
	studykit.RunStudy(t, env, o)
	var spread float64
	var label string
	b.run(t, chromedp.Navigate(ts.URL+"/compare/js,js2"), chromedp.WaitVisible("svg#compare-history polyline", chromedp.ByQuery),
		chromedp.Evaluate(`(async () => {
		  const r = [];
		  for (const n of ['js', 'js2']) for (const t of (await (await fetch('/api/studies/' + n + '/history')).json()).trials) if (t.best_feasible_ratio !== null) r.push(t.best_feasible_ratio);
		  return Math.max(...r, 1) / Math.min(...r, 1);
		})()`, &spread, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }),
		chromedp.Evaluate(`[...document.querySelectorAll('svg#compare-history text')].pop().textContent`, &label))
	if got := strings.Contains(label, "log scale"); got != (spread > 3) {
		t.Errorf("compare: ratios spanning %.2f×, y axis %q: want a log scale exactly when they span more than 3×", spread, label)
	}
	textOverlaps(t, b, "compare", "svg#compare-history text", 6)
	// The page shows its numbers: a row per study with its baseline and
	// best feasible primary value, as show reports them.
	var rows []string
	b.run(t, chromedp.Evaluate(`[...document.querySelectorAll('#compare-numbers tr')].slice(1).map((r) => r.innerText)`, &rows))
	if len(rows) != 2 {
		t.Fatalf("compare: %d rows of numbers, want one per study (2): %q", len(rows), rows)
	}
	for i, name := range []string{"js", "js2"} {
		rep, err := report.Load(env.Store, env.Registry, name)
		if err != nil {
			t.Fatal(err)
		}
		prim := rep.Table()[rep.Template.Primary]
		for _, want := range []string{name, rep.Template.Objectives[rep.Template.Primary].Name, report.Human(prim.Baseline)} {
			if !strings.Contains(rows[i], want) {
				t.Errorf("compare row %q lacks %q", rows[i], want)
			}
		}
	}
	if shot := os.Getenv("OPTIMIZE_SCREENSHOT_COMPARE"); shot != "" {
		var png []byte
		b.run(t, chromedp.FullScreenshot(&png, 100))
		if err := os.WriteFile(shot, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b.checkProblems(t)
}

// A parallel-coordinates chart of a few parameters (capacity's three) is
// drawn tall enough to read, not squashed into a strip.
func TestParallelChartOfFewParameters(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	r := studykit.RunStudy(t, env, studykit.Study("capacity", "cap", 4))
	if n := len(r.Template.Params); n > 4 {
		t.Fatalf("capacity has %d parameters: the test wants a few", n)
	}
	ts := newServer(t, env, "127.0.0.1:0", "")
	b := newBrowser(t)
	var height float64
	b.run(t, chromedp.Navigate(ts.URL+"/study/cap"), chromedp.WaitVisible("svg#parallel", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('svg#parallel').getBoundingClientRect().height`, &height))
	if height < 150 {
		t.Errorf("the parallel chart of %d parameters is %.0f px tall, want at least 150", len(r.Template.Params), height)
	}
	b.checkProblems(t)
}
