package workload

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const mooncakeJSONL = `{"timestamp": 0, "input_length": 1000, "output_length": 10, "hash_ids": [0, 1]}
{"timestamp": 2.5, "input_length": 600, "output_length": 0, "hash_ids": [0, 2]}

{"timestamp": 1000, "input_length": 20, "output_length": 5, "hash_ids": []}
`

const azureCSV = `TIMESTAMP,ContextTokens,GeneratedTokens
2023-11-16 18:15:46.6805900,374,44
2023-11-16 18:15:50.9951690,396,109
2023-11-16 18:15:50.9951690,20,0
`

func readAll(t *testing.T, tr *TraceReader) []TraceRecord {
	t.Helper()
	var out []TraceRecord
	for {
		r, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
}

func writeFile(t *testing.T, name, data string, compress bool) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	b := []byte(data)
	if compress {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(b)
		zw.Close()
		b = buf.Bytes()
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTraceReaderFormats(t *testing.T) {
	burst, err := os.ReadFile("testdata/burstgpt.csv")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, data, format string
		want               []TraceRecord
	}{
		{"m.jsonl", mooncakeJSONL, FormatMooncake, []TraceRecord{
			{Line: 1, Arrival: 0, Input: 1000, Output: 10, HashIDs: []uint64{0, 1}},
			{Line: 2, Arrival: 2500, Input: 600, Output: 0, HashIDs: []uint64{0, 2}},
			{Line: 4, Arrival: 1_000_000, Input: 20, Output: 5},
		}},
		{"a.csv", azureCSV, FormatAzure, []TraceRecord{
			{Line: 2, Arrival: 0, Input: 374, Output: 44},
			{Line: 3, Arrival: 4_314_579, Input: 396, Output: 109},
			{Line: 4, Arrival: 4_314_579, Input: 20, Output: 0},
		}},
		{"b.csv", string(burst), FormatBurstGPT, []TraceRecord{
			{Line: 2, Arrival: 0, Input: 472, Output: 18, Session: "s1"},
			{Line: 3, Arrival: 40_000_000, Input: 1087, Output: 0},
			{Line: 4, Arrival: 113_000_000, Input: 417, Output: 217, Session: "s1"},
			{Line: 5, Arrival: 113_500_000, Input: 1360, Output: 183, Session: "s2"},
		}},
		{"t.csv", "arrival_time_us,input_tokens,output_tokens,slo_class,session_id\n100,5,6,critical,x\n300,7,8,,\n", FormatTraceV2, []TraceRecord{
			{Line: 2, Arrival: 0, Input: 5, Output: 6, Class: "critical", Session: "x"},
			{Line: 3, Arrival: 200, Input: 7, Output: 8},
		}},
	}
	for _, c := range cases {
		for _, gz := range []bool{false, true} {
			name := c.name
			if gz {
				name += ".gz"
			}
			tr, err := OpenTrace(writeFile(t, name, c.data, gz), "")
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if tr.Format() != c.format {
				t.Errorf("%s: format %q, want %q", name, tr.Format(), c.format)
			}
			got := readAll(t, tr)
			if err := tr.Close(); err != nil {
				t.Error(err)
			}
			if !slices.EqualFunc(got, c.want, func(a, b TraceRecord) bool {
				return a.Line == b.Line && a.Arrival == b.Arrival && a.Input == b.Input && a.Output == b.Output &&
					slices.Equal(a.HashIDs, b.HashIDs) && a.Session == b.Session && a.Class == b.Class
			}) {
				t.Errorf("%s:\n got %+v\nwant %+v", name, got, c.want)
			}
		}
	}
}

func TestTraceReaderTraceV2Header(t *testing.T) {
	tr, err := OpenTrace(writeTrace(t, traceHeaderYAML, traceCSV), "")
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if tr.Format() != FormatTraceV2 || !strings.HasSuffix(tr.Name(), "trace.csv") {
		t.Fatalf("format %q name %q", tr.Format(), tr.Name())
	}
	// The rows are in file order (500 µs after 1000 µs is out of order).
	_, err = tr.Next()
	if err != nil {
		t.Fatal(err)
	}
	_, err = tr.Next()
	if err == nil || !strings.Contains(err.Error(), "line 3, column arrival_time_us: earlier than the row before it by 500 µs") {
		t.Fatalf("err = %v", err)
	}
}

func TestTraceReaderErrors(t *testing.T) {
	cases := []struct{ data, format, want string }{
		{"{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1}\n{\"timestamp\": 1, \"input_length\": \"x\", \"output_length\": 1}\n", "",
			"line 2, column input_length: string is not a int64"},
		{"{\"timestamp\": 0, \"input_length\": 10}\n", "", "line 1, column output_length: missing"},
		{"{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [1, 2]}\n", "", "line 1, column hash_ids: 2 ids for 10 input tokens"},
		{"{\"timestamp\": 0, \"input_length\": 10,, }\n", "", "line 1, column 37: invalid character"},
		{azureCSV + "2023-11-16 18:15:51,12,x\n", "", "line 5, column GeneratedTokens: \"x\" is not a token count"},
		{azureCSV + "2023-11-16 18:15:40,12,3\n", "", "line 5, column TIMESTAMP: earlier than the row before it by 10995169 µs"},
		{azureCSV + "yesterday,12,3\n", "", "line 5, column TIMESTAMP: \"yesterday\" is not a date-time"},
		{azureCSV + "2023-11-16 18:15:51,12\n", "", "line 5, column 1: wrong number of fields"},
		{"a,b,c\n1,2,3\n", "", "line 1: cannot tell the trace format"},
		{"TIMESTAMP,GeneratedTokens\n", FormatAzure, `line 1: missing column "ContextTokens"`},
		{azureCSV, "parquet", "format: unknown value \"parquet\" (allowed: mooncake, azure, burstgpt, tracev2)"},
		{"Timestamp,Request tokens,Response tokens\n-3,1,1\n", "", "line 2, column Timestamp: \"-3\" is not a time in seconds >= 0"},
	}
	for _, c := range cases {
		p := writeFile(t, "trace", c.data, false)
		tr, err := OpenTrace(p, c.format)
		if err == nil {
			for err == nil {
				_, err = tr.Next()
			}
			tr.Close()
		}
		if err == io.EOF || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), p+": ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: err = %v, want %q", c.data, err, c.want)
		}
	}
}
