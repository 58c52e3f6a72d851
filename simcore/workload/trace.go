package workload

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"optimize/simcore"
	"optimize/simcore/errtext"
	"optimize/simcore/kv"
)

// traceSeed seeds the synthetic token ids of a trace's prefix groups
// (BLIS's default --seed); the rows' own tokens are never drawn (see Pop).
// Only equality of prefixes matters, not the ids.
const traceSeed = 42

// traceHeader is the TraceV2 header YAML, read and written
// (WriteRealTraceHeader). Sections the simulator does not use are
// accepted whole (yaml.Node) so traces from newer BLIS load too; keys
// without a value are not written.
type traceHeader struct {
	Version              int       `yaml:"trace_version"`
	TimeUnit             string    `yaml:"time_unit"`
	CreatedAt            string    `yaml:"created_at,omitempty"`
	Mode                 string    `yaml:"mode"`
	WarmUpRequests       int       `yaml:"warm_up_requests"`
	WorkloadSeed         *int64    `yaml:"workload_seed,omitempty"`
	WorkloadSpec         string    `yaml:"workload_spec,omitempty"`
	SessionContextGrowth string    `yaml:"session_context_growth,omitempty"`
	Server               yaml.Node `yaml:"server,omitempty"`
	Network              yaml.Node `yaml:"network,omitempty"`
	GoodputSLOTargets    yaml.Node `yaml:"goodput_slo_targets,omitempty"`
	KVOffload            yaml.Node `yaml:"kv_offload,omitempty"`
	ObservedKVMetrics    yaml.Node `yaml:"observed_kv_metrics,omitempty"`
}

// Trace CSV columns. The simulator reads the first two groups; the third
// holds every other column BLIS writes (tracewrite.go declares them all),
// accepted and ignored.
var (
	traceRequired = []string{"arrival_time_us", "input_tokens", "output_tokens"}
	traceUsed     = []string{"tenant_id", "slo_class", "session_id", "round_index", "prefix_group", "prefix_length"}
	traceIgnored  = without(append(append([]string{}, traceV2Order...), traceV2Optional...), append(append([]string{}, traceRequired...), traceUsed...))
)

// without returns the names of all that are not in drop, in order.
func without(all, drop []string) []string {
	var out []string
	for _, name := range all {
		if !contains(drop, name) {
			out = append(out, name)
		}
	}
	return out
}

// traceRow is one replayed request, compactly.
type traceRow struct {
	arrival simcore.Tick
	session int32
	input   int32
	output  int32
	group   int32 // prefix group, -1 = none
	client  int32 // tenant index in order of first appearance
	round   int32
	slo     simcore.SLOClass
}

// TraceSource replays a BLIS TraceV2 trace in arrival order; it implements
// simcore.Source. Rows keep their file order among equal arrival times.
type TraceSource struct {
	rows      []traceRow
	tenants   []string // tenant_id by client index
	next      int
	prefixes  []prefixGroup
	blockSize int
	info      RunInfo
	observed  []Observed // a recording of a real server's: per row, what it did
	cap       inFlightCap
}

// LoadTrace reads a TraceV2 header and its CSV (dataPath "" = the file
// beside the header with the same base name and a .csv extension, or
// .csv.gz when only that exists; gzip is read as such). A trace of mode
// real (a recording of a real server, `blis observe`) replays as BLIS's
// replay does: each request at its send_time_us (relative to the first
// send) with server_input_tokens, the prompt the server counted, where
// given and the row has no prefix_group; other traces at arrival_time_us
// with input_tokens.
func LoadTrace(headerPath, dataPath string, blockSize int) (*TraceSource, error) {
	if blockSize <= 0 {
		return nil, fmt.Errorf("workload: block size must be > 0, got %d", blockSize)
	}
	data, err := os.ReadFile(headerPath)
	if err != nil {
		return nil, fmt.Errorf("reading trace header: %w", err)
	}
	h, err := checkTraceHeader(headerPath, data)
	if err != nil {
		return nil, err
	}
	if dataPath == "" {
		dataPath = TraceV2DataPath(headerPath)
	}
	info, err := h.info(headerPath)
	if err != nil {
		return nil, err
	}
	var t *TraceSource
	if err := readData(dataPath, "reading trace data", func(r *bufio.Reader) (err error) {
		t, err = parseTrace(dataPath, r, blockSize, info.Real)
		return err
	}); err != nil {
		return nil, err
	}
	t.info = info
	return t, nil
}

