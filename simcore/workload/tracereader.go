package workload

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"optimize/simcore/errtext"
)

// Trace formats a TraceReader reads, by the name a caller forces one with.
const (
	FormatMooncake = "mooncake" // JSON lines: timestamp (ms), input_length, output_length, hash_ids
	FormatAzure    = "azure"    // CSV: TIMESTAMP (date-time), ContextTokens, GeneratedTokens
	FormatBurstGPT = "burstgpt" // CSV: Timestamp (s), Model, Request tokens, Response tokens, Total tokens, Log Type[, Session ID, Elapsed time]
	FormatTraceV2  = "tracev2"  // BLIS TraceV2: a header YAML and its CSV (arrival_time_us, input_tokens, output_tokens, …)
)

// TraceFormats lists the formats, in the order content detection tries them.
var TraceFormats = []string{FormatMooncake, FormatAzure, FormatBurstGPT, FormatTraceV2}

// MooncakeBlockTokens is the number of prompt tokens each Mooncake hash id
// names: id k covers tokens [512k, 512(k+1)) of the prompt, the last block
// possibly partial.
const MooncakeBlockTokens = 512

// TraceRecord is one row of a trace, whatever its format.
type TraceRecord struct {
	Line    int   // line of the row in the (decompressed) file, 1-based
	Arrival int64 // µs since the trace's first row
	Input   int   // prompt tokens
	Output  int   // output tokens (0: the request failed or produced nothing)
	// HashIDs names the prompt's blocks of MooncakeBlockTokens tokens: two
	// requests share their first k×512 tokens exactly when their first k
	// ids agree. Nil when the trace carries no prefix identity.
	HashIDs []uint64
	Session string // session the row belongs to, "" when none
	Class   string // SLO class the trace gives the row, "" when none
}

// TraceReader streams a trace's rows in file order, in memory bounded by
// one row whatever the trace's length. Rows must be in non-decreasing time
// order (all four formats are written so); an earlier row is an error.
type TraceReader struct {
	name    string
	format  string
	closers []io.Closer
	rows    rowReader
	started bool
	first   int64 // raw time of the first row, µs
	prev    int64 // raw time of the previous row, µs
}

// rawRow is a row as a format reads it: time in µs on the format's own
// clock, and the name of the time column for errors.
type rawRow struct {
	TraceRecord
	time int64
}

// rowReader reads one format's rows; it returns io.EOF after the last.
type rowReader interface {
	next() (rawRow, error)
	timeColumn() string
}

// OpenTrace opens a trace file (gzip-compressed files are read
// transparently, whatever their name). format "" detects the format from
// the content; otherwise it is one of TraceFormats. A TraceV2 trace is
// opened by its header YAML (its rows are then read from the CSV beside it
// with the same base name) or by the CSV itself.
func OpenTrace(path, format string) (*TraceReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading trace: %w", err)
	}
	t, err := newTraceReader(path, f, format, true)
	if err != nil {
		f.Close()
		return nil, err
	}
	t.closers = append(t.closers, f)
	return t, nil
}

// NewTraceReader reads a trace from r, named name in errors (r is not
// closed by Close). A TraceV2 header cannot be read this way: give its CSV.
func NewTraceReader(name string, r io.Reader, format string) (*TraceReader, error) {
	return newTraceReader(name, r, format, false)
}

func newTraceReader(name string, r io.Reader, format string, onDisk bool) (*TraceReader, error) {
	if format != "" && !contains(TraceFormats, format) {
		return nil, errtext.New(name, "format", "unknown value %q (allowed: %s)", format, strings.Join(TraceFormats, ", "))
	}
	t := &TraceReader{name: name}
	br, gz, err := decompressed(name, r)
	if err != nil {
		return nil, err
	}
	if gz != nil {
		t.closers = append(t.closers, gz)
	}
	first, err := br.Peek(firstLinePeek(br))
	if err != nil && err != io.EOF {
		return nil, errtext.New(name, "", "%v", err)
	}
	if format == "" {
		if format, err = detectFormat(name, first); err != nil {
			return nil, err
		}
	}
	t.format = format
	if format == FormatTraceV2 && looksLikeTraceHeader(first) {
		if !onDisk {
			return nil, errtext.New(name, "", "a TraceV2 header names its rows by file: open the header by path, or read the CSV")
		}
		if t.rows, err = openTraceV2Rows(t, name, br); err != nil {
			t.Close()
			return nil, err
		}
		return t, nil
	}
	if t.rows, err = newRowReader(name, br, format); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// openTraceV2Rows checks a TraceV2 header read from br and opens the CSV
// beside it (NAME.csv, or NAME.csv.gz when only that exists).
func openTraceV2Rows(t *TraceReader, headerPath string, br *bufio.Reader) (rowReader, error) {
	data, err := io.ReadAll(br)
	if err != nil {
		return nil, errtext.New(headerPath, "", "%v", err)
	}
	if _, err := checkTraceHeader(headerPath, data); err != nil {
		return nil, err
	}
	dataPath := TraceV2DataPath(headerPath)
	f, err := os.Open(dataPath)
	if err != nil {
		return nil, fmt.Errorf("reading trace data: %w", err)
	}
	t.closers = append(t.closers, f)
	dbr, gz, err := decompressed(dataPath, f)
	if err != nil {
		return nil, err
	}
	if gz != nil {
		t.closers = append(t.closers, gz)
	}
	t.name = dataPath
	return newRowReader(dataPath, dbr, FormatTraceV2)
}

// TraceV2DataPath is the CSV a TraceV2 header's rows are read from: the
// file beside it with the same base name, NAME.csv, or NAME.csv.gz when
// only that exists.
func TraceV2DataPath(headerPath string) string {
	header := strings.TrimSuffix(headerPath, ".gz")
	dataPath := strings.TrimSuffix(header, filepath.Ext(header)) + ".csv"
	if _, err := os.Stat(dataPath); err != nil {
		if _, gzErr := os.Stat(dataPath + ".gz"); gzErr == nil {
			dataPath += ".gz"
		}
	}
	return dataPath
}

// decompressed buffers r, through gzip when it starts with gzip's magic
// bytes.
func decompressed(name string, r io.Reader) (*bufio.Reader, io.Closer, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	magic, _ := br.Peek(2)
	if len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
		return br, nil, nil
	}
	gz, err := gzip.NewReader(br)
	if err != nil {
		return nil, nil, errtext.New(name, "", "gzip: %v", err)
	}
	gz.Multistream(true)
	return bufio.NewReaderSize(gz, 64<<10), gz, nil
}

