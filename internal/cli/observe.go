package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"optimize/internal/observe"
	"optimize/simcore"
	"optimize/simcore/workload"
)

// observeAPIKeyEnv holds the bearer token when --api-key is not given. It
// is a variable of this program's own, not OPENAI_API_KEY, so that a key
// for another service is never sent to the server measured.
const observeAPIKeyEnv = "OPTIMIZE_API_KEY"

type observeOptions struct {
	wl          workloadFlags
	server      string
	model       string
	api         string
	apiKey      string
	serverType  string
	rate        float64
	duration    time.Duration
	seed        int64
	concurrency int
	warmUp      int
	timeout     time.Duration
	out         string
	recordITL   bool
	output      string
}

func newObserveCommand(s Streams) *cobra.Command {
	o := &observeOptions{}
	cmd := &cobra.Command{
		Use:   "observe",
		Short: "Measure a real vLLM (or llm-d) server on a workload and record it as a TraceV2 trace",
		Long: `Send a workload's requests to a real OpenAI-compatible server (vLLM, or
llm-d's gateway in front of vLLM) at their arrival times, as BLIS's
"blis observe" does, and write what was measured as a BLIS TraceV2 trace
of mode real: --out trace.yaml (the header) and trace.csv beside it, one
row per request with its arrival, send, first- and last-chunk times (µs
since the epoch), the prompt tokens the server counted, the tokens it
generated and how it ended (ok, error or timeout). "optimize simulate
--trace trace.yaml" and BLIS's replay replay it at the send times.
--record-itl also writes every chunk's time (trace.itl.csv, BLIS's ITL
file).

The workload is a built-in or a spec file (--workload NAME|FILE,
--workload-spec FILE) or a trace (--trace FILE); --num-requests and
--duration bound it, --rate sets a spec's request rate. Prompts are words
the server's tokenizer counts about one token each: two calibration
requests measure the ratio first, so that a prompt has about the tokens
the workload asks for, and requests that share a prefix in the workload
share its text. Each request asks for exactly its output tokens
(max_tokens = min_tokens).

Ctrl-C stops sending, cancels the requests in flight (recorded as
errors) and writes what was measured; a second Ctrl-C kills.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := interruptible()
			defer stop()
			return o.run(ctx, cmd, s)
		},
	}
	fs := cmd.Flags()
	o.wl.bind(fs)
	fs.StringVar(&o.server, "server", "", "base URL of the server, e.g. http://127.0.0.1:8000 (the /v1/... paths are added)")
	fs.StringVar(&o.model, "model", "", "the served model name to request (default: the first the server lists at /v1/models)")
	fs.StringVar(&o.api, "api", "completions", "request format: "+strings.Join(observe.APIs, " (/v1/completions) or ")+" (/v1/chat/completions)")
	fs.StringVar(&o.apiKey, "api-key", "", "bearer token for the server (default: $"+observeAPIKeyEnv+")")
	fs.StringVar(&o.serverType, "server-type", "vllm", "what serves the model, recorded in the trace header (server.type)")
	fs.Float64Var(&o.rate, "rate", 0, "requests (or sessions) per second of a workload spec (default: the spec's aggregate_rate; a trace takes --trace-rate)")
	fs.DurationVar(&o.duration, "duration", 0, "send only the requests due within this time of the start (0 = the workload's own bound)")
	fs.Int64Var(&o.seed, "seed", 0, "seed the requests of a workload spec are drawn with (default: the spec's seed)")
	fs.IntVar(&o.concurrency, "concurrency", 0, "at most N requests in flight; a request due while N are waits for a slot (0 = no cap: each goes out when due)")
	fs.IntVar(&o.warmUp, "warm-up-requests", 0, "send the first N requests but leave them out of the trace (they pay for cold caches)")
	fs.DurationVar(&o.timeout, "timeout", 300*time.Second, "per request, from its send to its last chunk; a request past it is recorded as a timeout")
	fs.StringVar(&o.out, "out", "", "the trace header to write, NAME.yaml; NAME.csv (and NAME.itl.csv) are written beside it")
	fs.BoolVar(&o.recordITL, "record-itl", false, "also write every chunk's time to NAME.itl.csv (BLIS's ITL file: request_id, chunk_index, timestamp_us)")
	fs.StringVar(&o.output, "output", "text", "summary format: text or json")
	return cmd
}

// check validates the flags that need no server.
func (o *observeOptions) check() error {
	u, err := url.Parse(o.server)
	switch {
	case o.server == "":
		return fmt.Errorf("--server: give the server's base URL, e.g. http://127.0.0.1:8000")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("--server: %q is not an http:// or https:// URL (e.g. http://127.0.0.1:8000)", o.server)
	case !contains(observe.APIs, o.api):
		return fmt.Errorf("--api: unknown value %q (allowed: %s)", o.api, strings.Join(observe.APIs, ", "))
	case o.out == "":
		return fmt.Errorf("--out: give the trace header's path, e.g. trace.yaml (trace.csv is written beside it)")
	case !strings.HasSuffix(o.out, ".yaml") && !strings.HasSuffix(o.out, ".yml"):
		return fmt.Errorf("--out: %q must end in .yaml or .yml (the trace's CSV is written beside it as .csv)", o.out)
	case o.rate < 0:
		return fmt.Errorf("--rate: must be > 0 requests per second, got %v", o.rate)
	case o.duration < 0:
		return fmt.Errorf("--duration: must be ≥ 0 (0 = the workload's own bound), got %v", o.duration)
	case o.concurrency < 0:
		return fmt.Errorf("--concurrency: must be ≥ 0 (0 = no cap), got %d", o.concurrency)
	case o.warmUp < 0:
		return fmt.Errorf("--warm-up-requests: must be ≥ 0, got %d", o.warmUp)
	case o.timeout <= 0:
		return fmt.Errorf("--timeout: must be > 0, e.g. 300s, got %v", o.timeout)
	}
	if o.apiKey == "" {
		o.apiKey = os.Getenv(observeAPIKeyEnv)
	}
	return checkOutput(o.output)
}

// paths are the files the run writes.
func (o *observeOptions) paths() (header, data, itl string) {
	base := strings.TrimSuffix(o.out, filepath.Ext(o.out))
	if o.recordITL {
		itl = base + ".itl.csv"
	}
	return o.out, base + ".csv", itl
}

func (o *observeOptions) run(ctx context.Context, cmd *cobra.Command, s Streams) error {
	fs := cmd.Flags()
	if err := o.check(); err != nil {
		return err
	}
	wl, err := o.wl.resolve(fs)
	if err != nil {
		return err
	}
	cfg, err := baseConfig()
	if err != nil {
		return failed(err)
	}
	cfg.Horizon = o.duration.Microseconds()
	if wl.spec != nil {
		spec := *wl.spec // this run's copy
		if o.rate > 0 {
			spec.AggregateRate = o.rate
		}
		if spec.NumRequests == 0 && spec.Horizon == 0 && wl.numRequests == 0 && o.duration == 0 {
			return fmt.Errorf("--num-requests: the workload %s sets neither num_requests nor horizon: give --num-requests or --duration", wl.name)
		}
		wl.spec = &spec
		cfg.Seed = spec.Seed
	} else if changed(fs, "rate") {
		return fmt.Errorf("--rate: applies to a workload spec; a trace's rate is --trace-rate")
	}
	if changed(fs, "seed") {
		cfg.Seed = o.seed
	}
	if cfg.Seed == 0 {
		cfg.Seed = 42 // simulate's default
	}
	src, err := wl.source(cfg)
	if err != nil {
		return err
	}
	if replay, ok := src.(*workload.ReplaySource); ok {
		defer replay.Close()
	}

	client := &observe.Client{BaseURL: o.server, Model: o.model, APIKey: o.apiKey, API: o.api}
	if client.Model == "" {
		models, err := client.Models(ctx)
		var unreachable *url.Error
		switch {
		case errors.As(err, &unreachable):
			return failed(fmt.Errorf("--server: %s does not answer: %v", o.server, err))
		case err != nil || len(models) == 0:
			return failed(fmt.Errorf("--model: not given, and the server does not list its models (%v): give --model", err))
		}
		client.Model = models[0]
	}
	prompts, measured, err := client.Calibrate(ctx, int(cfg.BlockSize), o.timeout)
	if err != nil {
		return failed(fmt.Errorf("--server: %v", err))
	}
	if measured {
		fmt.Fprintf(s.Err, "calibrated: the server counts %.3f tokens a word, and %d more a prompt\n", prompts.TokensPerWord, prompts.Overhead)
	} else {
		fmt.Fprintln(s.Err, "note: the server reports no prompt_tokens: prompts are written at 1 token per word and server_input_tokens are 0")
	}
	var rttMs float64
	if rtt, err := client.RTT(ctx, 5); err == nil {
		rttMs = float64(rtt.Microseconds()) / 1000
	}

	feed := newSourceFeed(src, wl, prompts, wl.numRequests, o.duration)
	fmt.Fprintf(s.Err, "sending %s to %s (model %s, %s)…\n", wl.name, o.server, client.Model, concurrencyLabel(o.concurrency))
	res := client.Run(ctx, feed, observe.Options{Concurrency: o.concurrency, WarmUp: o.warmUp, Timeout: o.timeout})
	if replay, ok := src.(*workload.ReplaySource); ok && replay.Err() != nil {
		fmt.Fprintf(s.Err, "note: the trace ended early: %v\n", replay.Err())
	}

	header, data, itl := o.paths()
	h := workload.RealTraceHeader{CreatedAt: res.Start, WorkloadSpec: wl.name, ServerType: o.serverType, Model: client.Model, MeasuredRTTMs: rttMs}
	if wl.spec != nil {
		h.WorkloadSeed = &cfg.Seed
	}
	if err := res.WriteTrace(header, data, itl, h); err != nil {
		return failed(err)
	}
	sum := res.Summarize()
	if res.Stopped {
		fmt.Fprintf(s.Err, "stopped: %d requests recorded, those in flight cancelled (recorded as errors)\n", sum.Requests)
	}
	if o.output == "json" {
		return writeIndented(s.Out, sum)
	}
	writeObserveText(s.Out, sum, header, data, itl)
	return nil
}

func concurrencyLabel(n int) string {
	if n == 0 {
		return "no concurrency cap"
	}
	return fmt.Sprintf("at most %d in flight", n)
}

// writeObserveText prints the summary and where the trace went.
func writeObserveText(w io.Writer, s observe.Summary, header, data, itl string) {
	fmt.Fprintf(w, "requests %d: %d ok, %d errors, %d timeouts", s.Requests, s.OK, s.Errors, s.Timeouts)
	if s.WarmUp > 0 {
		fmt.Fprintf(w, " (after %d warm-up requests)", s.WarmUp)
	}
	fmt.Fprintf(w, " in %.1f s\n", s.DurationSec)
	fmt.Fprintf(w, "TTFT ms  mean %.1f  p50 %.1f  p99 %.1f\n", s.TTFT.Mean, s.TTFT.P50, s.TTFT.P99)
	fmt.Fprintf(w, "E2E ms   mean %.1f  p50 %.1f  p99 %.1f\n", s.E2E.Mean, s.E2E.P50, s.E2E.P99)
	fmt.Fprintf(w, "ITL ms   mean %.2f  p50 %.2f  p99 %.2f\n", s.ITL.Mean, s.ITL.P50, s.ITL.P99)
	if s.Wait.P99 > 0 {
		fmt.Fprintf(w, "wait ms  mean %.1f  p99 %.1f (due to sent, for a concurrency slot)\n", s.Wait.Mean, s.Wait.P99)
	}
	fmt.Fprintf(w, "output %.0f tokens/s", s.TokensPerSec)
	if s.InputTokens > 0 {
		fmt.Fprintf(w, "; prompts %+.1f %% against the tokens asked for (server's count)", 100*(float64(s.ServerInputTokens)/float64(s.InputTokens)-1))
	}
	fmt.Fprintln(w)
	files := header + ", " + data
	if itl != "" {
		files += ", " + itl
	}
	fmt.Fprintf(w, "trace: %s\n", files)
}

// sourceFeed hands a run a workload's requests, as the simulator would
// be handed them: request_id is their order, arrival their due time, the
// prompt written from their token identity (kv.Content: a shared
// prefix's blocks, then their own stream), tenant and client from the
// spec's client (or the trace's tenant_id), and a multi-turn session's
// next round learns of its predecessor's end through Done, as in the
// simulator. A round's context is the earlier rounds' prompts and the
// server's responses in a real chat; here it is the text its token
// identity gives, which repeats the earlier prompts (so the server's
// prefix cache reuses them) but not the responses.
type sourceFeed struct {
	src     simcore.Source
	spec    *workload.Spec
	trace   *workload.TraceSource
	groups  map[string]int // prefix length by group
	prompts observe.Prompts
	limit   int           // requests at most (0 = all)
	horizon time.Duration // only requests due before it (0 = all)
	popped  int
	sent    map[int]*simcore.Request // by request_id, until Done
	blocks  []uint64
}

func newSourceFeed(src simcore.Source, wl *workloadChoice, prompts observe.Prompts, limit int, horizon time.Duration) *sourceFeed {
	f := &sourceFeed{src: src, spec: wl.spec, prompts: prompts, limit: limit, horizon: horizon, sent: map[int]*simcore.Request{}}
	f.trace, _ = src.(*workload.TraceSource)
	if f.spec != nil {
		f.groups = f.spec.PrefixLengths()
	}
	return f
}

func (f *sourceFeed) Peek() (time.Duration, bool) {
	if f.limit > 0 && f.popped >= f.limit {
		return 0, false
	}
	t, ok := f.src.Peek()
	due := time.Duration(t) * time.Microsecond
	return due, ok && (f.horizon == 0 || due < f.horizon)
}

func (f *sourceFeed) Pop() (observe.Request, bool) {
	if _, ok := f.Peek(); !ok {
		return observe.Request{}, false
	}
	r := new(simcore.Request)
	r.Reset()
	if !f.src.Pop(r) {
		return observe.Request{}, false
	}
	id := f.popped
	f.popped++
	f.sent[id] = r
	f.blocks = r.Content.AppendHashes(f.blocks[:0], int(r.Content.Input))
	out := observe.Request{
		ID:           id,
		Due:          time.Duration(r.Arrival) * time.Microsecond,
		Prompt:       f.prompts.Text(f.blocks, r.Content.UID^uint64(id)<<32, int(r.InputLen)),
		InputTokens:  int(r.InputLen),
		OutputTokens: int(r.OutputLen),
		Class:        r.SLO.String(),
		Round:        int(r.Round),
	}
	if r.Session >= 0 {
		out.SessionID = fmt.Sprintf("session-%d", r.Session)
	}
	switch {
	case f.spec != nil && int(r.Client) < len(f.spec.Clients):
		c := &f.spec.Clients[r.Client]
		out.ClientID, out.Tenant, out.PrefixGroup = c.ID, c.TenantID, c.PrefixGroup
		out.PrefixLength = f.groups[c.PrefixGroup]
	case f.trace != nil:
		out.Tenant = f.trace.Tenant(r.Client)
	}
	return out, true
}

func (f *sourceFeed) Done(r observe.Request, at time.Duration, ok bool) {
	if req := f.sent[r.ID]; req != nil {
		delete(f.sent, r.ID)
		f.src.Done(req, at.Microseconds(), ok)
	}
}
