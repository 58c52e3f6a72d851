package workload

import (
	"slices"
	"strings"
	"testing"

	"optimize/simcore"
)

const realHeaderYAML = `trace_version: 3
time_unit: us
mode: real
warm_up_requests: 1
server: {type: vllm, model: Qwen/Qwen3-14B, tensor_parallel: 1, max_num_seqs: 64}
network: {measured_rtt_ms: 1.5}
`

// Four requests of a real run: due 0, 100, 200, 300 µs after the client
// started; the client's cap of 1 made the last three wait (sent at
// 1,000,050 / 1,000,400 / 1,000,700 µs since the epoch); request 2
// failed; request 3 is in the file before request 2.
const realCSV = `request_id,input_tokens,output_tokens,server_input_tokens,arrival_time_us,send_time_us,first_chunk_time_us,last_chunk_time_us,num_chunks,status
0,100,10,96,1000,1000000,1000030,1000050,10,ok
1,100,10,97,1100,1000050,1000100,1000400,10,ok
3,100,10,99,1300,1000700,1000760,1000900,5,ok
2,100,10,98,1200,1000400,0,0,0,error
`

func TestRealRunObservations(t *testing.T) {
	src, err := LoadTrace(writeTrace(t, realHeaderYAML, realCSV), "", 16)
	if err != nil {
		t.Fatal(err)
	}
	info := src.Info()
	if !info.Real || info.WarmUp != 1 || info.RTTUs != 1500 || info.Server.Model != "Qwen/Qwen3-14B" || info.Server.MaxNumSeqs != 64 {
		t.Errorf("header read as %+v", info)
	}
	obs := src.Observed()
	// Replay order is send order: ids 0, 1, 2, 3; sends relative to the
	// first, dues relative to the first due.
	want := []Observed{
		{RequestID: 0, Due: 0, Sent: 0, TTFT: 30, E2E: 50, Chunks: 10, OK: true},
		{RequestID: 1, Due: 100, Sent: 50, TTFT: 50, E2E: 350, Chunks: 10, OK: true},
		{RequestID: 2, Due: 200, Sent: 400, TTFT: -1, E2E: -1, Chunks: 0, OK: false},
		{RequestID: 3, Due: 300, Sent: 700, TTFT: 60, E2E: 200, Chunks: 5, OK: true},
	}
	if len(obs) != len(want) {
		t.Fatalf("%d observations", len(obs))
	}
	for i := range want {
		if obs[i] != want[i] {
			t.Errorf("request %d observed as %+v, want %+v", i, obs[i], want[i])
		}
	}
	var r simcore.Request
	r.Reset()
	src.Pop(&r)
	if r.Arrival != 0 || r.InputLen != 96 {
		t.Errorf("first request at %d with %d tokens, want 0 and the server's 96", r.Arrival, r.InputLen)
	}
}

// Under a client cap a real run replays at its due times, each request
// sent when due or when a slot frees: with a cap of 1 and every request
// finishing 500 µs after it is sent, the four go out at 0, 500, 1000 and
// 1500 µs; the source announces none while the one slot is taken.
func TestClientCapHoldsRequestsUntilASlotFrees(t *testing.T) {
	src, err := LoadTrace(writeTrace(t, realHeaderYAML, realCSV), "", 16)
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Control(ReplayOptions{MaxConcurrency: 1}); err != nil {
		t.Fatal(err)
	}
	var sent []simcore.Tick
	for range 4 {
		at, ok := src.Peek()
		if !ok {
			t.Fatal("the source announces nothing with a slot free")
		}
		var r simcore.Request
		r.Reset()
		src.Pop(&r)
		if r.Arrival != at {
			t.Fatalf("popped at %d, announced %d", r.Arrival, at)
		}
		sent = append(sent, r.Arrival)
		if _, ok := src.Peek(); ok {
			t.Fatalf("a second request announced while the one slot is taken")
		}
		src.Done(&r, r.Arrival+500, true)
	}
	if want := []simcore.Tick{0, 500, 1000, 1500}; !slices.Equal(sent, want) {
		t.Errorf("sent at %v, want %v", sent, want)
	}
	// Without the cap the same run replays at its send times.
	open, _ := LoadTrace(writeTrace(t, realHeaderYAML, realCSV), "", 16)
	var openSent []simcore.Tick
	for r := pop(open); r != nil; r = pop(open) {
		openSent = append(openSent, r.Arrival)
	}
	if want := []simcore.Tick{0, 50, 400, 700}; !slices.Equal(openSent, want) {
		t.Errorf("open loop sent at %v, want %v", openSent, want)
	}
}

