package workload

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"optimize/simcore"
	"optimize/simcore/errtext"
)

// csvFormat describes a CSV trace format by its columns: three it needs
// (time, prompt and output tokens) and two it reads when present.
type csvFormat struct {
	name                string
	time, input, output string
	session, class      string
	// parseTime turns the time column into µs on the format's clock.
	parseTime func(s string) (int64, error)
	// columns checks the header row and maps names to indices; nil
	// accepts any further columns.
	columns func(file string, names []string) (map[string]int, error)
}

// csvFormats is every CSV format, in the order detection tries them.
var csvFormats = []csvFormat{
	{name: FormatAzure, time: "TIMESTAMP", input: "ContextTokens", output: "GeneratedTokens", parseTime: parseDateTime},
	{name: FormatBurstGPT, time: "Timestamp", input: "Request tokens", output: "Response tokens", session: "Session ID", parseTime: parseSeconds},
	{name: FormatTraceV2, time: "arrival_time_us", input: "input_tokens", output: "output_tokens", session: "session_id", class: "slo_class",
		parseTime: parseMicros, columns: traceV2Columns},
}

func (f *csvFormat) matches(names []string) bool {
	return contains(names, f.time) && contains(names, f.input) && contains(names, f.output)
}

func csvFormatHeaders() []string {
	out := make([]string, len(csvFormats))
	for i, f := range csvFormats {
		out[i] = strings.Join([]string{f.time, f.input, f.output}, ",")
	}
	return out
}

func findCSVFormat(name string) *csvFormat {
	for i := range csvFormats {
		if csvFormats[i].name == name {
			return &csvFormats[i]
		}
	}
	return nil
}

// dateTimeLayouts are the time stamps of Azure's traces: 2023's carry no
// zone (UTC is assumed), 2024's an offset.
var dateTimeLayouts = []string{"2006-01-02 15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", time.RFC3339Nano}

func parseDateTime(s string) (int64, error) {
	for _, layout := range dateTimeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UnixMicro(), nil
		}
	}
	return 0, fmt.Errorf("%q is not a date-time like 2023-11-16 18:15:46.6805900", s)
}

// parseSeconds reads seconds (an integer or a decimal) as µs, rounded.
func parseSeconds(s string) (int64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || v*1e6 >= float64(never) || math.IsNaN(v) {
		return 0, fmt.Errorf("%q is not a time in seconds >= 0", s)
	}
	return int64(math.Round(v * 1e6)), nil
}

func parseMicros(s string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 || v == int64(never) {
		return 0, fmt.Errorf("%q is not an integer time in µs >= 0", s)
	}
	return v, nil
}

// csvRows reads a CSV format's rows.
type csvRows struct {
	file   string
	format *csvFormat
	reader *csv.Reader
	col    map[string]int
	record []string
}

func newRowReader(name string, br *bufio.Reader, format string) (rowReader, error) {
	if format == FormatMooncake {
		return newMooncakeRows(name, br), nil
	}
	f := findCSVFormat(format)
	r := &csvRows{file: name, format: f, reader: csv.NewReader(br)}
	r.reader.ReuseRecord = true
	names, err := r.reader.Read()
	if err == io.EOF {
		return nil, errtext.New(name, "", "empty file (expected a header row)")
	}
	if err != nil {
		return nil, r.csvError(err)
	}
	names = append([]string(nil), names...)
	for i, n := range names {
		names[i] = strings.TrimSpace(strings.TrimPrefix(n, "\ufeff"))
	}
	if f.columns != nil {
		if r.col, err = f.columns(name, names); err != nil {
			return nil, err
		}
		return r, nil
	}
	r.col = map[string]int{}
	for i, n := range names {
		if _, dup := r.col[n]; !dup {
			r.col[n] = i
		}
	}
	for _, need := range []string{f.time, f.input, f.output} {
		if _, ok := r.col[need]; !ok {
			return nil, errtext.New(name, "line 1", "missing column %q (a %s trace needs %s, %s, %s)", need, f.name, f.time, f.input, f.output)
		}
	}
	return r, nil
}

func (r *csvRows) timeColumn() string { return r.format.time }

func (r *csvRows) csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return errtext.New(r.file, fmt.Sprintf("line %d, column %d", pe.Line, pe.Column), "%v", pe.Err)
	}
	return errtext.New(r.file, "", "%v", err)
}

func (r *csvRows) field(name string) string {
	i, ok := r.col[name]
	if !ok || name == "" {
		return ""
	}
	return strings.TrimSpace(r.record[i])
}

func (r *csvRows) errAt(name, format string, args ...any) error {
	line, _ := r.reader.FieldPos(r.col[name])
	return errtext.New(r.file, fmt.Sprintf("line %d, column %s", line, name), format, args...)
}

