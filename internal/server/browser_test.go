package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"optimize/internal/testkit/studykit"
	"optimize/search"
	"optimize/simcore/metrics"
	"optimize/storage"
	"optimize/studies"
	"optimize/studies/report"
)

// chromium finds Debian's chromium (which .ci/run installs).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium on this machine: install Debian's chromium package (.ci/run does) to run the browser tests")
	return ""
}

// browser starts headless Chromium and records every request the page
// makes and every console error, exception, log error and dialog.
type browser struct {
	ctx      context.Context
	mu       sync.Mutex
	requests []string
	problems []string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	// Chromium may still write its profile while it exits: remove it after
	// the browser, best effort, rather than through t.TempDir.
	profile, err := os.MkdirTemp("", "optimize-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { time.Sleep(100 * time.Millisecond); os.RemoveAll(profile) })
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1400, 2400),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	b := &browser{ctx: ctx}
	chromedp.ListenTarget(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			b.requests = append(b.requests, e.Request.URL)
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError || e.Type == runtime.APITypeWarning {
				b.problems = append(b.problems, "console "+string(e.Type))
			}
		case *runtime.EventExceptionThrown:
			b.problems = append(b.problems, "exception: "+e.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if e.Entry.Level == log.LevelError {
				b.problems = append(b.problems, "log: "+e.Entry.Text)
			}
		case *page.EventJavascriptDialogOpening:
			b.problems = append(b.problems, "dialog: "+e.Message)
		}
	})
	if err := chromedp.Run(ctx, network.Enable(), log.Enable(), runtime.Enable()); err != nil {
		t.Fatal(err)
	}
	return b
}

// checkProblems fails t for each console error, exception, error log
// entry or dialog the pages raised.
func (b *browser) checkProblems(t *testing.T) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.problems {
		t.Errorf("browser: %s", p)
	}
}

