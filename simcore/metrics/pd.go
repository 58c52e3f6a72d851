package metrics

import (
	"slices"

	"optimize/simcore"
)

// PDSummary is a prefill/decode disaggregated run's own figures, absent
// (every field nil) from other runs. A split request dropped because its
// prompt's KV did not fit its decode instance also counts in
// Summary.Dropped (BLIS's dropped_unservable).
type PDSummary struct {
	// Disaggregated is the requests whose KV transfer completed (split:
	// prefilled on a prefill instance, decoded on a decode one); Local
	// those the decider kept whole on their decode instance.
	Disaggregated *float64 `json:"disaggregated,omitempty" unit:"requests"`
	Local         *float64 `json:"local,omitempty" unit:"requests"`
	// DroppedAtDecodeKV is the split requests dropped at their transfer's
	// start: the decode instance's free KV could not hold the prompt.
	DroppedAtDecodeKV *float64 `json:"dropped_at_decode_kv,omitempty" unit:"requests"`
	// The KV transfers' durations: mean and linear-interpolated P50, P95,
	// P99 (BLIS's P/D figures).
	TransferMean *float64 `json:"transfer_mean_ms,omitempty" unit:"ms"`
	TransferP50  *float64 `json:"transfer_p50_ms,omitempty" unit:"ms"`
	TransferP95  *float64 `json:"transfer_p95_ms,omitempty" unit:"ms"`
	TransferP99  *float64 `json:"transfer_p99_ms,omitempty" unit:"ms"`
	// PrefillThroughput and DecodeThroughput are the requests and
	// sub-requests completed per second of makespan on the instances of
	// each pool (a shared instance counts in both; a kept-whole request
	// counts on its decode instance).
	PrefillThroughput *float64 `json:"prefill_completions_per_sec,omitempty" unit:"req/s"`
	DecodeThroughput  *float64 `json:"decode_completions_per_sec,omitempty" unit:"req/s"`
	// With bandwidth contention: the most transfers in flight at once,
	// and the mean count in flight as each transfer started (itself
	// included).
	PeakTransfers     *float64 `json:"peak_transfers,omitempty" unit:"transfers"`
	MeanTransferDepth *float64 `json:"mean_transfer_depth,omitempty" unit:"transfers"`
}

// PDCounts are what the engine counts of a P/D run, for PDSummary.
type PDCounts struct {
	Disaggregated, Local, DroppedAtDecodeKV int64
	Transfers                               []int64 // every transfer's duration, µs
	PrefillCompleted, DecodeCompleted       int64   // on each pool's instances
	Contention                              bool
	PeakTransfers                           int64
	DepthSum                                int64
}

// pdSummary is counts' summary over makespan µs.
func pdSummary(p *PDCounts, makespan int64) PDSummary {
	f := func(v float64) *float64 { return &v }
	t := TransferDistOf(p.Transfers)
	s := PDSummary{Disaggregated: f(float64(p.Disaggregated)), Local: f(float64(p.Local)), DroppedAtDecodeKV: f(float64(p.DroppedAtDecodeKV)),
		TransferMean: f(t.Mean), TransferP50: f(t.P50), TransferP95: f(t.P95), TransferP99: f(t.P99),
		PrefillThroughput: f(0), DecodeThroughput: f(0)}
	if makespan > 0 {
		sec := float64(makespan) / 1e6
		s.PrefillThroughput, s.DecodeThroughput = f(float64(p.PrefillCompleted)/sec), f(float64(p.DecodeCompleted)/sec)
	}
	if p.Contention {
		s.PeakTransfers, s.MeanTransferDepth = f(float64(p.PeakTransfers)), f(0)
		if len(p.Transfers) > 0 {
			s.MeanTransferDepth = f(float64(p.DepthSum) / float64(len(p.Transfers)))
		}
	}
	return s
}

// TransferDist is a distribution of transfer durations in ms: mean and
// linear-interpolated P50, P95, P99.
type TransferDist struct{ Mean, P50, P95, P99 float64 }

// TransferDistOf summarises durations in µs as ms; us is left as it is.
func TransferDistOf(us []int64) TransferDist {
	if len(us) == 0 {
		return TransferDist{}
	}
	v := slices.Clone(us)
	slices.Sort(v)
	var sum float64
	for _, x := range v {
		sum += float64(x)
	}
	at := func(p float64) float64 {
		r := p / 100 * float64(len(v)-1)
		lo := int(r)
		if lo+1 >= len(v) {
			return float64(v[lo]) / 1000
		}
		f := r - float64(lo)
		return (float64(v[lo]) + f*float64(v[lo+1]-v[lo])) / 1000
	}
	return TransferDist{Mean: sum / float64(len(v)) / 1000, P50: at(50), P95: at(95), P99: at(99)}
}

// DroppedAfterPrefill records a split request dropped after its prefill
// ran: its E2E until the drop is e2e µs. keep (BLIS f90a1e3a) leaves its
// prefill's TTFT and that E2E in the latency distributions, as BLIS's
// do; otherwise a dropped request has no latency, like any other.
func (c *Collector) DroppedAfterPrefill(r *simcore.Request, e2e int64, keep bool) {
	c.state[r.ID] = dropped
	if keep {
		c.e2e.set(r.ID, e2e)
		return
	}
	c.ttft.clear(r.ID)
}
