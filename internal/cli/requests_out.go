package cli

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"optimize/simcore/metrics"
)

// requestsOutFormats are the per-request results files simulate writes,
// by the file's extension.
var requestsOutFormats = []string{".csv", ".jsonl"}

// requestsOutColumns are the CSV's columns (the JSONL's fields): the seed
// of the run, then metrics.RequestRecord's.
var requestsOutColumns = []string{"seed", "id", "class", "instance", "arrival_us", "scheduled_us", "first_token_us", "finish_us",
	"input_tokens", "output_tokens", "preemptions"}

// requestsOut writes simulate's per-request results (--requests-out): a
// row per completed request, streamed as each run completes them, so that
// a million requests take no more memory than one.
type requestsOut struct {
	path string
	file *os.File
	buf  *bufio.Writer
	csv  *csv.Writer   // .csv
	json *json.Encoder // .jsonl
	row  []string
	err  error // the first write error; the rest are skipped
}

// checkRequestsOut refuses a file whose extension names no format, before
// anything runs.
func checkRequestsOut(path string) error {
	if slices.Contains(requestsOutFormats, filepath.Ext(path)) {
		return nil
	}
	return fmt.Errorf("--requests-out: %s: unknown format %q (allowed: %s)", path, filepath.Ext(path), strings.Join(requestsOutFormats, ", "))
}

// openRequestsOut creates the file and, for CSV, writes its header.
func openRequestsOut(path string) (*requestsOut, error) {
	if err := checkRequestsOut(path); err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--requests-out: %v", err)
	}
	o := &requestsOut{path: path, file: f, buf: bufio.NewWriterSize(f, 1<<16)}
	if filepath.Ext(path) == ".csv" {
		o.csv = csv.NewWriter(o.buf)
		o.err = o.csv.Write(requestsOutColumns)
	} else {
		o.json = json.NewEncoder(o.buf)
	}
	return o, nil
}

// jsonRecord is one JSONL line: the run's seed and the record.
type jsonRecord struct {
	Seed int64 `json:"seed"`
	*metrics.RequestRecord
}

// sink is the run of seed's record writer (cluster.Engine.OnCompleted).
func (o *requestsOut) sink(seed int64) func(*metrics.RequestRecord) {
	return func(r *metrics.RequestRecord) {
		if o.err != nil {
			return
		}
		if o.json != nil {
			o.err = o.json.Encode(jsonRecord{Seed: seed, RequestRecord: r})
			return
		}
		i := func(v int64) string { return strconv.FormatInt(v, 10) }
		o.row = append(o.row[:0], i(seed), i(r.ID), r.Class, i(int64(r.Instance)), i(r.Arrival), i(r.Scheduled), i(r.FirstToken), i(r.Finish),
			i(int64(r.InputTokens)), i(int64(r.OutputTokens)), i(int64(r.Preemptions)))
		o.err = o.csv.Write(o.row)
	}
}

// Close flushes and closes the file; the first error of any write is its
// error, naming the file.
func (o *requestsOut) Close() error {
	if o.csv != nil {
		o.csv.Flush()
		if o.err == nil {
			o.err = o.csv.Error()
		}
	}
	if err := o.buf.Flush(); o.err == nil {
		o.err = err
	}
	if err := o.file.Close(); o.err == nil {
		o.err = err
	}
	if o.err != nil {
		return fmt.Errorf("--requests-out: %s: %v", o.path, o.err)
	}
	return nil
}
