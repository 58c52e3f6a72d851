package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"optimize/internal/testkit"
	"optimize/internal/testkit/studykit"
	"optimize/simcore/metrics"
	"optimize/storage"
	"optimize/strategies"
	"optimize/studies"
	"optimize/studies/report"
)

func newServer(t *testing.T, env *studies.Env, addr, token string) *httptest.Server {
	t.Helper()
	srv, err := New(Config{Addr: addr, Token: token, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts
}

func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, body
}

func post(t *testing.T, url, token, body string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res.StatusCode, out
}

// Every GET route answers 200 with exactly the bytes the CLI's JSON for
// the same question would print.
func TestReadRoutesServeTheCLIJSON(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	studykit.RunStudy(t, env, studykit.Study("slo-cascade", "s1", 8))
	ts := newServer(t, env, "127.0.0.1:0", "")
	rep, err := report.Load(env.Store, env.Registry, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if err := env.LoadEvidence(rep); err != nil {
		t.Fatal(err)
	}
	list, _ := report.Summaries(env.Store, env.Registry)
	tpl, _ := env.Registry.Get("slo-cascade")
	var templates []strategies.TemplateSummary
	for _, t := range env.Registry.Templates() {
		templates = append(templates, t.Summary())
	}
	trial3, _ := rep.Trial(3)
	want := map[string]func(io.Writer) error{
		"/api/studies":               func(w io.Writer) error { return report.WriteJSON(w, list) },
		"/api/studies/s1":            func(w io.Writer) error { return report.WriteJSON(w, rep.JSON()) },
		"/api/studies/s1/trials":     func(w io.Writer) error { return rep.Export(w, "json", false) },
		"/api/studies/s1/pareto":     func(w io.Writer) error { return rep.Export(w, "json", true) },
		"/api/studies/s1/history":    func(w io.Writer) error { return report.WriteJSON(w, rep.History()) },
		"/api/studies/s1/trials/3":   func(w io.Writer) error { return report.WriteJSON(w, trial3) },
		"/api/templates":             func(w io.Writer) error { return report.WriteJSON(w, templates) },
		"/api/templates/slo-cascade": func(w io.Writer) error { return report.WriteJSON(w, tpl.JSON()) },
	}
	for path, fill := range want {
		var buf bytes.Buffer
		if err := fill(&buf); err != nil {
			t.Fatal(err)
		}
		code, body := get(t, ts.URL+path)
		if code != http.StatusOK || !bytes.Equal(body, buf.Bytes()) {
			t.Errorf("GET %s: %d, body differs from the CLI's JSON (%d vs %d bytes)", path, code, len(body), buf.Len())
		}
	}
	if code, body := get(t, ts.URL+"/api/healthz"); code != http.StatusOK || !strings.Contains(string(body), `"ok"`) {
		t.Errorf("healthz: %d %s", code, body)
	}
	// The dashboard's files, with a policy that forbids loading anything
	// from elsewhere.
	res, err := http.Get(ts.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if csp := res.Header.Get("Content-Security-Policy"); res.StatusCode != http.StatusOK || !strings.Contains(csp, "default-src 'self'") {
		t.Errorf("GET /: %d, CSP %q", res.StatusCode, csp)
	}
}

// Bad requests get a JSON error and the right status.
func TestErrors(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	studykit.RunStudy(t, env, studykit.Study("slo-cascade", "done", 4))
	ts := newServer(t, env, "127.0.0.1:0", "")
	errorOf := func(code int, body []byte, want int, mention string) {
		t.Helper()
		var e struct{ Error string }
		if err := json.Unmarshal(body, &e); err != nil || code != want || !strings.Contains(e.Error, mention) {
			t.Errorf("status %d body %s; want %d mentioning %q", code, body, want, mention)
		}
	}
	code, body := get(t, ts.URL+"/api/studies/nope")
	errorOf(code, body, 404, `"nope"`)
	code, body = get(t, ts.URL+"/api/studies/done/trials/99")
	errorOf(code, body, 404, "no complete trial 99")
	code, body = get(t, ts.URL+"/api/studies/done/validation")
	errorOf(code, body, 404, "no validation yet")
	code, body = get(t, ts.URL+"/api/templates/nope")
	errorOf(code, body, 404, "nope")
	code, body = get(t, ts.URL+"/api/nothing")
	errorOf(code, body, 404, "no API route")
	code, body = post(t, ts.URL+"/api/studies", "", `{"template": "slo-cascade", `)
	errorOf(code, body, 400, "malformed JSON")
	code, body = post(t, ts.URL+"/api/studies", "", `{"template": "slo-cascade", "trails": 3}`)
	errorOf(code, body, 400, `trails: not a field of this request (fields: template, name, trials, seeds, workload, sampler, sampler_seed, from, deployable)`)
	code, body = post(t, ts.URL+"/api/studies", "", `{"template": "nope"}`)
	errorOf(code, body, 400, "nope")
	code, body = post(t, ts.URL+"/api/studies", "", `{"template": "slo-cascade", "trials": 0}`)
	errorOf(code, body, 400, "trials: must be ≥ 1")
	// The CLI's one-line refusal, naming the field.
	code, body = post(t, ts.URL+"/api/studies", "", `{"template": "kv-pressure-slo", "deployable": true}`)
	errorOf(code, body, 400, "deployable: template kv-pressure-slo has nothing left to search that production carries: kv_pressure_slo_weight")
	code, body = post(t, ts.URL+"/api/studies", "", `{"template": "slo-cascade", "name": "done"}`)
	errorOf(code, body, 409, "already exists")
	code, body = post(t, ts.URL+"/api/studies/done/resume", "", ``)
	errorOf(code, body, 409, "is complete")
	code, body = post(t, ts.URL+"/api/studies/nope/resume", "", ``)
	errorOf(code, body, 404, "nope")
	big := `{"name": "` + strings.Repeat("x", MaxBody) + `"}`
	code, body = post(t, ts.URL+"/api/studies", "", big)
	errorOf(code, body, 413, "larger than")
}

// Beyond loopback a token is required, and every request must carry it.
func TestTokenOnNonLoopback(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	if _, err := New(Config{Addr: "0.0.0.0:8080", Env: env}); err == nil || !strings.Contains(err.Error(), "--token") {
		t.Fatalf("non-loopback without a token: %v", err)
	}
	ts := newServer(t, env, "0.0.0.0:8080", "s3cret")
	code, body := post(t, ts.URL+"/api/studies", "", `{"template": "slo-cascade", "trials": 2}`)
	if code != http.StatusUnauthorized || !strings.Contains(string(body), "Authorization: Bearer") {
		t.Errorf("write without token: %d %s", code, body)
	}
	code, _ = post(t, ts.URL+"/api/studies", "wrong", `{"template": "slo-cascade", "trials": 2}`)
	if code != http.StatusUnauthorized {
		t.Errorf("write with a wrong token: %d", code)
	}
	if code, _ := get(t, ts.URL+"/api/studies"); code != http.StatusUnauthorized {
		t.Errorf("a read without the token: %d, want 401", code)
	}
	code, body = post(t, ts.URL+"/api/studies", "s3cret", `{"template": "slo-cascade", "trials": 2, "name": "tok"}`)
	if code != http.StatusAccepted {
		t.Errorf("write with the token: %d %s", code, body)
	}
}

// A study created through the API runs in the server to its total; a
// shutdown in the middle of another leaves no trial running and loses
// none: a resume completes it to exactly its total.
func TestCreateRunsAndShutdownLosesNothing(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	srv, err := New(Config{Addr: "127.0.0.1:0", Env: env})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	url := "http://" + ln.Addr().String()
	code, body := post(t, url+"/api/studies", "", `{"template": "slo-cascade", "trials": 200, "name": "long"}`)
	if code != http.StatusAccepted || !strings.Contains(string(body), `"name": "long"`) {
		t.Fatalf("create: %d %s", code, body)
	}
	row, err := env.Store.StudyByName("long")
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if complete, _, _ := env.Store.Counts(row.ID); complete >= 5 || time.Now().After(deadline) {
			break
		}
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	complete, running, _ := env.Store.Counts(row.ID)
	if running != 0 || complete == 0 || complete >= 200 {
		t.Fatalf("after shutdown: %d complete, %d running; want some complete, none running", complete, running)
	}
	row.TrialsTotal = int(complete) + 3 // finish quickly: the total is the study's
	if err := testkit.DB(t, env.Store.Label).Exec("UPDATE study_rows SET trials_total = ? WHERE id = ?", row.TrialsTotal, row.ID).Error; err != nil {
		t.Fatal(err)
	}
	if err := env.Run(context.Background(), row); err != nil {
		t.Fatal(err)
	}
	trials, _ := env.Store.Trials(row.ID)
	seen := map[int]bool{}
	done := 0
	for _, tr := range trials {
		if seen[tr.Number] {
			t.Fatalf("trial number %d twice", tr.Number)
		}
		seen[tr.Number] = true
		if tr.State == storage.TrialComplete {
			done++
		}
	}
	if done != row.TrialsTotal {
		t.Errorf("%d complete trials after resume, want exactly %d", done, row.TrialsTotal)
	}
}

// The server keeps a study's report while the study is unchanged, and
// builds it anew as soon as a trial completes.
func TestReportCacheFollowsTheStudy(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	studykit.RunStudy(t, env, studykit.Study("slo-cascade", "c", 3))
	ts := newServer(t, env, "127.0.0.1:0", "")
	count := func() int {
		_, body := get(t, ts.URL+"/api/studies/c")
		var s struct {
			TrialsComplete int `json:"trials_complete"`
		}
		if err := json.Unmarshal(body, &s); err != nil {
			t.Fatal(err)
		}
		return s.TrialsComplete
	}
	if n := count(); n != 3 {
		t.Fatalf("%d complete, want 3", n)
	}
	row, _ := env.Store.StudyByName("c")
	testkit.DB(t, env.Store.Label).Exec("UPDATE study_rows SET trials_total = 5 WHERE id = ?", row.ID)
	row.TrialsTotal = 5
	if err := env.Run(context.Background(), row); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 5 {
		t.Errorf("after two more trials the API says %d complete, want 5", n)
	}
}

// A study page arrives with the documents its first view draws, escaped
// so that no stored string can close the data block.
func TestPagesCarryTheirFirstDocuments(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	studykit.RunStudy(t, env, studykit.Study("slo-cascade", "p1", 3))
	hostile := "<script>alert(1)</script>"
	if err := env.Store.CreateStudy(&storage.Study{Name: "x", Template: "slo-cascade", Workload: hostile, Seeds: []int64{42},
		Sampler: "tpe", TrialsTotal: 1, BaselineSeeds: []metrics.Summary{{}}}); err != nil {
		t.Fatal(err)
	}
	ts := newServer(t, env, "127.0.0.1:0", "")
	code, body := get(t, ts.URL+"/study/p1")
	if code != http.StatusOK || !strings.Contains(string(body), `id="preload"`) || !strings.Contains(string(body), `"studies/p1/history"`) {
		t.Errorf("study page: %d, no preloaded documents", code)
	}
	code, body = get(t, ts.URL+"/")
	if code != http.StatusOK || !strings.Contains(string(body), `"name":"p1"`) && !strings.Contains(string(body), `\"name\": \"p1\"`) && !strings.Contains(string(body), "p1") {
		t.Errorf("list page: %d", code)
	}
	if strings.Contains(string(body), hostile) {
		t.Error("a stored string reached the page unescaped")
	}
	if code, _ := get(t, ts.URL+"/study/nope"); code != http.StatusOK {
		t.Errorf("unknown study page: %d (the page itself says what is wrong)", code)
	}
}

// Without a token the server answers loopback host names only, and a
// write must be JSON from its own pages or a tool: what a web page in a
// browser on this machine could send it otherwise is refused.
func TestCrossSiteWritesAreRefused(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	ts := newServer(t, env, "127.0.0.1:0", "")
	send := func(mutate func(*http.Request)) int {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/api/studies", strings.NewReader(`{"template": "slo-cascade", "trials": 1, "name": "x"}`))
		req.Header.Set("Content-Type", "application/json")
		mutate(req)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if code := send(func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") }); code != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain write: %d, want 415", code)
	}
	if code := send(func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") }); code != http.StatusForbidden {
		t.Errorf("foreign origin: %d, want 403", code)
	}
	if code := send(func(r *http.Request) { r.Host = "evil.example:80" }); code != http.StatusMisdirectedRequest {
		t.Errorf("foreign host: %d, want 421", code)
	}
	if _, err := env.Store.StudyByName("x"); err == nil {
		t.Error("a refused write created the study")
	}
	if code := send(func(r *http.Request) { r.Header.Set("Origin", ts.URL) }); code != http.StatusAccepted {
		t.Errorf("a write from the server's own page: %d, want 202", code)
	}
}
