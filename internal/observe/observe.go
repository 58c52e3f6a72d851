// Package observe measures a real OpenAI-compatible inference server
// (vLLM, or llm-d's gateway in front of vLLM) as BLIS's `blis observe`
// does, for `optimize observe`: it sends a list of requests at their
// arrival times, at most Options.Concurrency at once, streams every
// response and records, per request, when it was due, when it went out,
// when its first and last chunks came back, what the server counted and
// how it ended (ok, error or timeout). WriteTrace writes the records as a
// TraceV2 trace of mode real, which BLIS's replay and `optimize simulate
// --trace` replay at the send times, and the chunk times as BLIS's ITL CSV.
//
// What is sent (BLIS's request): POST /v1/completions with the prompt (or
// /v1/chat/completions with it as the one user message), stream true,
// stream_options.include_usage true (vLLM then reports the prompt and
// completion token counts in a last chunk), max_tokens and min_tokens
// both the requested output length (vLLM then generates exactly that many
// tokens), an x-request-id header, and llm-d's headers naming the SLO
// class (x-llm-d-inference-objective) and the tenant
// (x-gateway-inference-fairness-id) when the request has them. It also
// sends ignore_eos true, which vLLM accepts and llm-d's vLLM emulator
// (llm-d-inference-sim) needs to generate exactly max_tokens: it reads
// no min_tokens and otherwise draws a shorter length. BLIS also
// sends the class as vLLM's priority field; that is left out here,
// because vLLM refuses a non-zero priority unless it runs with priority
// scheduling.
//
// Times are µs since the Unix epoch, all five on one clock (the client's):
// arrival_time_us is when a request was due (the run's start plus its
// arrival offset), send_time_us when it went out (later than due when it
// waited for a concurrency slot), first_chunk_time_us and
// last_chunk_time_us when the first and the last chunk carrying generated
// text came back. BLIS's observe writes arrival_time_us relative to its
// run's start instead; neither replay reads it for a trace of mode real.
// A chunk here is an SSE event carrying generated text: the usage-only
// event and a chat stream's role-only first event are not chunks (BLIS
// counts every event, so its num_chunks is larger by one or two and its
// chunk times end with a near-zero gap).
//
// This is a measuring tool: it runs on the wall clock (Client.Now), unlike
// the simulator, whose results depend on its seeds only.
package observe

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// APIs are the request formats Client.API takes.
var APIs = []string{"completions", "chat"}

// Status values of a record, BLIS's vocabulary.
const (
	StatusOK      = "ok"
	StatusError   = "error"
	StatusTimeout = "timeout"
)

// Client sends requests to one server.
type Client struct {
	BaseURL string // e.g. http://127.0.0.1:8000 (the /v1/... paths are added)
	Model   string // the served model name requests name
	APIKey  string // sent as a bearer token when not ""
	API     string // "completions" (the default) or "chat"
	// HTTP sends the requests (nil = a client of its own). Its Timeout, if
	// any, also bounds each request; Options.Timeout is the per-request
	// bound a run sets.
	HTTP *http.Client
	// Now is the clock every time is read from (nil = time.Now). A run
	// waits on real timers for the difference between a request's due
	// time and Now, so Now must advance with real time.
	Now func() time.Time
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return defaultHTTP
}

// defaultHTTP keeps enough idle connections for a run's concurrency, so
// that requests do not open a new connection each (which would add a
// handshake to their TTFT).
var defaultHTTP = &http.Client{Transport: &http.Transport{
	Proxy:               http.ProxyFromEnvironment,
	MaxIdleConns:        1024,
	MaxIdleConnsPerHost: 1024,
	IdleConnTimeout:     90 * time.Second,
}}

// Request is one request to send.
type Request struct {
	ID           int           // request_id
	Due          time.Duration // arrival: when it is due, after the run's start
	Prompt       string
	InputTokens  int // the prompt length asked for, shared prefix included
	OutputTokens int // tokens to generate (max_tokens = min_tokens); 0 = the server decides
	ClientID     string
	Tenant       string
	Class        string // SLO class ("" = none)
	SessionID    string
	Round        int
	PrefixGroup  string
	PrefixLength int // tokens of the shared prefix at the start of the prompt
}

// Record is what was measured of one request.
type Record struct {
	Request
	XRequestID        string
	ServerInputTokens int // usage.prompt_tokens (0 = not reported)
	Generated         int // usage.completion_tokens, else the chunks received
	ArrivalUs         int64
	SendUs            int64
	FirstChunkUs      int64 // 0 = no chunk came
	LastChunkUs       int64
	Chunks            []int64 // every chunk's time, µs since the epoch
	Status            string  // StatusOK, StatusError or StatusTimeout
	Error             string  // why, when not ok (one line)
	FinishReason      string  // the server's last finish_reason
}

