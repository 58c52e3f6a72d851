package observe

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"optimize/internal/testkit"
	"optimize/simcore"
	"optimize/simcore/workload"
)

// epoch is the injected clock's origin: times recorded on it are
// recognisably not the wall clock's.
var epoch = time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)

// testClock runs from epoch at the wall clock's pace (Run waits on real
// timers, so the clock must advance).
func testClock() func() time.Time {
	t0 := time.Now()
	return func() time.Time { return epoch.Add(time.Since(t0)) }
}

func ms(us int64) float64 { return float64(us) / 1000 }

// Against a server with known delays (first token 30 ms after the
// request, then one every 5 ms, usage in the last event), a run measures
// those delays, the server's counts, and the times' arithmetic on the
// injected clock: arrival = start + due exactly, send ≥ arrival, first
// chunk = send + TTFT, last = first + 7 gaps; and it sends BLIS's body
// and headers.
func TestRunMeasuresKnownDelays(t *testing.T) {
	v := testkit.NewVLLM(t, "m", 30*time.Millisecond, 5*time.Millisecond)
	c := &Client{BaseURL: v.URL, Model: "m", APIKey: "k", Now: testClock()}
	var reqs []Request
	for i := range 6 {
		reqs = append(reqs, Request{ID: i, Due: time.Duration(i) * 20 * time.Millisecond, Prompt: "one two three four",
			InputTokens: 4, OutputTokens: 8, Tenant: "t1", Class: "critical", ClientID: "c"})
	}
	res := c.Run(context.Background(), List(reqs), Options{})
	if len(res.Records) != 6 || res.Stopped || res.WarmedUp != 0 {
		t.Fatalf("%d records, stopped %v", len(res.Records), res.Stopped)
	}
	start := res.Start.UnixMicro()
	if start < epoch.UnixMicro() || start > epoch.Add(time.Second).UnixMicro() {
		t.Fatalf("start %d µs is not on the injected clock", start)
	}
	for i, r := range res.Records {
		if r.ID != i || r.Status != StatusOK || r.Error != "" {
			t.Fatalf("record %d: %+v", i, r)
		}
		if r.ArrivalUs-start != int64(i)*20_000 {
			t.Errorf("request %d: arrival − start %d µs, want its due time %d", i, r.ArrivalUs-start, i*20_000)
		}
		// A loaded 2-core machine delays a due goroutine by up to ~30 ms
		// (measured 27 ms at load average 9); a late send is one later than that.
		if lag := r.SendUs - r.ArrivalUs; lag < 0 || lag > 40_000 {
			t.Errorf("request %d: sent %d µs after it was due", i, lag)
		}
		if ttft := ms(r.FirstChunkUs - r.SendUs); ttft < 30 || ttft > 60 {
			t.Errorf("request %d: TTFT %.1f ms, the server waits 30", i, ttft)
		}
		if e2e := ms(r.LastChunkUs - r.SendUs); e2e < 65 || e2e > 110 {
			t.Errorf("request %d: E2E %.1f ms, the server takes 30 + 7 × 5", i, e2e)
		}
		if len(r.Chunks) != 8 || r.Chunks[0] != r.FirstChunkUs || r.Chunks[7] != r.LastChunkUs {
			t.Errorf("request %d: chunks %v", i, r.Chunks)
		}
		if r.Generated != 8 || r.ServerInputTokens != 5 || r.FinishReason != "length" {
			t.Errorf("request %d: generated %d, server input %d, finish %q", i, r.Generated, r.ServerInputTokens, r.FinishReason)
		}
	}
	s := res.Summarize()
	if s.OK != 6 || s.ITL.Mean < 4.5 || s.ITL.Mean > 9 || s.TTFT.Mean < 30 || s.TTFT.Mean > 50 || s.OutputTokens != 48 {
		t.Errorf("summary %+v", s)
	}
	got := v.Received()
	if len(got) != 6 {
		t.Fatalf("the server got %d requests", len(got))
	}
	g := got[0]
	if g.Path != "/v1/completions" || g.Body["model"] != "m" || g.Body["prompt"] != "one two three four" || g.Body["stream"] != true ||
		g.Body["max_tokens"] != 8.0 || g.Body["min_tokens"] != 8.0 || g.Body["ignore_eos"] != true || g.Body["stream_options"].(map[string]any)["include_usage"] != true {
		t.Errorf("body %v at %s", g.Body, g.Path)
	}
	if g.Header.Get("Authorization") != "Bearer k" || g.Header.Get("x-llm-d-inference-objective") != "critical" ||
		g.Header.Get("x-gateway-inference-fairness-id") != "t1" || g.Header.Get("x-request-id") != res.Records[0].XRequestID {
		t.Errorf("headers %v", g.Header)
	}
}