// Replay controls work on a TraceV2 trace: a window keeps its part (made
// to start at 0), a scale stretches it, a target rate sets its rate, and
// the controls with no TraceV2 meaning are refused by name.
func TestTraceV2ReplayControls(t *testing.T) {
	load := func(o ReplayOptions) (*TraceSource, error) {
		src, err := LoadTrace(writeTrace(t, realHeaderYAML, realCSV), "", 16)
		if err != nil {
			t.Fatal(err)
		}
		return src, src.Control(o)
	}
	arrivals := func(src *TraceSource) []simcore.Tick {
		var out []simcore.Tick
		for r := pop(src); r != nil; r = pop(src) {
			out = append(out, r.Arrival)
		}
		return out
	}
	src, err := load(ReplayOptions{Window: TraceWindow{Start: 50, End: 700}})
	if err != nil {
		t.Fatal(err)
	}
	if got := arrivals(src); !slices.Equal(got, []simcore.Tick{0, 350}) || src.Observed()[0].RequestID != 1 {
		t.Errorf("window 50-700 µs replays %v (first id %d), want [0 350] from request 1", got, src.Observed()[0].RequestID)
	}
	src, _ = load(ReplayOptions{TimeScale: 2})
	if got := arrivals(src); !slices.Equal(got, []simcore.Tick{0, 100, 800, 1400}) {
		t.Errorf("scale 2 replays %v", got)
	}
	// 4 requests over 700 µs is 5,714 req/s; at 4 req/s the last comes at 1 s.
	src, _ = load(ReplayOptions{TargetRate: 4})
	if got := arrivals(src); got[3] != 1_000_000 {
		t.Errorf("rate 4 replays %v, want the last at 1 s", got)
	}
	if _, err := load(ReplayOptions{Window: TraceWindow{Start: 800, End: 900}}); err == nil || !strings.Contains(err.Error(), "holds no request") {
		t.Errorf("an empty window: %v", err)
	}
	if _, err := load(ReplayOptions{SLOMix: SLOMix{{Class: simcore.SLOCritical, Share: 1}}}); err == nil || !strings.Contains(err.Error(), "slo-mix") {
		t.Errorf("slo-mix on TraceV2: %v", err)
	}
}

// An inference-perf run reads as a recorded run: replayed at its send
// times, its TTFT and E2E observed, failed requests without them.
func TestInferencePerfRun(t *testing.T) {
	path := writeFile(t, "run.csv", "index,arrival_time_us,input_tokens,output_tokens,has_error,ttft_us,e2e_us\n0,0,576,250,0,105828,7737904\n1,75524,575,250,1,0,0\n", true)
	src, err := LoadInferencePerf(path, 16)
	if err != nil {
		t.Fatal(err)
	}
	obs := src.Observed()
	if len(obs) != 2 || obs[0].TTFT != 105828 || obs[0].E2E != 7737904 || obs[1].TTFT != -1 || obs[1].OK || obs[1].Sent != 75524 {
		t.Errorf("observed %+v", obs)
	}
	if _, err := LoadInferencePerf(writeFile(t, "bad.csv", "index,arrival_time_us,input_tokens,output_tokens,has_error,ttft_us,e2e_us\n0,0,576,250,2,1,1\n", false), 16); err == nil || !strings.Contains(err.Error(), "has_error") {
		t.Errorf("has_error 2: %v", err)
	}
}
