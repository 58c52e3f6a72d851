package calibration

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// BLIS calibrate's figures, by hand: percentiles interpolate between
// ranks, the mean error is signed and its percent unsigned, MAPE skips
// zero real values, Pearson r of a line is 1, and the label's bands.
func TestComparisonFigures(t *testing.T) {
	p := pairs{real: []float64{100, 200, 300, 400, 0}, sim: []float64{110, 220, 330, 440, 5}}
	m := p.compare()
	w := m.Workload
	if w.RealMean != 200 || w.SimMean != 221 || w.MeanError != 21 || math.Abs(w.MeanPercentError-0.105) > 1e-12 {
		t.Errorf("means %+v", w)
	}
	// Ranks 0..4 of {0,100,200,300,400}: P90 at rank 3.6 is 360; P50 at 2 is 200.
	if w.RealP90 != 360 || w.RealP50 != 200 || w.SimP50 != 220 {
		t.Errorf("percentiles %+v", w)
	}
	if math.Abs(m.Request.MAPE-0.10) > 1e-12 || m.Request.Bias != "over-predict" {
		t.Errorf("request level %+v, want MAPE 10 %% over the four non-zero", m.Request)
	}
	if r := pearson([]float64{1, 2, 3}, []float64{2, 4, 6}); math.Abs(r-1) > 1e-12 {
		t.Errorf("pearson of a line %v", r)
	}
	for _, c := range []struct {
		mape, r float64
		want    string
	}{{0.05, 0.99, "excellent"}, {0.05, 0.9, "good"}, {0.15, 0.9, "good"}, {0.3, 0.8, "fair"}, {0.3, 0.5, "poor"}, {0.5, 0.99, "poor"}} {
		if got := label(c.mape, c.r); got != c.want {
			t.Errorf("label(%v, %v) = %s, want %s", c.mape, c.r, got, c.want)
		}
	}
	// 1,000 tokens at 8 Mbps: 4,000 bytes = 32,000 bits = 4 ms.
	if got := transferUs(8, 1000); got != 4000 {
		t.Errorf("transfer %v µs, want 4000", got)
	}
}

// Compare pairs by replay position, drops the warm-up by request id,
// counts requests without a real latency or a simulated completion, adds
// the round trip to the simulated side and reports the chunk-gap ITL.
func TestCompareRun(t *testing.T) {
	dir := t.TempDir()
	header := "trace_version: 3\ntime_unit: us\nmode: real\nwarm_up_requests: 1\nnetwork: {measured_rtt_ms: 2}\n"
	data := `request_id,input_tokens,output_tokens,arrival_time_us,send_time_us,first_chunk_time_us,last_chunk_time_us,num_chunks,status
0,100,11,0,1000000,1010000,1110000,11,ok
1,100,11,10,1000010,1010010,1100010,11,ok
2,100,11,20,1000020,0,0,0,error
3,100,11,30,1000030,1020030,1220030,11,ok
4,100,11,40,1000040,1010040,1110040,11,ok
`
	if err := os.WriteFile(filepath.Join(dir, "trace.yaml"), []byte(header), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "trace.csv"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	run, err := Open(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	sim := []SimResult{
		{TTFT: 1, E2E: 1, Output: 11, Done: true},          // warm-up: dropped
		{TTFT: 8000, E2E: 98000, Output: 11, Done: true},   // +2 ms RTT: 10 ms, 100 ms: exact
		{TTFT: 8000, E2E: 98000, Output: 11, Done: true},   // no real latency
		{TTFT: 18000, E2E: 198000, Output: 11, Done: true}, // 20 ms, 200 ms against 20, 220
		{}, // not completed in the simulator
	}
	rep, err := Compare(run, sim, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	tr := rep.Trace
	if tr.NumRequests != 5 || tr.WarmUpExcluded != 1 || tr.UnmatchedReal != 1 || tr.UnmatchedSim != 1 || tr.MatchedPairs != 2 || tr.NetworkRTTUs != 2000 {
		t.Errorf("trace info %+v", tr)
	}
	ttft, e2e, itl := rep.Metrics[TTFT], rep.Metrics[E2E], rep.Metrics[ITL]
	if ttft.Workload.RealMean != 15000 || ttft.Workload.SimMean != 15000 || ttft.Request.MAPE != 0 {
		t.Errorf("TTFT %+v", ttft)
	}
	if e2e.Workload.RealMean != 160000 || e2e.Workload.SimMean != 150000 || math.Abs(e2e.Request.MAPE-20.0/220/2) > 1e-12 || e2e.Request.Bias != "under-predict" {
		t.Errorf("E2E %+v", e2e)
	}
	// Real ITL (last − first) / 10 chunk gaps: 9 ms and 20 ms; simulated
	// (E2E − TTFT) / 10 tokens (no RTT in a difference): 9 and 18 ms.
	if itl.Workload.RealMean != 14500 || itl.Workload.SimMean != 13500 {
		t.Errorf("ITL %+v", itl.Workload)
	}
	if !rep.TTFTTolerance.Within {
		t.Errorf("a TTFT MAPE of 0 is within 15 %%: %+v", rep.TTFTTolerance)
	}
	o := DefaultOptions()
	o.WarmUp = 5
	if _, err := Compare(run, sim, o); err == nil {
		t.Error("no pair left after the warm-up: no error")
	}
}