// firstLinePeek is how much of the start detection looks at: the buffered
// bytes, at most the buffer.
func firstLinePeek(br *bufio.Reader) int {
	br.Peek(1) // fill the buffer
	return max(br.Buffered(), 1)
}

// detectFormat names the format of a trace from its first bytes: a JSON
// object is Mooncake, a CSV header row names the others by their columns,
// and a YAML document with trace_version is a TraceV2 header.
func detectFormat(name string, start []byte) (string, error) {
	start = bytes.TrimPrefix(start, []byte("\ufeff"))
	line, _, _ := bytes.Cut(start, []byte("\n"))
	line = bytes.TrimSpace(line)
	if bytes.HasPrefix(line, []byte("{")) {
		return FormatMooncake, nil
	}
	names := splitHeader(string(line))
	for _, f := range csvFormats {
		if f.matches(names) {
			return f.name, nil
		}
	}
	if looksLikeTraceHeader(start) {
		return FormatTraceV2, nil
	}
	return "", errtext.New(name, "line 1", "cannot tell the trace format from the first line %q (%s)", errtext.Clip(string(line), 80), formatHelp())
}

// formatHelp describes each format by the start detection recognises.
func formatHelp() string {
	return "expected a Mooncake JSON object per line, a CSV header with " + strings.Join(csvFormatHeaders(), " or ") +
		", or a TraceV2 header YAML with trace_version; or name the format: " + strings.Join(TraceFormats, ", ")
}

func looksLikeTraceHeader(start []byte) bool {
	for _, line := range bytes.Split(start, []byte("\n")) {
		if bytes.HasPrefix(bytes.TrimSpace(line), []byte("trace_version:")) {
			return true
		}
	}
	return false
}

func splitHeader(line string) []string {
	names := strings.Split(line, ",")
	for i, n := range names {
		names[i] = strings.Trim(strings.TrimSpace(n), `"`)
	}
	return names
}

// Format returns the trace's format, one of TraceFormats.
func (t *TraceReader) Format() string { return t.format }

// Name returns the file the rows come from.
func (t *TraceReader) Name() string { return t.name }

// Next returns the next row; io.EOF after the last. Errors name the file,
// line and column.
func (t *TraceReader) Next() (TraceRecord, error) {
	row, err := t.rows.next()
	if err != nil {
		return TraceRecord{}, err
	}
	if !t.started {
		t.started, t.first, t.prev = true, row.time, row.time
	}
	if row.time < t.prev {
		return TraceRecord{}, errtext.New(t.name, fmt.Sprintf("line %d, column %s", row.Line, t.rows.timeColumn()),
			"earlier than the row before it by %d µs: rows must be in time order", t.prev-row.time)
	}
	t.prev = row.time
	row.Arrival = row.time - t.first
	return row.TraceRecord, nil
}

// Close releases the file (and decompressor) the reader opened.
func (t *TraceReader) Close() error {
	var first error
	for i := len(t.closers) - 1; i >= 0; i-- {
		if err := t.closers[i].Close(); err != nil && first == nil {
			first = err
		}
	}
	t.closers = nil
	return first
}

// Closing makes Close close c as well (the source a NewTraceReader reads).
func (t *TraceReader) Closing(c io.Closer) *TraceReader {
	t.closers = append([]io.Closer{c}, t.closers...)
	return t
}