func checkTraceHeader(name string, data []byte) (traceHeader, error) {
	var h traceHeader
	if err := decodeStrict(name, data, &h); err != nil {
		return h, err
	}
	if h.Version != 2 && h.Version != 3 {
		return h, errtext.New(name, "trace_version", "unknown value %d (allowed: 2, 3)", h.Version)
	}
	if h.TimeUnit != "microseconds" && h.TimeUnit != "us" {
		return h, errtext.New(name, "time_unit", "unknown value %q (allowed: microseconds, us)", h.TimeUnit)
	}
	switch h.Mode {
	case "", "real", "generated", "replayed":
	default:
		return h, errtext.New(name, "mode", "unknown value %q (allowed: real, generated, replayed)", h.Mode)
	}
	if h.WarmUpRequests < 0 {
		return h, errtext.New(name, "warm_up_requests", "must be >= 0, got %d", h.WarmUpRequests)
	}
	if h.SessionContextGrowth != "" {
		return h, errtext.New(name, "session_context_growth", "accumulating session replay is not supported (allowed: omit it)")
	}
	return h, nil
}

// traceParser turns CSV rows into traceRows, interning the string columns.
type traceParser struct {
	file     string
	reader   *csv.Reader
	col      map[string]int
	tenants  map[string]int32
	sessions map[string]int32
	groups   map[string]int32
	lengths  []int // per group: prefix length, -1 = not given yet
	lineOf   []int // per group: line that gave the length
	// zeroInputLine is, per group, the first line with input_tokens 0; such
	// a row is valid only if the group's prefix is not empty.
	zeroInputLine []int
	hasLen        bool // the trace has a prefix_length column
	record        []string
	// real: a recording of a real server; rows are sent at send_time_us
	// (absolute: made relative to the first send once all are read).
	real bool
}

func parseTrace(file string, r io.Reader, blockSize int, real bool) (*TraceSource, error) {
	p := &traceParser{
		file: file, reader: csv.NewReader(r), col: map[string]int{}, real: real,
		tenants: map[string]int32{}, sessions: map[string]int32{}, groups: map[string]int32{},
	}
	p.reader.ReuseRecord = true
	if err := p.header(); err != nil {
		return nil, err
	}
	var rows []traceRow
	var observed []Observed
	err := p.rows(func() error {
		row, err := p.row()
		if err != nil {
			return err
		}
		if real {
			o, err := p.observe(len(rows))
			if err != nil {
				return err
			}
			observed = append(observed, o)
		}
		rows = append(rows, row)
		return nil
	})
	if err != nil {
		return nil, err
	}
	t := &TraceSource{blockSize: blockSize, tenants: make([]string, len(p.tenants))}
	for name, i := range p.tenants {
		t.tenants[i] = name
	}
	t.order(rows, observed)
	src := newLFG(traceSeed)
	for g, length := range p.lengths {
		switch {
		case !p.hasLen:
			length = defaultPrefixLength
		case length < 0:
			length = 0 // the trace has prefix_length but gives none for this group
		}
		if length == 0 && p.zeroInputLine[g] > 0 {
			return nil, errtext.New(file, fmt.Sprintf("line %d, column input_tokens", p.zeroInputLine[g]),
				"must be >= 1: the row's prefix_group has no prefix_length")
		}
		t.prefixes = append(t.prefixes, newPrefixGroup(length, blockSize, src.tokenID))
	}
	return t, nil
}

func (p *traceParser) csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return errtext.New(p.file, fmt.Sprintf("line %d", pe.Line), "%v", pe.Err)
	}
	return errtext.New(p.file, "", "%v", err)
}