func (r *csvRows) tokens(name string) (int, error) {
	s := r.field(name)
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		// Some exports write counts as decimals ("12.0").
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != math.Trunc(f) {
			return 0, r.errAt(name, "%q is not a token count", s)
		}
		v = int64(f)
	}
	if v < 0 || v > maxTokenCount {
		return 0, r.errAt(name, "%d is out of range [0, %d]", v, maxTokenCount)
	}
	return int(v), nil
}

func (r *csvRows) next() (rawRow, error) {
	rec, err := r.reader.Read()
	if err != nil {
		if err == io.EOF {
			return rawRow{}, io.EOF
		}
		return rawRow{}, r.csvError(err)
	}
	r.record = rec
	var row rawRow
	row.Line, _ = r.reader.FieldPos(0)
	f := r.format
	if row.time, err = f.parseTime(r.field(f.time)); err != nil {
		return row, r.errAt(f.time, "%v", err)
	}
	if row.Input, err = r.tokens(f.input); err != nil {
		return row, err
	}
	if row.Output, err = r.tokens(f.output); err != nil {
		return row, err
	}
	row.Session = r.field(f.session)
	if row.Class = r.field(f.class); row.Class != "" {
		if _, err := simcore.ParseSLOClass(row.Class); err != nil {
			return row, r.errAt(f.class, "unknown value %q (allowed: %s, or empty)", row.Class, simcore.SLOClassNames)
		}
	}
	return row, nil
}

// mooncakeRows reads Mooncake's JSON lines. Fields other than the four it
// uses are accepted and ignored (later releases add some).
type mooncakeRows struct {
	file    string
	scanner *bufio.Scanner
	line    int
}

// mooncakeRow is one JSON line; pointers tell a missing field from zero.
type mooncakeRow struct {
	Timestamp *json.Number `json:"timestamp"`
	Input     *int64       `json:"input_length"`
	Output    *int64       `json:"output_length"`
	HashIDs   []uint64     `json:"hash_ids"`
}

// maxJSONLine bounds one Mooncake line: 16 MB holds a million hash ids.
const maxJSONLine = 16 << 20

func newMooncakeRows(name string, br *bufio.Reader) *mooncakeRows {
	s := bufio.NewScanner(br)
	s.Buffer(make([]byte, 0, 64<<10), maxJSONLine)
	return &mooncakeRows{file: name, scanner: s}
}

func (r *mooncakeRows) timeColumn() string { return "timestamp" }

func (r *mooncakeRows) errAt(column, format string, args ...any) error {
	return errtext.New(r.file, fmt.Sprintf("line %d, column %s", r.line, column), format, args...)
}

func (r *mooncakeRows) next() (rawRow, error) {
	var line []byte
	for len(line) == 0 {
		if !r.scanner.Scan() {
			if err := r.scanner.Err(); err != nil {
				return rawRow{}, errtext.New(r.file, fmt.Sprintf("line %d", r.line+1), "%v", err)
			}
			return rawRow{}, io.EOF
		}
		r.line++
		line = bytes.TrimSpace(r.scanner.Bytes())
	}
	var m mooncakeRow
	if err := json.Unmarshal(line, &m); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			return rawRow{}, r.errAt(strconv.FormatInt(syn.Offset, 10), "%v", err)
		case errors.As(err, &typ):
			return rawRow{}, r.errAt(typ.Field, "%s is not a %s", typ.Value, typ.Type)
		}
		return rawRow{}, errtext.New(r.file, fmt.Sprintf("line %d", r.line), "%v", err)
	}
	row := rawRow{TraceRecord: TraceRecord{Line: r.line}}
	for _, f := range []struct {
		name    string
		missing bool
	}{{"timestamp", m.Timestamp == nil}, {"input_length", m.Input == nil}, {"output_length", m.Output == nil}} {
		if f.missing {
			return row, r.errAt(f.name, "missing (a Mooncake row needs timestamp, input_length, output_length, and hash_ids for prefix reuse)")
		}
	}
	ms, err := m.Timestamp.Float64()
	if err != nil || ms < 0 || ms*1e3 >= float64(never) {
		return row, r.errAt("timestamp", "%s is not a time in ms >= 0", m.Timestamp)
	}
	row.time = int64(math.Round(ms * 1e3))
	for _, c := range []struct {
		name string
		v    int64
		dst  *int
	}{{"input_length", *m.Input, &row.Input}, {"output_length", *m.Output, &row.Output}} {
		if c.v < 0 || c.v > maxTokenCount {
			return row, r.errAt(c.name, "%d is out of range [0, %d]", c.v, maxTokenCount)
		}
		*c.dst = int(c.v)
	}
	if blocks := (row.Input + MooncakeBlockTokens - 1) / MooncakeBlockTokens; len(m.HashIDs) > blocks {
		return row, r.errAt("hash_ids", "%d ids for %d input tokens (at most one per %d tokens: %d)", len(m.HashIDs), row.Input, MooncakeBlockTokens, blocks)
	}
	if len(m.HashIDs) > 0 {
		row.HashIDs = m.HashIDs
	}
	return row, nil
}
