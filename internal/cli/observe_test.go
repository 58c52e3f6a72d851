package cli

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"optimize/internal/observe"
	"optimize/internal/testkit"
	"optimize/simcore/workload"
)

// readTraceCSV reads a written trace's rows as maps by column name.
func readTraceCSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]string
	for _, rec := range recs[1:] {
		row := map[string]string{}
		for i, name := range recs[0] {
			row[name] = rec[i]
		}
		rows = append(rows, row)
	}
	return rows
}

func atoiT(t *testing.T, s string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// observeSpec is a small chat workload: two tenants in two classes,
// prompts of ~100 tokens, 20-token answers.
const observeSpec = `version: "2"
seed: 42
aggregate_rate: 50
num_requests: 100
clients:
  - {id: a, tenant_id: tenant-a, slo_class: critical, rate_fraction: 0.5, arrival: {process: poisson},
     input_distribution: {type: gaussian, params: {mean: 100, std_dev: 30, min: 20, max: 200}},
     output_distribution: {type: constant, params: {value: 20}}}
  - {id: b, tenant_id: tenant-b, slo_class: sheddable, rate_fraction: 0.5, arrival: {process: poisson},
     input_distribution: {type: gaussian, params: {mean: 100, std_dev: 30, min: 20, max: 200}},
     output_distribution: {type: constant, params: {value: 20}}}
`

// optimize observe against a fake vLLM (first token after 20 ms, then one
// every 2 ms): the model comes from /v1/models, the calibration makes each
// prompt exactly its tokens (the server counts what was asked for), the
// warm-up request is left out, every row is ok with the spec's tenant and
// class and BLIS's times, the ITL file holds a line per generated token,
// and the trace replays in optimize simulate --trace.
func TestObserveRecordsAndReplays(t *testing.T) {
	v := testkit.NewVLLM(t, "served-model", 20*time.Millisecond, 2*time.Millisecond)
	dir := t.TempDir()
	spec := filepath.Join(dir, "chat.yaml")
	if err := os.WriteFile(spec, []byte(observeSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	header := filepath.Join(dir, "run.yaml")
	code, out, errs := run(t, "observe", "--server", v.URL, "--workload", spec, "--num-requests", "8", "--rate", "200",
		"--concurrency", "4", "--warm-up-requests", "1", "--record-itl", "--out", header, "--output", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var sum observe.Summary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if sum.Requests != 7 || sum.OK != 7 || sum.WarmUp != 1 || sum.TTFT.Mean < 20 || sum.TTFT.Mean > 60 ||
		sum.ITL.Mean < 1.5 || sum.ITL.Mean > 6 || sum.ServerInputTokens != sum.InputTokens {
		t.Errorf("summary %+v", sum)
	}
	if !strings.Contains(errs, "calibrated: the server counts 1.000 tokens a word, and 1 more a prompt") {
		t.Errorf("stderr: %s", errs)
	}
	if got := v.Received(); len(got) != 2+8 || got[2].Body["model"] != "served-model" || got[2].Header.Get("x-gateway-inference-fairness-id") == "" {
		t.Fatalf("%d requests; first of the workload %+v", len(got), got[2])
	}

	var h map[string]any
	data, _ := os.ReadFile(header)
	if err := yaml.Unmarshal(data, &h); err != nil {
		t.Fatal(err)
	}
	if h["mode"] != "real" || h["warm_up_requests"] != 1 || h["workload_spec"] != spec || h["workload_seed"] != 42 ||
		h["server"].(map[string]any)["model"] != "served-model" || h["network"].(map[string]any)["measured_rtt_ms"] == nil {
		t.Errorf("header:\n%s", data)
	}
	rows := readTraceCSV(t, filepath.Join(dir, "run.csv"))
	if len(rows) != 7 || rows[0]["request_id"] != "1" {
		t.Fatalf("%d rows, first %v", len(rows), rows[0])
	}
	tokens := 0
	for _, r := range rows {
		arrival, send, first, last := atoiT(t, r["arrival_time_us"]), atoiT(t, r["send_time_us"]), atoiT(t, r["first_chunk_time_us"]), atoiT(t, r["last_chunk_time_us"])
		if r["status"] != "ok" || r["tenant_id"] == "" || r["slo_class"] == "" || r["server_input_tokens"] != r["input_tokens"] ||
			r["num_chunks"] != r["output_tokens"] || r["finish_reason"] != "length" || !(arrival <= send && send < first && first <= last) ||
			arrival < time.Now().Add(-time.Minute).UnixMicro() {
			t.Errorf("row %v", r)
		}
		tokens += int(atoiT(t, r["output_tokens"]))
	}
	itl, _ := os.ReadFile(filepath.Join(dir, "run.itl.csv"))
	if n := strings.Count(string(itl), "\n"); n != 1+tokens {
		t.Errorf("%d ITL lines for %d tokens", n, tokens)
	}

	src, err := workload.LoadTrace(header, "", 16)
	if err != nil || src.Len() != 7 {
		t.Fatalf("LoadTrace: %v", err)
	}
	code, out, errs = run(t, "simulate", "--trace", header, "--output", "json")
	if code != 0 {
		t.Fatalf("simulate --trace: %s", errs)
	}
	var replayed struct{ Completed float64 }
	if err := json.Unmarshal([]byte(out), &replayed); err != nil || replayed.Completed != 7 {
		t.Errorf("replay: %v %s", err, out)
	}
}

// A workload with a shared system prompt (orthogonal-slo: 512 tokens,
// closed-loop sessions) sends it as the same text in every request, and
// records it as BLIS does: prefix_group and prefix_length, input_tokens
// the tokens after it.
func TestObserveSharedPrefix(t *testing.T) {
	v := testkit.NewVLLM(t, "m", 5*time.Millisecond, 100*time.Microsecond)
	header := filepath.Join(t.TempDir(), "t.yaml")
	code, _, errs := run(t, "observe", "--server", v.URL, "--model", "m", "--workload", "orthogonal-slo", "--num-requests", "5",
		"--rate", "100", "--out", header)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	got := v.Received()[2:]
	prefix := strings.Join(strings.Fields(got[0].Prompt)[:500], " ")
	for _, g := range got[1:] {
		if !strings.HasPrefix(g.Prompt, prefix) {
			t.Errorf("a prompt does not start with the shared prefix: %.80s…", g.Prompt)
		}
	}
	for _, r := range readTraceCSV(t, filepath.Join(filepath.Dir(header), "t.csv")) {
		in, served := atoiT(t, r["input_tokens"]), atoiT(t, r["server_input_tokens"])
		if r["prefix_group"] != "system-prompt" || r["prefix_length"] != "512" || in+512 != served || r["session_id"] == "" {
			t.Errorf("row %v", r)
		}
	}
	if code, _, errs := run(t, "simulate", "--trace", header); code != 0 {
		t.Errorf("simulate --trace: %s", errs)
	}
}

// Bad input is a one-line usage error naming the flag and what it
// allows; a server that does not answer is a runtime error naming it.
func TestObserveErrors(t *testing.T) {
	out := filepath.Join(t.TempDir(), "t.yaml")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--out", out}, 2, "optimize: --server: give the server's base URL, e.g. http://127.0.0.1:8000"},
		{[]string{"--server", "localhost:8000", "--out", out}, 2, `--server: "localhost:8000" is not an http:// or https:// URL`},
		{[]string{"--server", "http://h", "--api", "grpc", "--out", out}, 2, `--api: unknown value "grpc" (allowed: completions, chat)`},
		{[]string{"--server", "http://h"}, 2, "--out: give the trace header's path"},
		{[]string{"--server", "http://h", "--out", "t.csv"}, 2, `--out: "t.csv" must end in .yaml or .yml`},
		{[]string{"--server", "http://h", "--out", out, "--concurrency", "-1"}, 2, "--concurrency: must be ≥ 0 (0 = no cap), got -1"},
		{[]string{"--server", "http://h", "--out", out, "--timeout", "0s"}, 2, "--timeout: must be > 0"},
		{[]string{"--server", "http://h", "--out", out, "--output", "xml"}, 2, `--output: unknown value "xml" (allowed: text, json)`},
		{[]string{"--server", "http://h", "--out", out, "--workload", "nope"}, 2, "--workload:"},
		{[]string{"--server", "http://127.0.0.1:1", "--out", out, "--num-requests", "1"}, 1, "optimize: --server: http://127.0.0.1:1 does not answer:"},
	} {
		code, _, errs := run(t, append([]string{"observe"}, c.args...)...)
		if code != c.code || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args, code, errs, c.code, c.want)
		}
	}
	// A server that answers but lists no models needs --model.
	noModels := httptest.NewServer(http.NotFoundHandler())
	defer noModels.Close()
	code, _, errs := run(t, "observe", "--server", noModels.URL, "--out", out, "--num-requests", "1")
	if want := "optimize: --model: not given, and the server does not list its models (GET /v1/models: HTTP 404: 404 page not found): give --model\n"; code != 1 || errs != want {
		t.Errorf("exit %d, %q; want 1 and %q", code, errs, want)
	}
}

// Ctrl-C (a real SIGINT to the process) stops the run: nothing more is
// sent, the request in flight is cancelled and recorded as an error, the
// trace of what was done is written and the summary printed.
func TestObserveInterrupt(t *testing.T) {
	bin, _ := workerBinaries(t)
	v := testkit.NewVLLM(t, "m", time.Millisecond, 100*time.Microsecond)
	v.StallAfter = 2 + 1 // the calibration's two, then one request served; the rest never answer
	header := filepath.Join(t.TempDir(), "t.yaml")
	p := start(t, "observe", bin, nil, "observe", "--server", v.URL, "--workload", "steady-chat", "--rate", "20",
		"--num-requests", "50", "--out", header)
	for deadline := time.Now().Add(30 * time.Second); len(v.Received()) < 4 || v.Served() < 3; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no request stalled\n%s", p.err.String())
		}
	}
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, p.err.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("observe did not stop on SIGINT")
	}
	rows := readTraceCSV(t, filepath.Join(filepath.Dir(header), "t.csv"))
	sent := len(v.Received()) - 2
	// The first request was served whole; on a loaded machine the signal
	// can still come before the client read its last event, and it is
	// then recorded as cancelled, with its chunks.
	first := rows[0]
	if len(rows) != sent || sent >= 50 || first["first_chunk_time_us"] == "0" ||
		!(first["status"] == "ok" || strings.HasPrefix(first["error_message"], "cancelled")) {
		t.Fatalf("%d rows for %d sent: %v", len(rows), sent, rows)
	}
	for _, r := range rows[1:] {
		if r["status"] != "error" || !strings.HasPrefix(r["error_message"], "cancelled") {
			t.Errorf("row %v", r)
		}
	}
	ok := "1 ok, "
	if first["status"] != "ok" {
		ok = "0 ok, "
	}
	if !strings.Contains(p.err.String(), "stopped:") || !strings.Contains(p.out.String(), "requests "+strconv.Itoa(sent)+": "+ok) {
		t.Errorf("stdout %s\nstderr %s", p.out.String(), p.err.String())
	}
}