// chatMessage is a chat request's message.
type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// requestBody is the JSON sent, in BLIS's fields.
type requestBody struct {
	Model         string        `json:"model"`
	Prompt        string        `json:"prompt,omitempty"`
	Messages      []chatMessage `json:"messages,omitempty"`
	MaxTokens     int           `json:"max_tokens,omitempty"`
	MinTokens     int           `json:"min_tokens,omitempty"`
	IgnoreEOS     bool          `json:"ignore_eos,omitempty"`
	Stream        bool          `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

func (c *Client) endpoint() string {
	base := strings.TrimRight(c.BaseURL, "/")
	if c.API == "chat" {
		return base + "/v1/chat/completions"
	}
	return base + "/v1/completions"
}

func (c *Client) body(r *Request) ([]byte, error) {
	b := requestBody{Model: c.Model, Stream: true, MaxTokens: r.OutputTokens, MinTokens: r.OutputTokens, IgnoreEOS: r.OutputTokens > 0}
	b.StreamOptions.IncludeUsage = true
	if c.API == "chat" {
		b.Messages = []chatMessage{{Role: "user", Content: r.Prompt}}
	} else {
		b.Prompt = r.Prompt
	}
	return json.Marshal(&b)
}

// newRequestID is a random UUID (version 4) for the x-request-id header,
// which lets a request be found in the gateway's and the server's logs.
func newRequestID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// errCancelled is the error message of a request the run's cancellation
// ended (BLIS's vocabulary has no status for it: it is an error).
const errCancelled = "cancelled: the run was stopped"

// Send sends r, due at arrival, and measures it until its stream ends,
// timeout passes (0 = no limit) or ctx is cancelled. It never fails: a
// failure is the record's status and error.
func (c *Client) Send(ctx context.Context, r Request, arrival time.Time, timeout time.Duration) Record {
	rec := Record{Request: r, XRequestID: newRequestID(), ArrivalUs: arrival.UnixMicro(), Status: StatusOK}
	body, err := c.body(&r)
	if err != nil {
		return rec.fail(StatusError, "encoding the request: "+err.Error())
	}
	reqCtx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		reqCtx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	hr, err := http.NewRequestWithContext(reqCtx, http.MethodPost, c.endpoint(), bytes.NewReader(body))
	if err != nil {
		return rec.fail(StatusError, err.Error())
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "text/event-stream")
	hr.Header.Set("x-request-id", rec.XRequestID)
	if c.APIKey != "" {
		hr.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	if r.Class != "" {
		hr.Header.Set("x-llm-d-inference-objective", r.Class)
	}
	if r.Tenant != "" {
		hr.Header.Set("x-gateway-inference-fairness-id", r.Tenant)
	}
	rec.SendUs = c.now().UnixMicro()
	resp, err := c.http().Do(hr)
	if err != nil {
		return rec.failed(ctx, reqCtx, timeout, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg, readErr := io.ReadAll(io.LimitReader(resp.Body, 512))
		if readErr != nil && reqCtx.Err() != nil {
			return rec.failed(ctx, reqCtx, timeout, readErr)
		}
		return rec.fail(StatusError, fmt.Sprintf("HTTP %d: %s", resp.StatusCode, oneLine(string(msg))))
	}
	if err := c.readStream(resp.Body, &rec); err != nil {
		if reqCtx.Err() != nil {
			return rec.failed(ctx, reqCtx, timeout, err)
		}
		return rec.fail(StatusError, err.Error())
	}
	return rec
}

// fail sets the record's status and error.
func (r Record) fail(status, msg string) Record {
	r.Status, r.Error = status, msg
	return r
}

// failed classifies err, which ended the request: the run's cancellation
// (an error), the request's own timeout, or another failure.
func (r Record) failed(run, req context.Context, timeout time.Duration, err error) Record {
	switch {
	case run.Err() != nil:
		return r.fail(StatusError, errCancelled)
	case errors.Is(req.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return r.fail(StatusTimeout, fmt.Sprintf("no complete response within %v", timeout))
	}
	var te interface{ Timeout() bool }
	if errors.As(err, &te) && te.Timeout() {
		return r.fail(StatusTimeout, oneLine(err.Error()))
	}
	return r.fail(StatusError, oneLine(err.Error()))
}

// oneLine folds s onto one line of at most 200 bytes (error messages go
// into a CSV cell and a terminal line).
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		cut := 200
		for cut > 0 && s[cut]&0xc0 == 0x80 { // not inside a UTF-8 sequence
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
