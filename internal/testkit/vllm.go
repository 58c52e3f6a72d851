package testkit

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// VLLM is a fake vLLM OpenAI-compatible server for the tests of `optimize
// observe`: it streams a completion as vLLM does, one SSE event per
// token (finish_reason "length" on the last), then, when the request's
// stream_options.include_usage is set, an event with empty choices and
// the usage (prompt_tokens: the prompt's words plus one, vLLM's BOS
// token; plus 10 for a chat's template), then "data: [DONE]". The first
// token comes TTFT after the request, the others ITL apart. A word of the
// prompt picks a failure: "!500" answers HTTP 500, "!stall" never
// answers (until the client gives up), "!break" ends the stream after its
// first token without [DONE]. Completion requests after the first
// StallAfter (0 = none) never answer either.
type VLLM struct {
	URL        string
	Model      string
	TTFT, ITL  time.Duration
	StallAfter int

	mu          sync.Mutex
	received    []VLLMRequest
	inFlight    int
	maxInFlight int
	served      int
}

// VLLMRequest is a request the fake server received.
type VLLMRequest struct {
	Path    string
	Header  http.Header
	Body    map[string]any
	Prompt  string
	Arrived time.Time
}

// NewVLLM starts a fake server serving model, closed when the test ends.
func NewVLLM(t testing.TB, model string, ttft, itl time.Duration) *VLLM {
	v := &VLLM{Model: model, TTFT: ttft, ITL: itl}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, `{"object":"list","data":[{"id":%q,"object":"model","owned_by":"vllm"}]}`, v.Model)
	})
	mux.HandleFunc("POST /v1/completions", v.complete)
	mux.HandleFunc("POST /v1/chat/completions", v.complete)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	v.URL = srv.URL
	return v
}

// Received returns the requests received so far, in arrival order.
func (v *VLLM) Received() []VLLMRequest {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]VLLMRequest(nil), v.received...)
}

// Served is the number of completions it sent whole ([DONE] included).
func (v *VLLM) Served() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.served
}

// MaxInFlight is the most completion requests it served at once.
func (v *VLLM) MaxInFlight() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.maxInFlight
}

func (v *VLLM) complete(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	prompt, _ := body["prompt"].(string)
	overhead := 1
	if msgs, ok := body["messages"].([]any); ok && len(msgs) > 0 {
		m, _ := msgs[0].(map[string]any)
		prompt, _ = m["content"].(string)
		overhead += 10
	}
	v.mu.Lock()
	v.received = append(v.received, VLLMRequest{Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Prompt: prompt, Arrived: arrived})
	v.inFlight++
	v.maxInFlight = max(v.maxInFlight, v.inFlight)
	stall := v.StallAfter > 0 && len(v.received) > v.StallAfter
	v.mu.Unlock()
	// The request leaves the count before its last event goes out: the
	// client frees its slot on reading it, and may send the next request
	// before this handler returns.
	left := false
	leave := func() {
		v.mu.Lock()
		if !left {
			v.inFlight--
			left = true
		}
		v.mu.Unlock()
	}
	defer leave()
	if model, _ := body["model"].(string); model != v.Model {
		http.Error(w, fmt.Sprintf(`{"error":{"message":"The model %s does not exist."}}`, model), http.StatusNotFound)
		return
	}
	words := strings.Fields(prompt)
	has := func(word string) bool { return strings.Contains(" "+prompt+" ", " "+word+" ") }
	switch {
	case has("!500"):
		http.Error(w, `{"error":{"message":"engine dead"}}`, http.StatusInternalServerError)
		return
	case has("!stall") || stall:
		<-r.Context().Done()
		return
	}
	n := 16
	if mt, ok := body["max_tokens"].(float64); ok {
		n = int(mt)
	}
	chat := r.URL.Path == "/v1/chat/completions"
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	flush := func() { w.(http.Flusher).Flush() }
	flush()
	send := func(event string) bool {
		if _, err := fmt.Fprintf(w, "data: %s\n\n", event); err != nil {
			return false
		}
		flush()
		return true
	}
	wait := func(d time.Duration) bool {
		select {
		case <-time.After(d):
			return true
		case <-r.Context().Done():
			return false
		}
	}
	if !wait(v.TTFT) {
		return
	}
	for i := range n {
		if i > 0 && !wait(v.ITL) {
			return
		}
		finish := "null"
		if i == n-1 {
			finish = `"length"`
		}
		choice := fmt.Sprintf(`{"index":0,"text":" tok%d","logprobs":null,"finish_reason":%s}`, i, finish)
		if chat {
			choice = fmt.Sprintf(`{"index":0,"delta":{"content":" tok%d"},"finish_reason":%s}`, i, finish)
			if i == 0 && !send(`{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`) {
				return
			}
		}
		if !send(fmt.Sprintf(`{"id":"cmpl-1","object":"text_completion","model":%q,"choices":[%s],"usage":null}`, v.Model, choice)) {
			return
		}
		if has("!break") {
			return
		}
	}
	if opts, _ := body["stream_options"].(map[string]any); opts["include_usage"] == true {
		p := len(words) + overhead
		send(fmt.Sprintf(`{"id":"cmpl-1","object":"text_completion","model":%q,"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`, v.Model, p, n, p+n))
	}
	leave()
	if send("[DONE]") {
		v.mu.Lock()
		v.served++
		v.mu.Unlock()
	}
}
