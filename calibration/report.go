package calibration

import (
	"fmt"
	"math"

	"optimize/simcore/workload"
)

// Options are the comparison's normalisation, as `blis calibrate` takes
// them.
type Options struct {
	// WarmUp drops requests with a lower id; -1 takes the run's
	// warm_up_requests.
	WarmUp int
	// RTTUs is added to every simulated TTFT and E2E; -1 takes the run's
	// network.measured_rtt_ms.
	RTTUs int64
	// BandwidthMbps adds the prompt's upload (to TTFT and E2E) and the
	// output's download (to E2E) at 4 bytes a token; 0 adds nothing.
	BandwidthMbps float64
	// TTFTThreshold is the TTFT MAPE the tolerance verdict holds the
	// simulator to (BLIS's default 0.15).
	TTFTThreshold float64
}

// DefaultOptions are BLIS calibrate's defaults: the run's own warm-up and
// round trip, no bandwidth term, a TTFT MAPE tolerance of 15 %.
func DefaultOptions() Options {
	return Options{WarmUp: -1, RTTUs: -1, TTFTThreshold: 0.15}
}

// Check refuses options no comparison can take.
func (o Options) Check() error {
	switch {
	case o.WarmUp < -1:
		return fmt.Errorf("--warmup-requests: must be >= 0, got %d", o.WarmUp)
	case o.RTTUs < -1:
		return fmt.Errorf("--network-rtt-us: must be >= 0, got %d", o.RTTUs)
	case math.IsNaN(o.TTFTThreshold) || math.IsInf(o.TTFTThreshold, 0) || o.TTFTThreshold < 0:
		return fmt.Errorf("--ttft-mape-threshold: must be a finite number >= 0, got %v", o.TTFTThreshold)
	}
	return checkBandwidth(o.BandwidthMbps)
}

// Report is one run's comparison: BLIS calibrate's report (its JSON
// field names), with the run and the world it was replayed in.
type Report struct {
	Run   string `json:"run"`
	World string `json:"world"`
	Trace struct {
		NumRequests    int `json:"num_requests"`
		WarmUpExcluded int `json:"warm_up_excluded"`
		MatchedPairs   int `json:"matched_pairs"`
		// UnmatchedReal are requests the run has no latency for (failed,
		// or a clock fault); UnmatchedSim those the simulator did not
		// complete.
		UnmatchedReal int `json:"unmatched_real"`
		UnmatchedSim  int `json:"unmatched_sim"`
		// NetworkRTTUs is the round trip added to the simulated latencies.
		NetworkRTTUs int64 `json:"network_rtt_us"`
	} `json:"trace_info"`
	Metrics       map[string]*Metric `json:"metrics"`
	ConfigMatch   ConfigMatch        `json:"config_match"`
	TTFTTolerance *Verdict           `json:"ttft_tolerance,omitempty"`
}

// ConfigMatch lists the settings the replay took from the run (Matched,
// as "key=value (where the run records it)") and those it left at the
// simulator's default or the command line's value (Defaulted).
type ConfigMatch struct {
	Matched   []string `json:"matched,omitempty"`
	Defaulted []string `json:"defaulted,omitempty"`
}

// Verdict is the TTFT MAPE held to a threshold (fractions).
type Verdict struct {
	MAPE      float64 `json:"mape"`
	Threshold float64 `json:"threshold"`
	Within    bool    `json:"within"`
}

// Metric names, in the order the report lists them.
const (
	TTFT = "ttft"
	E2E  = "e2e"
	ITL  = "itl"
)

// MetricNames are the metrics compared.
var MetricNames = []string{TTFT, E2E, ITL}

// Compare pairs the run's requests with the simulator's and compares
// them as BLIS calibrate does. A run's real ITL is its mean time between
// streamed chunks, (last chunk − first chunk) / (chunks − 1), where it
// records its chunks; the simulator's is (E2E − TTFT) / (output − 1).
func Compare(run *Run, sim []SimResult, o Options) (*Report, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	warmUp, rtt := o.WarmUp, o.RTTUs
	if warmUp < 0 {
		warmUp = run.Info.WarmUp
	}
	if rtt < 0 {
		rtt = run.Info.RTTUs
	}
	rep := &Report{Run: run.Name, Metrics: map[string]*Metric{}}
	rep.Trace.NetworkRTTUs = rtt
	var ttft, e2e, itl pairs
	observed := run.Observed()
	for i, real := range observed {
		rep.Trace.NumRequests++
		if real.RequestID < int64(warmUp) {
			rep.Trace.WarmUpExcluded++
			continue
		}
		s := sim[i]
		switch {
		case real.TTFT < 0:
			rep.Trace.UnmatchedReal++
			continue
		case !s.Done:
			rep.Trace.UnmatchedSim++
			continue
		}
		rep.Trace.MatchedPairs++
		up := float64(rtt) + transferUs(o.BandwidthMbps, s.Input)
		ttft.add(float64(real.TTFT), s.TTFT+up)
		e2e.add(float64(real.E2E), s.E2E+up+transferUs(o.BandwidthMbps, s.Output))
		if realITL, ok := chunkGap(real); ok {
			simITL := 0.0
			if s.Output > 1 {
				simITL = (s.E2E - s.TTFT) / float64(s.Output-1)
			}
			itl.add(realITL, simITL)
		}
	}
	if rep.Trace.MatchedPairs == 0 {
		return nil, fmt.Errorf("run %s: no request both completed in the simulator and has real latencies after the %d warm-up requests", run.Name, warmUp)
	}
	for name, p := range map[string]pairs{TTFT: ttft, E2E: e2e, ITL: itl} {
		if m := p.compare(); m != nil {
			rep.Metrics[name] = m
		}
	}
	t := rep.Metrics[TTFT]
	rep.TTFTTolerance = &Verdict{MAPE: t.Request.MAPE, Threshold: o.TTFTThreshold, Within: t.Request.MAPE <= o.TTFTThreshold}
	return rep, nil
}

// chunkGap is a request's mean time between chunks, where the run
// recorded two or more.
func chunkGap(o workload.Observed) (float64, bool) {
	if o.Chunks < 2 {
		return 0, false
	}
	return float64(o.E2E-o.TTFT) / float64(o.Chunks-1), true
}
