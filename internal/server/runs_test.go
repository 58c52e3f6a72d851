package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"optimize/internal/testkit/studykit"
	"optimize/studies"
)

// waitComplete polls until study name has n complete trials and nothing
// running, or fails after a minute.
func waitComplete(t *testing.T, env *studies.Env, name string, n int) {
	t.Helper()
	row, err := env.Store.StudyByName(name)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		complete, running, err := env.Store.Counts(row.ID)
		if err == nil && int(complete) >= n && running == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("study %s: %d complete, %d running after a minute; want %d", name, complete, running, n)
		}
	}
}

// DELETE /api/studies/NAME/run stops a study running in the server (the
// trials in flight recorded); resume runs it on to exactly its total.
// Past --max-running-studies a create is refused before its baseline
// runs, so nothing is left behind.
func TestStopAndResumeThroughTheAPI(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	env.Limits = studies.DefaultLimits()
	env.Limits[studies.LimitRunning] = 1
	ts := newServer(t, env, "127.0.0.1:0", "")
	const total = 60
	if code, body := post(t, ts.URL+"/api/studies", "", `{"template": "slo-cascade", "trials": 60, "name": "long"}`); code != http.StatusAccepted {
		t.Fatalf("create: %d %s", code, body)
	}
	code, body := post(t, ts.URL+"/api/studies", "", `{"template": "slo-cascade", "trials": 2, "name": "second"}`)
	if code != http.StatusTooManyRequests || !strings.Contains(string(body), "over the limit of 1 studies running at once") {
		t.Errorf("a second study past --max-running-studies 1: %d %s; want 429 naming the limit", code, body)
	}
	if _, err := env.Store.StudyByName("second"); err == nil {
		t.Errorf("the refused create left study second behind")
	}
	res, out := send(t, http.MethodDelete, ts.URL+"/api/studies/long/run", nil, "")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("stop: %d %s", res.StatusCode, out)
	}
	row, _ := env.Store.StudyByName("long")
	complete, running, _ := env.Store.Counts(row.ID)
	if running != 0 || complete >= total {
		t.Fatalf("after stop: %d complete, %d running; want fewer than %d, none running", complete, running, total)
	}
	time.Sleep(300 * time.Millisecond)
	if later, _, _ := env.Store.Counts(row.ID); later != complete {
		t.Errorf("the stopped study went on: %d complete, then %d", complete, later)
	}
	if res, out := send(t, http.MethodDelete, ts.URL+"/api/studies/long/run", nil, ""); res.StatusCode != http.StatusConflict {
		t.Errorf("stopping a study that is not running: %d %s; want 409", res.StatusCode, out)
	}
	if res, _ := send(t, http.MethodDelete, ts.URL+"/api/studies/ghost/run", nil, ""); res.StatusCode != http.StatusNotFound {
		t.Errorf("stopping an unknown study: %d; want 404", res.StatusCode)
	}
	if code, body := post(t, ts.URL+"/api/studies/long/resume", "", ""); code != http.StatusAccepted {
		t.Fatalf("resume: %d %s", code, body)
	}
	waitComplete(t, env, "long", total)
	trials, _ := env.Store.Trials(row.ID)
	seen := map[int]bool{}
	for _, tr := range trials {
		if seen[tr.Number] {
			t.Fatalf("trial %d twice", tr.Number)
		}
		seen[tr.Number] = true
	}
	final, _, _ := env.Store.Counts(row.ID)
	if final != total {
		t.Errorf("%d complete after resume, want exactly %d", final, total)
	}
	var listed []struct{ Name string }
	_, list := get(t, ts.URL+"/api/studies")
	if err := json.Unmarshal(list, &listed); err != nil || len(listed) != 1 {
		t.Errorf("studies listed: %s", list)
	}
}

// A name sent back in an error is cut to errtext.EchoLimit bytes: a
// 100,000-character name is not reflected whole.
func TestEchoesAreBounded(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	ts := newServer(t, env, "127.0.0.1:0", "")
	long := strings.Repeat("n", 100_000)
	for _, path := range []string{"/api/studies/" + long, "/api/templates/" + long, "/api/no-such-route/" + long, "/api/studies/s/trials/" + long} {
		code, body := get(t, ts.URL+path)
		if code != http.StatusNotFound && code != http.StatusBadRequest || len(body) > 1000 || !strings.Contains(string(body), "nnnn") {
			t.Errorf("GET %.40s…: %d with %d bytes; want 404 or 400 quoting a bounded prefix", path, code, len(body))
		}
	}
	code, body := post(t, ts.URL+"/api/studies", "", `{"template": "`+long+`"}`)
	if code != http.StatusBadRequest || len(body) > 1000 {
		t.Errorf("create with a 100,000-character template name: %d with %d bytes", code, len(body))
	}
}
