package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"optimize/internal/testkit/studykit"
	"optimize/studies/report"
)

// POST .../enqueue takes the CLI's vector as a JSON object, grows a
// finished study's total by one, and resume runs the vector as the next
// trial; a refused vector is 400 naming the parameter, as the CLI's.
func TestEnqueueOverHTTP(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	studykit.RunStudy(t, env, studykit.Study("slo-cascade", "done", 2))
	ts := newServer(t, env, "127.0.0.1:0", "")
	vector := `"critical_base": 12.3456789, "standard_base": 4, "age_weight_per_ms": 0.0123456789, ` +
		`"sheddable_urgency_ms": 150, "critical_prefill_chunk": 300`
	code, body := post(t, ts.URL+"/api/studies/done/enqueue", "", `{"params": {`+vector+`}}`)
	var e struct{ Error string }
	if json.Unmarshal(body, &e) != nil || code != http.StatusBadRequest ||
		!strings.HasPrefix(e.Error, "params: critical_blend: missing (numbers in [0, 1])") {
		t.Errorf("missing parameter: %d %s", code, body)
	}
	if code, body := post(t, ts.URL+"/api/studies/nope/enqueue", "", `{"params": {`+vector+`}}`); code != http.StatusNotFound {
		t.Errorf("unknown study: %d %s", code, body)
	}
	code, body = post(t, ts.URL+"/api/studies/done/enqueue", "", `{"params": {`+vector+`, "critical_blend": 0.35}}`)
	var q enqueueAnswer
	if json.Unmarshal(body, &q) != nil || code != http.StatusAccepted || q.TrialsTotal != 3 || q.Position != 1 {
		t.Fatalf("enqueue: %d %s, want 202 with position 1 and total 3", code, body)
	}
	if code, body := post(t, ts.URL+"/api/studies/done/resume", "", ``); code != http.StatusAccepted {
		t.Fatalf("resume: %d %s", code, body)
	}
	var r *report.Report
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var err error
		if r, err = report.Load(env.Store, env.Registry, "done"); err != nil {
			t.Fatal(err)
		}
		if len(r.Complete) == 3 || time.Now().After(deadline) {
			break
		}
	}
	if len(r.Complete) != 3 {
		t.Fatalf("%d complete trials, want 3", len(r.Complete))
	}
	got := r.ParamMap(r.Complete[2].Params)
	if got["critical_base"] != 12.3456789 || got["critical_blend"] != 0.35 || got["critical_prefill_chunk"] != 300.0 {
		t.Errorf("trial 2 ran %v, not the enqueued vector", got)
	}
}