func (p *traceParser) header() error {
	names, err := p.reader.Read()
	if err == io.EOF {
		return errtext.New(p.file, "", "empty file (expected a header row)")
	}
	if err != nil {
		return p.csvError(err)
	}
	if p.col, err = traceV2Columns(p.file, names); err != nil {
		return err
	}
	_, p.hasLen = p.col["prefix_length"]
	return nil
}

// traceV2Columns checks a TraceV2 CSV header row and maps each column
// name to its index.
func traceV2Columns(file string, names []string) (map[string]int, error) {
	col := map[string]int{}
	allowed := strings.Join(append(append(append([]string{}, traceRequired...), traceUsed...), traceIgnored...), ", ")
	for i, name := range names {
		name = strings.TrimSpace(strings.TrimPrefix(name, "\ufeff"))
		if _, dup := col[name]; dup {
			return nil, errtext.New(file, "line 1", "column %q appears twice", name)
		}
		if !contains(traceRequired, name) && !contains(traceUsed, name) && !contains(traceIgnored, name) {
			return nil, errtext.New(file, "line 1", "unknown column %q (allowed: %s)", name, allowed)
		}
		col[name] = i
	}
	for _, name := range traceRequired {
		if _, ok := col[name]; !ok {
			return nil, errtext.New(file, "line 1", "missing column %q (required: %s)", name, strings.Join(traceRequired, ", "))
		}
	}
	return col, nil
}

// field returns column name of the current record ("" when absent).
func (p *traceParser) field(name string) (string, bool) {
	i, ok := p.col[name]
	if !ok {
		return "", false
	}
	return strings.TrimSpace(p.record[i]), true
}

func (p *traceParser) errAt(name, format string, args ...any) error {
	line, _ := p.reader.FieldPos(0)
	return errtext.New(p.file, fmt.Sprintf("line %d, column %s", line, name), format, args...)
}

// integer parses an integer column within [lo, hi]; absent columns give 0.
func (p *traceParser) integer(name string, lo, hi int64) (int64, error) {
	s, ok := p.field(name)
	if !ok {
		return 0, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, p.errAt(name, "%q is not an integer", s)
	}
	if v < lo || v > hi {
		return 0, p.errAt(name, "%d is out of range [%d, %d]", v, lo, hi)
	}
	return v, nil
}

func (p *traceParser) row() (traceRow, error) {
	row := traceRow{group: -1, session: -1}
	var err error
	if row.arrival, err = p.integer("arrival_time_us", 0, never-1); err != nil {
		return row, err
	}
	input, err := p.integer("input_tokens", 0, maxTokenCount)
	if err != nil {
		return row, err
	}
	if p.real {
		if row.arrival, err = p.sent(); err != nil {
			return row, err
		}
		// A row of a prefix group keeps input_tokens, the tokens after
		// the group's prefix (the server's count includes the prefix,
		// which the replay adds itself), as in BLIS's replay.
		group, _ := p.field("prefix_group")
		if v, _ := p.field("server_input_tokens"); v != "" && group == "" {
			served, err := p.integer("server_input_tokens", 0, maxTokenCount)
			if err != nil {
				return row, err
			}
			if served > 0 {
				input = served
			}
		}
	}
	output, err := p.integer("output_tokens", 0, maxTokenCount)
	if err != nil {
		return row, err
	}
	round, err := p.integer("round_index", 0, math.MaxInt32)
	if err != nil {
		return row, err
	}
	prefixLen, err := p.integer("prefix_length", 0, maxTokenCount)
	if err != nil {
		return row, err
	}
	row.input, row.output, row.round = int32(input), int32(output), int32(round)
	if s, ok := p.field("slo_class"); ok {
		if row.slo, err = simcore.ParseSLOClass(s); err != nil {
			return row, p.errAt("slo_class", "unknown value %q (allowed: %s, or empty)", s, simcore.SLOClassNames)
		}
	}
	tenant, _ := p.field("tenant_id")
	row.client = intern(p.tenants, tenant)
	if s, _ := p.field("session_id"); s != "" {
		row.session = intern(p.sessions, s)
	}
	if g, _ := p.field("prefix_group"); g != "" {
		if row.group, err = p.prefixGroup(g, int(prefixLen)); err != nil {
			return row, err
		}
	}
	if row.input == 0 {
		if row.group < 0 {
			return row, p.errAt("input_tokens", "must be >= 1 for a request without prefix_group")
		}
		if p.zeroInputLine[row.group] == 0 {
			p.zeroInputLine[row.group], _ = p.reader.FieldPos(0)
		}
	}
	return row, nil
}