// With at most 2 in flight and responses of ~40 ms, the server never
// serves more than 2, and requests all due at once go out in pairs: each
// later pair waits longer (send − arrival grows), and its send time is
// when it went out.
func TestRunConcurrencyCap(t *testing.T) {
	v := testkit.NewVLLM(t, "m", 40*time.Millisecond, time.Millisecond)
	c := &Client{BaseURL: v.URL, Model: "m"}
	var reqs []Request
	for i := range 6 {
		reqs = append(reqs, Request{ID: i, Prompt: "a b", InputTokens: 2, OutputTokens: 2})
	}
	res := c.Run(context.Background(), List(reqs), Options{Concurrency: 2})
	if v.MaxInFlight() != 2 {
		t.Errorf("the server served %d at once, want 2", v.MaxInFlight())
	}
	var waits [6]float64
	for i, r := range res.Records {
		if r.Status != StatusOK {
			t.Fatalf("%+v", r)
		}
		waits[i] = ms(r.SendUs - r.ArrivalUs)
	}
	if waits[0] > 10 || waits[1] > 10 || waits[2] < 35 || waits[3] < 35 || waits[4] < 2*35 || waits[5] < 2*35 {
		t.Errorf("waits %v ms, want ~0, 0, 40, 40, 80, 80", waits)
	}
	if s := res.Summarize(); s.Wait.P99 < 70 {
		t.Errorf("wait %+v", s.Wait)
	}
}

// Failures are rows: an HTTP 500 is an error with the server's message,
// a response slower than the timeout a timeout, a stream that ends
// without [DONE] an error; none is dropped, and the warm-up request is
// sent but not recorded.
func TestRunRecordsFailures(t *testing.T) {
	v := testkit.NewVLLM(t, "m", 5*time.Millisecond, time.Millisecond)
	c := &Client{BaseURL: v.URL, Model: "m"}
	reqs := []Request{
		{ID: 0, Prompt: "warm", OutputTokens: 2},
		{ID: 1, Prompt: "x !500", OutputTokens: 2},
		{ID: 2, Prompt: "x !stall", OutputTokens: 2},
		{ID: 3, Prompt: "x !break", OutputTokens: 4},
		{ID: 4, Prompt: "x y", OutputTokens: 3},
	}
	res := c.Run(context.Background(), List(reqs), Options{WarmUp: 1, Timeout: 150 * time.Millisecond})
	if len(v.Received()) != 5 || res.WarmedUp != 1 || len(res.Records) != 4 || res.Records[0].ID != 1 {
		t.Fatalf("%d sent, %d warm-up, records %+v", len(v.Received()), res.WarmedUp, res.Records)
	}
	want := []struct{ status, msg string }{
		{StatusError, `HTTP 500: {"error":{"message":"engine dead"}}`},
		{StatusTimeout, "no complete response within 150ms"},
		{StatusError, "the stream ended after 1 chunks without [DONE]"},
		{StatusOK, ""},
	}
	for i, w := range want {
		if r := res.Records[i]; r.Status != w.status || r.Error != w.msg {
			t.Errorf("request %d: %s %q, want %s %q", r.ID, r.Status, r.Error, w.status, w.msg)
		}
	}
	if r := res.Records[2]; r.Generated != 1 || r.FirstChunkUs == 0 {
		t.Errorf("the broken stream's chunk is lost: %+v", r)
	}
	s := res.Summarize()
	if s.Requests != 4 || s.OK != 1 || s.Errors != 2 || s.Timeouts != 1 || s.WarmUp != 1 {
		t.Errorf("summary %+v", s)
	}
	if itl := res.ITL(); len(itl) != 3 || itl[0].RequestID != 4 {
		t.Errorf("ITL rows %+v, want the completed request's 3 chunks only", itl)
	}
}

