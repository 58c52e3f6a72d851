package cli

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"optimize/internal/testkit"
)

// A trace recorded from a real server (TraceV2 mode real, here `blis
// observe` of Qwen3-14B on an H100 at 2 req/s, vLLM 0.23) replays as
// BLIS's replay does: every request at its send_time_us, relative to the
// first send, with the prompt the server counted (server_input_tokens);
// the gzipped data beside the header is read as it is. The simulated TTFT
// mean then misses the real one by what the trained-physics world is known
// to miss at this load (−42 %, issue 39's table): between −50 % and −35 %.
func TestRealTraceReplaysAtSendTimes(t *testing.T) {
	dir := filepath.Join(testkit.SharedData(t, "sim2real/A"), "sweep_rate_agg_2rps")
	f, err := os.Open(filepath.Join(dir, "trace.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	recorded, err := csv.NewReader(gz).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, c := range recorded[0] {
		col[c] = i
	}
	atoi := func(s string) int64 { v, _ := strconv.ParseInt(s, 10, 64); return v }
	var sends, served []int64
	var realTTFT float64
	ok := 0
	for _, r := range recorded[1:] {
		sends = append(sends, atoi(r[col["send_time_us"]]))
		served = append(served, atoi(r[col["server_input_tokens"]]))
		if r[col["status"]] == "ok" {
			realTTFT += float64(atoi(r[col["first_chunk_time_us"]]) - atoi(r[col["send_time_us"]]))
			ok++
		}
	}
	realTTFT /= float64(ok) * 1000

	out := filepath.Join(t.TempDir(), "requests.csv")
	code, stdout, errs := run(t, "simulate", "--trace", filepath.Join(dir, "trace.yaml"), "--model", "qwen/qwen3-14b", "--hardware", "H100", "--tp", "1",
		"--requests-out", out, "--output", "json")
	if code != 0 {
		t.Fatal(errs)
	}
	var sum struct {
		Completed float64                `json:"completed"`
		TTFT      struct{ Mean float64 } `json:"ttft_ms"`
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows)-1 != len(sends) || sum.Completed != float64(len(sends)) {
		t.Fatalf("%d rows, %v completed, for %d recorded requests", len(rows)-1, sum.Completed, len(sends))
	}
	var arrivals, inputs []int64
	for _, r := range rows[1:] {
		arrivals = append(arrivals, atoi(r[4]))
		inputs = append(inputs, atoi(r[8]))
	}
	if first, last := slices.Min(sends), slices.Max(sends); slices.Max(arrivals) != last-first || slices.Min(arrivals) != 0 {
		t.Errorf("replayed arrivals span [%d, %d] µs, want the sends' [0, %d]", slices.Min(arrivals), slices.Max(arrivals), last-first)
	}
	slices.Sort(inputs)
	slices.Sort(served)
	if !slices.Equal(inputs, served) {
		t.Errorf("replayed prompts are not the server's counts (first %v against %v)", inputs[:5], served[:5])
	}
	if e := sum.TTFT.Mean/realTTFT - 1; !(e > -0.50 && e < -0.35) {
		t.Errorf("TTFT mean %.1f ms against the real %.1f ms (%+.0f %%), want the trained-physics world's known −42 %%", sum.TTFT.Mean, realTTFT, 100*e)
	}
}