func (b *browser) run(t *testing.T, actions ...chromedp.Action) {
	t.Helper()
	if err := chromedp.Run(b.ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

// The dashboard in a real browser: the study is listed, a hostile name
// is text, the history has one mark per complete trial, changing the
// Pareto axes redraws the front, nothing is requested from anywhere but
// the server, and nothing is logged as an error.
func TestDashboardInChromium(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	studykit.RunStudy(t, env, studykit.Study("slo-cascade", "s1", 12))
	hostile := "<script>alert(1)</script>"
	if err := env.Store.CreateStudy(&storage.Study{Name: hostile, Template: "slo-cascade", Workload: "orthogonal-slo", Seeds: []int64{42},
		Sampler: "tpe", TrialsTotal: 1, BaselineSeeds: []metrics.Summary{{}}}); err != nil {
		t.Fatal(err)
	}
	ts := newServer(t, env, "127.0.0.1:0", "")
	b := newBrowser(t)

	var listText string
	var scripts int
	b.run(t, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible("#studies", chromedp.ByQuery),
		chromedp.Text("#studies", &listText, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('script:not([type="application/json"])').length`, &scripts))
	if !strings.Contains(listText, "s1") || !strings.Contains(listText, hostile) || scripts != 2 {
		t.Errorf("list: %q, %d executable script elements; want s1 and the hostile name as text, and only charts.js and app.js", listText, scripts)
	}

	var marks, before, after int
	var xsBefore, xsAfter string
	b.run(t, chromedp.Navigate(ts.URL+"/study/s1"), chromedp.WaitVisible("svg#history circle.trial", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('svg#history circle.trial').length`, &marks),
		chromedp.WaitVisible("svg#pareto circle", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('svg#pareto circle').length`, &before),
		chromedp.Evaluate(`[...document.querySelectorAll('svg#pareto circle')].map(c => c.getAttribute('cy')).join(',')`, &xsBefore),
		chromedp.Evaluate(`(() => { const s = document.getElementById('pareto-y'); s.value = '3'; s.dispatchEvent(new Event('change')); return true })()`, nil),
		chromedp.Evaluate(`document.querySelectorAll('svg#pareto circle').length`, &after),
		chromedp.Evaluate(`[...document.querySelectorAll('svg#pareto circle')].map(c => c.getAttribute('cy')).join(',')`, &xsAfter))
	if marks != 12 {
		t.Errorf("history: %d marks, want one per complete trial (12)", marks)
	}
	if before != 12 || after != 12 || xsBefore == xsAfter {
		t.Errorf("pareto: %d points, then %d after changing the y axis; positions changed: %v", before, after, xsBefore != xsAfter)
	}
	if shot := os.Getenv("OPTIMIZE_SCREENSHOT"); shot != "" {
		var png []byte
		b.run(t, chromedp.FullScreenshot(&png, 90))
		if err := os.WriteFile(shot, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	var trialText string
	b.run(t, chromedp.Navigate(ts.URL+"/trial/s1/3"), chromedp.WaitVisible("#seeds", chromedp.ByQuery),
		chromedp.Text("#seeds", &trialText, chromedp.ByQuery))
	if !strings.Contains(trialText, "42") || !strings.Contains(trialText, "44") {
		t.Errorf("trial page lacks its seeds: %q", trialText)
	}

	b.mu.Lock()
	defer b.mu.Unlock()
	for _, u := range b.requests {
		if !strings.HasPrefix(u, ts.URL+"/") && !strings.HasPrefix(u, "data:") {
			t.Errorf("request outside the server: %s", u)
		}
	}
	if len(b.requests) < 5 {
		t.Errorf("only %d requests recorded: %v", len(b.requests), b.requests)
	}
	for _, p := range b.problems {
		t.Errorf("browser: %s", p)
	}
}

// On a sustained-overload joint-slo study whose first trials all miss the
// tokens/s constraint (random draws, sampler seed 2: trials 0–2
// infeasible, one at 226 ms against the first feasible trial's 8,393 ms;
// a model-based sampler's trial 0, the template's configuration, is
// feasible), the dashboard's
// history line is the best feasible value so far as the server sends it:
// it starts at the first feasible trial and never rises.
func TestDashboardBestFeasibleLineNeverRises(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	env.Workers = 1
	row, err := env.Create(context.Background(), studies.CreateOptions{Template: "joint-slo", Name: "ov", Trials: 8,
		Seeds: []int64{42, 43, 44}, Workload: "orthogonal-slo@sustained-overload", Sampler: "random", SamplerSeed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Run(context.Background(), row); err != nil {
		t.Fatal(err)
	}
	r, err := report.Load(env.Store, env.Registry, "ov")
	if err != nil {
		t.Fatal(err)
	}
	first := -1
	for i := range r.Complete {
		if search.Feasible(r.Complete[i].Violation) && first < 0 {
			first = i
		}
	}
	if first < 3 {
		t.Fatalf("first feasible trial %d: the study no longer starts infeasible", first)
	}
	ts := newServer(t, env, "127.0.0.1:0", "")
	b := newBrowser(t)
	var points string
	var infeasible int
	b.run(t, chromedp.Navigate(ts.URL+"/study/ov"), chromedp.WaitVisible("svg#history polyline.best", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('svg#history polyline.best').getAttribute('points')`, &points),
		chromedp.Evaluate(`document.querySelectorAll('svg#history circle.infeasible').length`, &infeasible))
	var ys []float64
	for pt := range strings.FieldsSeq(points) {
		_, y, _ := strings.Cut(pt, ",")
		v, err := strconv.ParseFloat(y, 64)
		if err != nil {
			t.Fatalf("points %q: %v", points, err)
		}
		ys = append(ys, v)
	}
	// SVG's y grows downwards: a value that never rises has a y that never
	// shrinks.
	if len(ys) != len(r.Complete)-first || infeasible < first {
		t.Fatalf("line of %d points (want %d, from trial %d); %d infeasible marks", len(ys), len(r.Complete)-first, first, infeasible)
	}
	for i := 1; i < len(ys); i++ {
		if ys[i] < ys[i-1] {
			t.Fatalf("the best feasible line rises at point %d: %v", i, points)
		}
	}
	b.checkProblems(t)
}

// signInInBrowser opens path on a token-protected server, meets the
// sign-in form, gives the token and waits for sel on the page it leads to.
func (b *browser) signIn(t *testing.T, base, path, token, sel string) {
	t.Helper()
	var formShown bool
	b.run(t, chromedp.Navigate(base+path), chromedp.WaitVisible("#login", chromedp.ByQuery),
		chromedp.Evaluate(`!!document.querySelector('#login input[type=password]') && !document.querySelector('#studies, svg')`, &formShown),
		chromedp.SendKeys(`#login input[name="token"]`, token, chromedp.ByQuery),
		chromedp.Submit(`#login`, chromedp.ByQuery),
		chromedp.WaitVisible(sel, chromedp.ByQuery))
	if !formShown {
		t.Fatalf("%s without the token showed more than the sign-in form", path)
	}
	b.mu.Lock()
	b.problems = nil // the page first answered 401, which the browser logs
	b.mu.Unlock()
}

// With a token, the dashboard shows a browser the sign-in form and
// nothing else; once the token is given, the page asked for draws, the
// API answers its later requests, no script can read the cookie, and the
// create form runs a study.
func TestTokenDashboardInChromium(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	studykit.RunStudy(t, env, studykit.Study("slo-cascade", "s1", 4))
	ts := newServer(t, env, "127.0.0.1:0", "s3cret")
	b := newBrowser(t)
	b.signIn(t, ts.URL, "/study/s1", "s3cret", "svg#history circle.trial")
	var marks, status int
	var cookie, path string
	awaited := func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }
	b.run(t, chromedp.Evaluate(`document.querySelectorAll('svg#history circle.trial').length`, &marks),
		chromedp.Evaluate(`location.pathname`, &path),
		chromedp.Evaluate(`fetch('/api/studies/s1/trials/2').then((r) => r.status)`, &status, awaited),
		chromedp.Evaluate(`document.cookie`, &cookie))
	if marks != 4 || path != "/study/s1" || status != 200 || cookie != "" {
		t.Errorf("after signing in: %d history marks (want 4) at %s, a later API read %d (want 200), document.cookie %q (want none readable)", marks, path, status, cookie)
	}
	b.run(t, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible("form.create", chromedp.ByQuery),
		chromedp.SetValue(`form.create input[name="trials"]`, "1", chromedp.ByQuery),
		chromedp.SetValue(`form.create input[name="name"]`, "made-in-browser", chromedp.ByQuery),
		chromedp.Click(`form.create button`, chromedp.ByQuery),
		chromedp.WaitVisible("svg#history", chromedp.ByQuery),
		chromedp.Evaluate(`location.pathname`, &path))
	if _, err := env.Store.StudyByName("made-in-browser"); err != nil || path != "/study/made-in-browser" {
		t.Errorf("the create form with the cookie: %v, at %s", err, path)
	}
	b.checkProblems(t)
}

// statusRecorder keeps the status a handler answered.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) { s.status = code; s.ResponseWriter.WriteHeader(code) }

// A page on another site (localhost is another site than 127.0.0.1)
// open in the browser of a signed-in user tries to create a study on
// the server: as a simple request that needs no preflight, and as JSON
// with its preflight. Neither gets through, with a token or without.
func TestCrossSiteWriteRefusedInChromium(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	b := newBrowser(t)
	for _, token := range []string{"", "s3cret"} {
		srv, err := New(Config{Addr: "127.0.0.1:0", Token: token, Env: env})
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var seen []string
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
			srv.Handler().ServeHTTP(rec, r)
			if r.URL.Path == "/api/studies" {
				mu.Lock()
				seen = append(seen, fmt.Sprintf("%s %d", r.Method, rec.status))
				mu.Unlock()
			}
		}))
		defer ts.Close()
		name := "evil-" + strconv.Itoa(len(token))
		evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<!doctype html><title>evil</title><script>
const body = JSON.stringify({template: 'slo-cascade', trials: 1, name: %q});
Promise.allSettled([
  fetch(%q, {method: 'POST', mode: 'no-cors', credentials: 'include', headers: {'Content-Type': 'text/plain'}, body}),
  fetch(%q, {method: 'POST', credentials: 'include', headers: {'Content-Type': 'application/json'}, body}),
]).then(() => { document.title = 'done'; });
</script>`, name, ts.URL+"/api/studies", ts.URL+"/api/studies")
		}))
		defer evil.Close()
		if token != "" {
			b.signIn(t, ts.URL, "/", token, "#studies, .muted")
		}
		evilURL := strings.Replace(evil.URL, "127.0.0.1", "localhost", 1)
		b.run(t, chromedp.Navigate(evilURL), chromedp.Poll(`document.title === 'done'`, nil))
		mu.Lock()
		got := strings.Join(seen, ", ")
		mu.Unlock()
		if _, err := env.Store.StudyByName(name); err == nil || got != "POST 403, OPTIONS 405" && got != "OPTIONS 405, POST 403" {
			t.Errorf("token %q: the server saw %q (want the simple POST refused 403 and the preflight 405), study created: %v", token, got, err == nil)
		}
	}
}
