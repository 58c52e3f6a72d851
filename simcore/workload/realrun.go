package workload

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"optimize/simcore"
	"optimize/simcore/errtext"
)

// Observed is what a real server did with one request of a recorded run,
// as the client saw it: what calibration compares the simulator's request
// with. Times are µs.
type Observed struct {
	// RequestID is the run's own id of the request (TraceV2 request_id,
	// inference-perf index; the row's position when the file has none):
	// warm-up is the requests with an id below the header's
	// warm_up_requests.
	RequestID int64
	// Due is when the client meant to send it (arrival_time_us), Sent when
	// it did (send_time_us; later than Due when the client's in-flight cap
	// was reached), both relative to the run's first send.
	Due, Sent int64
	// TTFT and E2E are first and last chunk less the send (inference-perf
	// records them as such); -1 when the run has none for the request (a
	// failed request, or a first chunk before the send: a clock fault).
	TTFT, E2E int64
	// Chunks is the number of streamed chunks (0 when not recorded).
	Chunks int32
	// OK says the run recorded the request as served (status ok, no
	// error).
	OK bool
}

// RunInfo is what a recorded run's header says about the run: the
// warm-up, the network and the server.
type RunInfo struct {
	// Real says the trace records a real server (TraceV2 mode real, or an
	// inference-perf run): it replays at its send times.
	Real bool
	// WarmUp is warm_up_requests: requests with a lower id warmed the
	// server up and are not compared.
	WarmUp int
	// RTTUs is network.measured_rtt_ms in µs: the round trip calibration
	// adds to every simulated latency (0 = not measured).
	RTTUs int64
	// Server is the header's server section.
	Server ServerInfo
}

// ServerInfo is a TraceV2 header's server section: what BLIS's
// TraceServerConfig records, read and written. Zero values are "not
// recorded".
type ServerInfo struct {
	Type                 string  `yaml:"type,omitempty"`
	Model                string  `yaml:"model,omitempty"`
	TensorParallel       int     `yaml:"tensor_parallel,omitempty"`
	MaxNumSeqs           int     `yaml:"max_num_seqs,omitempty"`
	BlockSize            int     `yaml:"block_size,omitempty"`
	GPUMemoryUtilization float64 `yaml:"gpu_memory_utilization,omitempty"`
	MaxModelLen          int64   `yaml:"max_model_len,omitempty"`
}

// traceNetwork is a TraceV2 header's network section, as BLIS declares
// it.
type traceNetwork struct {
	MeasuredRTTMs float64 `yaml:"measured_rtt_ms,omitempty"`
}

// info decodes the header's server and network sections (read whole,
// so an unknown field of a newer BLIS is no error; a known one of the
// wrong type is).
func (h traceHeader) info(name string) (RunInfo, error) {
	ri := RunInfo{Real: h.Mode == "real", WarmUp: h.WarmUpRequests}
	if h.Server.Kind != 0 {
		if err := h.Server.Decode(&ri.Server); err != nil {
			return ri, errtext.New(name, "server", "%s", strings.TrimPrefix(err.Error(), "yaml: "))
		}
	}
	if h.Network.Kind != 0 {
		var n traceNetwork
		if err := h.Network.Decode(&n); err != nil {
			return ri, errtext.New(name, "network", "%s", strings.TrimPrefix(err.Error(), "yaml: "))
		}
		if n.MeasuredRTTMs < 0 {
			return ri, errtext.New(name, "network.measured_rtt_ms", "must be >= 0, got %v", n.MeasuredRTTMs)
		}
		ri.RTTUs = int64(n.MeasuredRTTMs * 1000)
	}
	return ri, nil
}

// Info is the header's account of the run (zero for a trace not of a
// real server, but for WarmUp).
func (t *TraceSource) Info() RunInfo { return t.info }

// Observed lists, for a recorded run, what the real server did with each
// request, in replay order: element i is request i of the replay (its
// simcore.Request.ID). Nil for a trace that records no real server.
func (t *TraceSource) Observed() []Observed { return t.observed }

// observe reads the current row's real-side columns (a TraceV2 of mode
// real): ids, due and send times, chunk times and status.
func (p *traceParser) observe(row int) (Observed, error) {
	o := Observed{RequestID: int64(row), TTFT: -1, E2E: -1}
	var err error
	if _, ok := p.col["request_id"]; ok {
		if o.RequestID, err = p.integer("request_id", 0, 1<<53); err != nil {
			return o, err
		}
	}
	if o.Due, err = p.integer("arrival_time_us", 0, int64(never-1)); err != nil {
		return o, err
	}
	if o.Sent, err = p.integer("send_time_us", 0, int64(never-1)); err != nil {
		return o, err
	}
	first, err := p.integer("first_chunk_time_us", 0, int64(never-1))
	if err != nil {
		return o, err
	}
	last, err := p.integer("last_chunk_time_us", 0, int64(never-1))
	if err != nil {
		return o, err
	}
	chunks, err := p.integer("num_chunks", 0, maxTokenCount)
	if err != nil {
		return o, err
	}
	o.Chunks = int32(chunks)
	status, _ := p.field("status")
	o.OK = status == "" || status == "ok"
	// BLIS's calibrate: real TTFT = first chunk − send, E2E = last chunk −
	// send; a negative one (no chunk, or clock skew) is not compared.
	if first > 0 && last > 0 && first >= o.Sent && last >= o.Sent {
		o.TTFT, o.E2E = first-o.Sent, last-o.Sent
	}
	return o, nil
}