// sent is a real trace's send_time_us, which it must give (µs since the
// epoch: the replay makes it relative to the first send).
func (p *traceParser) sent() (simcore.Tick, error) {
	if _, ok := p.col["send_time_us"]; !ok {
		return 0, errtext.New(p.file, "send_time_us", "a trace of mode real replays at its send times: the column is required")
	}
	if s, _ := p.field("send_time_us"); s == "" {
		return 0, p.errAt("send_time_us", "required in a trace of mode real")
	}
	return p.integer("send_time_us", 0, never-1)
}

// prefixGroup interns a group and records its length: the first positive
// prefix_length given for it (conflicting later values are an error).
func (p *traceParser) prefixGroup(name string, length int) (int32, error) {
	g, seen := p.groups[name]
	if !seen {
		g = int32(len(p.lengths))
		p.groups[name] = g
		p.lengths = append(p.lengths, -1)
		p.lineOf = append(p.lineOf, 0)
		p.zeroInputLine = append(p.zeroInputLine, 0)
	}
	if length > 0 {
		line, _ := p.reader.FieldPos(0)
		switch known := p.lengths[g]; {
		case known < 0:
			p.lengths[g], p.lineOf[g] = length, line
		case known != length:
			return 0, p.errAt("prefix_length", "%d conflicts with %d given for prefix_group %q on line %d", length, known, name, p.lineOf[g])
		}
	}
	return g, nil
}

// intern maps a string to a dense index in order of first appearance.
func intern[T int32 | int64](m map[string]T, s string) T {
	if i, ok := m[s]; ok {
		return i
	}
	i := T(len(m))
	m[s] = i
	return i
}

// Peek returns the next row's arrival time (none while a client cap
// holds it back).
func (t *TraceSource) Peek() (simcore.Tick, bool) {
	if t.next >= len(t.rows) || t.cap.blocked() {
		return 0, false
	}
	return t.cap.sendAt(t.rows[t.next].arrival), true
}

// Pop fills r with the next row's request; its input is the group prefix
// followed by input_tokens tokens of the row's own, which no other row
// shares: its Content names them by a stream of their own (row index + 1)
// instead of drawing them.
func (t *TraceSource) Pop(r *simcore.Request) bool {
	if t.next >= len(t.rows) {
		return false
	}
	row := &t.rows[t.next]
	var prefix []uint64
	prefixLen := 0
	if row.group >= 0 {
		pg := &t.prefixes[row.group]
		prefix, prefixLen = pg.blocks, int(pg.length)
	}
	r.Content = kv.NewContent(prefix, uint64(t.next)+1, prefixLen+int(row.input), int(row.output), t.blockSize, len(prefix))
	r.Content.Exclusive = true // a stream of its own
	r.ID = int64(t.next)
	r.Arrival = t.cap.sendAt(row.arrival)
	t.cap.sent()
	r.InputLen = int32(prefixLen) + row.input
	r.OutputLen = row.output
	r.SLO = row.slo
	r.Client = row.client
	r.Session = row.session
	r.Round = row.round
	t.next++
	return true
}

// Done frees the request's slot under a client cap; without one, rows
// replay open loop at their recorded times.
func (t *TraceSource) Done(_ *simcore.Request, at simcore.Tick, _ bool) { t.cap.left(at) }

// Tenant returns the tenant_id of the rows whose requests have Client
// client ("" for none).
func (t *TraceSource) Tenant(client int32) string {
	if client < 0 || int(client) >= len(t.tenants) {
		return ""
	}
	return t.tenants[client]
}

// Len returns the number of requests in the trace.
func (t *TraceSource) Len() int { return len(t.rows) }

// MaxRequests is the number of rows.
func (t *TraceSource) MaxRequests() int { return len(t.rows) }