// Cancelling a run stops it: what was due later is never sent, the
// request in flight is cancelled and recorded as an error, and what
// completed is kept; the trace written from it loads in LoadTrace and
// replays at the send times.
func TestRunCancelKeepsWhatWasDone(t *testing.T) {
	v := testkit.NewVLLM(t, "m", 5*time.Millisecond, time.Millisecond)
	c := &Client{BaseURL: v.URL, Model: "m"}
	reqs := []Request{
		{ID: 0, Prompt: "a b c", InputTokens: 3, OutputTokens: 2, Tenant: "t", Class: "standard"},
		{ID: 1, Due: 10 * time.Millisecond, Prompt: "a b", InputTokens: 2, OutputTokens: 2},
		{ID: 2, Due: 20 * time.Millisecond, Prompt: "x !stall", InputTokens: 2, OutputTokens: 2},
		{ID: 3, Due: time.Hour, Prompt: "late", InputTokens: 1, OutputTokens: 2},
	}
	ctx, cancel := context.WithCancel(context.Background())
	feed := &watch{Feed: List(reqs), onDone: func(id int) {
		if id == 1 {
			time.AfterFunc(60*time.Millisecond, cancel) // while request 2 stalls
		}
	}}
	begin := time.Now()
	res := c.Run(ctx, feed, Options{})
	if el := time.Since(begin); el > 5*time.Second {
		t.Fatalf("the run took %v after its cancellation", el)
	}
	if !res.Stopped || len(res.Records) != 3 || len(v.Received()) != 3 {
		t.Fatalf("stopped %v, %d records, %d sent", res.Stopped, len(res.Records), len(v.Received()))
	}
	if r := res.Records[2]; r.Status != StatusError || r.Error != errCancelled || r.SendUs == 0 {
		t.Errorf("the cancelled request: %+v", r)
	}
	dir := t.TempDir()
	header, data, itl := filepath.Join(dir, "trace.yaml"), filepath.Join(dir, "trace.csv"), filepath.Join(dir, "trace.itl.csv")
	if err := res.WriteTrace(header, data, itl, workload.RealTraceHeader{ServerType: "vllm", Model: "m"}); err != nil {
		t.Fatal(err)
	}
	src, err := workload.LoadTrace(header, "", 16)
	if err != nil {
		t.Fatal(err)
	}
	if src.Len() != 3 {
		t.Fatalf("%d rows replayed", src.Len())
	}
	var first simcore.Request
	first.Reset()
	src.Pop(&first)
	if first.Arrival != 0 || first.InputLen != 4 || first.SLO != simcore.SLOStandard {
		t.Errorf("first replayed request %+v, want it at 0 with the server's 4 tokens", first)
	}
	b, _ := os.ReadFile(itl)
	if lines := strings.Count(string(b), "\n"); lines != 1+2+2 {
		t.Errorf("ITL file:\n%s", b)
	}
}

// watch is a feed that reports each request's end.
type watch struct {
	Feed
	onDone func(id int)
}

func (w *watch) Done(r Request, at time.Duration, ok bool) {
	w.Feed.Done(r, at, ok)
	w.onDone(r.ID)
}

// followUps is a closed-loop feed: each request's end makes the next
// one due think later (a session's rounds).
type followUps struct {
	next, left int
	due        time.Duration
	known      bool
	ends       []time.Duration
}

func (f *followUps) Peek() (time.Duration, bool) { return f.due, f.known }

func (f *followUps) Pop() (Request, bool) {
	if !f.known {
		return Request{}, false
	}
	f.known = false
	f.next++
	return Request{ID: f.next - 1, Due: f.due, Prompt: "a", OutputTokens: 2}, true
}

func (f *followUps) Done(_ Request, at time.Duration, _ bool) {
	f.ends = append(f.ends, at)
	if f.left > 0 {
		f.left--
		f.due, f.known = at+20*time.Millisecond, true
	}
}

// A closed-loop feed learns of its next request from a request's end;
// the run waits for it and sends it when it is due.
func TestRunClosedLoop(t *testing.T) {
	v := testkit.NewVLLM(t, "m", 10*time.Millisecond, time.Millisecond)
	c := &Client{BaseURL: v.URL, Model: "m"}
	f := &followUps{left: 2, known: true}
	res := c.Run(context.Background(), f, Options{})
	if len(res.Records) != 3 {
		t.Fatalf("%d records", len(res.Records))
	}
	for i := 1; i < 3; i++ {
		due := res.Records[i].ArrivalUs - res.Start.UnixMicro()
		if want := f.ends[i-1].Microseconds() + 20_000; due < want-1 || due > want+1 { // ns truncated to µs
			t.Errorf("round %d due at %d µs, want its predecessor's end + 20 ms = %d", i, due, want)
		}
		if gap := ms(res.Records[i].SendUs - res.Records[i-1].LastChunkUs); gap < 20 {
			t.Errorf("round %d went out %.1f ms after the previous one ended", i, gap)
		}
	}
}

// A chat request sends the prompt as the user's message; the role-only
// first event is not a chunk.
func TestChatAPI(t *testing.T) {
	v := testkit.NewVLLM(t, "m", 5*time.Millisecond, time.Millisecond)
	c := &Client{BaseURL: v.URL + "/", Model: "m", API: "chat"}
	r := c.Send(context.Background(), Request{Prompt: "hello there", OutputTokens: 3}, time.Now(), time.Second)
	if r.Status != StatusOK || len(r.Chunks) != 3 || r.ServerInputTokens != 13 || r.Generated != 3 {
		t.Fatalf("%+v", r)
	}
	g := v.Received()[0]
	if msgs, _ := g.Body["messages"].([]any); g.Path != "/v1/chat/completions" || len(msgs) != 1 || g.Body["prompt"] != nil {
		t.Errorf("%s %v", g.Path, g.Body)
	}
}