// order sorts rows into replay order (arrival, file order among equals)
// and the observations with them, making a real run's times relative to
// its first send.
func (t *TraceSource) order(rows []traceRow, observed []Observed) {
	if len(observed) > 0 {
		first := rows[0].arrival
		for _, r := range rows {
			first = min(first, r.arrival)
		}
		firstDue := observed[0].Due
		for _, o := range observed {
			firstDue = min(firstDue, o.Due)
		}
		for i := range rows {
			rows[i].arrival -= first
			observed[i].Sent -= int64(first)
			// arrival_time_us counts from the client's start, the send
			// from the epoch: the first request is due when it was sent.
			observed[i].Due -= firstDue
		}
	}
	perm := make([]int, len(rows))
	for i := range perm {
		perm[i] = i
	}
	// Replay in arrival order; the stable sort keeps file order among equal
	// times (BLIS injects rows in file order into a time-ordered queue).
	sort.SliceStable(perm, func(i, j int) bool { return rows[perm[i]].arrival < rows[perm[j]].arrival })
	t.rows = make([]traceRow, len(rows))
	for i, k := range perm {
		t.rows[i] = rows[k]
	}
	if len(observed) > 0 {
		t.observed = make([]Observed, len(rows))
		for i, k := range perm {
			t.observed[i] = observed[k]
		}
	}
}

// InferencePerfColumns are the columns of an inference-perf run's
// per-request CSV, as the shared sim2real runs record them: the request's
// index, when it was sent (µs from the run's start), its prompt and output
// tokens, whether it failed, and its TTFT and E2E in µs.
var InferencePerfColumns = []string{"index", "arrival_time_us", "input_tokens", "output_tokens", "has_error", "ttft_us", "e2e_us"}

// LoadInferencePerf reads an inference-perf run's per-request CSV (gzip
// read as such) as a recorded run: each request replays when it was sent,
// with its prompt and output tokens, and its TTFT and E2E are what the
// server did.
func LoadInferencePerf(path string, blockSize int) (*TraceSource, error) {
	if blockSize <= 0 {
		return nil, fmt.Errorf("workload: block size must be > 0, got %d", blockSize)
	}
	var t *TraceSource
	err := readData(path, "reading run", func(r *bufio.Reader) (err error) {
		t, err = parseInferencePerf(path, r, blockSize)
		return err
	})
	return t, err
}

// readData hands parse the file at path, gzip read as such; what names
// the file in an error opening it.
func readData(path, what string, parse func(*bufio.Reader) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer f.Close()
	r, gz, err := decompressed(path, f)
	if err != nil {
		return err
	}
	if gz != nil {
		defer gz.Close()
	}
	return parse(r)
}

// IsInferencePerf reports whether a CSV header row is an inference-perf
// run's.
func IsInferencePerf(header []string) bool {
	return strings.Join(header, ",") == strings.Join(InferencePerfColumns, ",")
}

func parseInferencePerf(file string, r *bufio.Reader, blockSize int) (*TraceSource, error) {
	p := &traceParser{file: file, reader: csv.NewReader(r), col: map[string]int{}, real: true}
	p.reader.ReuseRecord = true
	names, err := p.reader.Read()
	if err == io.EOF {
		return nil, errtext.New(file, "", "empty file (expected a header row)")
	}
	if err != nil {
		return nil, p.csvError(err)
	}
	if !IsInferencePerf(names) {
		return nil, errtext.New(file, "line 1", "not an inference-perf run's columns (want: %s)", strings.Join(InferencePerfColumns, ","))
	}
	for i, n := range names {
		p.col[n] = i
	}
	var rows []traceRow
	var observed []Observed
	err = p.rows(func() error {
		row, o, err := p.inferencePerfRow()
		rows, observed = append(rows, row), append(observed, o)
		return err
	})
	if err != nil {
		return nil, err
	}
	t := &TraceSource{blockSize: blockSize, info: RunInfo{Real: true}}
	t.order(rows, observed)
	return t, nil
}

func (p *traceParser) inferencePerfRow() (traceRow, Observed, error) {
	row := traceRow{group: -1, session: -1}
	var o Observed
	ints := make([]int64, len(InferencePerfColumns))
	for i, name := range InferencePerfColumns {
		v, err := p.integer(name, 0, int64(never-1))
		if err != nil {
			return row, o, err
		}
		ints[i] = v
	}
	if ints[2] < 1 || ints[2] > maxTokenCount {
		return row, o, p.errAt("input_tokens", "%d is out of range [1, %d]", ints[2], maxTokenCount)
	}
	if ints[3] > maxTokenCount {
		return row, o, p.errAt("output_tokens", "%d is out of range [0, %d]", ints[3], maxTokenCount)
	}
	if ints[4] > 1 {
		return row, o, p.errAt("has_error", "%d is not 0 or 1", ints[4])
	}
	row.arrival, row.input, row.output = simcore.Tick(ints[1]), int32(ints[2]), int32(ints[3])
	o = Observed{RequestID: ints[0], Due: ints[1], Sent: ints[1], TTFT: -1, E2E: -1, OK: ints[4] == 0}
	if o.OK {
		o.TTFT, o.E2E = ints[5], ints[6]
	}
	return row, o, nil
}

// Rewind starts the replay over from the first request, so that one
// trace read serves many replays (a fit replays a run hundreds of times).
func (t *TraceSource) Rewind() {
	t.next = 0
	t.cap.inFlight, t.cap.freed = 0, 0
}

// rows calls read on every record after the header, p.record set; a
// file without one is an error.
func (p *traceParser) rows(read func() error) error {
	n := 0
	for ; ; n++ {
		rec, err := p.reader.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return p.csvError(err)
		}
		p.record = rec
		if err := read(); err != nil {
			return err
		}
	}
	if n == 0 {
		return errtext.New(p.file, "", "no requests after the header row")
	}
	return nil
}
