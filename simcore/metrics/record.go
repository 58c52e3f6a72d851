package metrics

import "optimize/simcore"

// RequestRecord is one completed request, as a per-request results file
// holds it (BLIS's --results-path; simulate --requests-out). Times are µs
// on the run's clock: Arrival when it reached the cluster, Scheduled its
// last admission into a batch (a preempted request is admitted again),
// FirstToken when its first output token was produced, Finish when its
// last token reached the client (E2E after Arrival, the latency model's
// post-decode overhead included).
type RequestRecord struct {
	ID           int64  `json:"id"`
	Class        string `json:"class"`
	Instance     int32  `json:"instance"`
	Arrival      int64  `json:"arrival_us"`
	Scheduled    int64  `json:"scheduled_us"`
	FirstToken   int64  `json:"first_token_us"`
	Finish       int64  `json:"finish_us"`
	InputTokens  int32  `json:"input_tokens"`
	OutputTokens int32  `json:"output_tokens"`
	Preemptions  int32  `json:"preemptions"`
}

// OnCompleted has the collector hand every completed request's record to
// sink as it completes, in completion order: a caller streams them out
// rather than keeping a million in memory. nil stops it.
func (c *Collector) OnCompleted(sink func(*RequestRecord)) { c.sink = sink }

// record is r's record, r having just completed.
func (c *Collector) record(r *simcore.Request) *RequestRecord {
	rec := &c.rec
	*rec = RequestRecord{ID: r.ID, Class: r.SLO.Label(), Instance: r.Instance, Arrival: r.Arrival,
		Scheduled: r.Arrival + c.sched.get(int(r.ID)), FirstToken: r.Arrival + r.FirstToken, Finish: r.Arrival + c.E2E(r),
		InputTokens: r.InputLen, OutputTokens: r.OutputLen, Preemptions: r.Preemptions}
	return rec
}
