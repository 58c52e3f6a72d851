package calibration

import (
	"fmt"
	"math"
	"slices"
)

// The comparison is BLIS f90a1e3a's `blis calibrate`, figure for figure:
// real and simulated requests paired by the run's request id, the warm-up
// requests (id below warm_up_requests) dropped, the network's round trip
// (and, given a bandwidth, 4 bytes per token each way) added to the
// simulated latencies to put them where the client measured, then for
// TTFT, E2E and ITL the workload-level mean and percentiles (P50, P90,
// P95, P99 by linear interpolation between ranks) with their errors
// (simulated − real, and |error| / real), and the request-level MAPE,
// Pearson r, bias and quality label.

// Aggregates are a metric's workload-level figures, µs; the percent
// errors are fractions.
type Aggregates struct {
	RealMean         float64 `json:"real_mean"`
	SimMean          float64 `json:"sim_mean"`
	MeanError        float64 `json:"mean_error"`
	MeanPercentError float64 `json:"mean_percent_error"`
	RealP50          float64 `json:"real_p50"`
	SimP50           float64 `json:"sim_p50"`
	P50Error         float64 `json:"p50_error"`
	P50PercentError  float64 `json:"p50_percent_error"`
	RealP90          float64 `json:"real_p90"`
	SimP90           float64 `json:"sim_p90"`
	P90Error         float64 `json:"p90_error"`
	P90PercentError  float64 `json:"p90_percent_error"`
	RealP95          float64 `json:"real_p95"`
	SimP95           float64 `json:"sim_p95"`
	P95Error         float64 `json:"p95_error"`
	P95PercentError  float64 `json:"p95_percent_error"`
	RealP99          float64 `json:"real_p99"`
	SimP99           float64 `json:"sim_p99"`
	P99Error         float64 `json:"p99_error"`
	P99PercentError  float64 `json:"p99_percent_error"`
}

// Quality is how well the simulator predicts each request of a metric.
type Quality struct {
	MAPE     float64 `json:"mape"`
	PearsonR float64 `json:"pearson_r"`
	// Bias is "over-predict", "under-predict" or "neutral": the sign of
	// the summed simulated − real.
	Bias string `json:"bias_direction"`
	// Label is BLIS's: excellent (MAPE < 10 % and r > 0.95), good (< 20 %,
	// > 0.85), fair (< 35 %, > 0.70), else poor.
	Label string `json:"quality"`
}

// Metric is one metric's comparison.
type Metric struct {
	Workload Aggregates `json:"workload_level"`
	Request  Quality    `json:"request_level"`
	Count    int        `json:"count"`
}

// Signed is the workload-level error of a figure as a signed fraction
// of the real one (the simulator's −42 % is -0.42); 0 without a real one.
func Signed(real, sim float64) float64 {
	if real <= 0 {
		return 0
	}
	return sim/real - 1
}

// pairs are matched real and simulated values of one metric.
type pairs struct{ real, sim []float64 }

func (p *pairs) add(real, sim float64) {
	p.real, p.sim = append(p.real, real), append(p.sim, sim)
}

// compare computes a metric's comparison; nil without pairs.
func (p pairs) compare() *Metric {
	n := len(p.real)
	if n == 0 {
		return nil
	}
	m := &Metric{Count: n}
	w := &m.Workload
	for i := range p.real {
		w.RealMean += p.real[i]
		w.SimMean += p.sim[i]
	}
	w.RealMean /= float64(n)
	w.SimMean /= float64(n)
	realSorted, simSorted := slices.Sorted(slices.Values(p.real)), slices.Sorted(slices.Values(p.sim))
	for _, q := range []struct {
		pct              float64
		real, sim, e, pe *float64
	}{
		{50, &w.RealP50, &w.SimP50, &w.P50Error, &w.P50PercentError},
		{90, &w.RealP90, &w.SimP90, &w.P90Error, &w.P90PercentError},
		{95, &w.RealP95, &w.SimP95, &w.P95Error, &w.P95PercentError},
		{99, &w.RealP99, &w.SimP99, &w.P99Error, &w.P99PercentError},
	} {
		*q.real, *q.sim = percentile(realSorted, q.pct), percentile(simSorted, q.pct)
		*q.e, *q.pe = errorOf(*q.real, *q.sim)
	}
	w.MeanError, w.MeanPercentError = errorOf(w.RealMean, w.SimMean)

	var sum, bias float64
	count := 0
	for i := range p.real {
		if p.real[i] == 0 {
			continue
		}
		sum += math.Abs(p.real[i]-p.sim[i]) / p.real[i]
		bias += p.sim[i] - p.real[i]
		count++
	}
	if count > 0 {
		m.Request.MAPE = sum / float64(count)
		switch {
		case bias > 0:
			m.Request.Bias = "over-predict"
		case bias < 0:
			m.Request.Bias = "under-predict"
		default:
			m.Request.Bias = "neutral"
		}
	}
	if n >= 3 {
		m.Request.PearsonR = pearson(p.real, p.sim)
	}
	m.Request.Label = label(m.Request.MAPE, m.Request.PearsonR)
	return m
}

// errorOf is sim − real and its size as a fraction of real (0 when real
// is not positive).
func errorOf(real, sim float64) (float64, float64) {
	e := sim - real
	if real > 0 {
		return e, math.Abs(e) / real
	}
	return e, 0
}

// percentile interpolates linearly between the ranks around p % of the
// way from the smallest to the largest value.
func percentile(sorted []float64, p float64) float64 {
	switch len(sorted) {
	case 0:
		return 0
	case 1:
		return sorted[0]
	}
	rank := p / 100 * float64(len(sorted)-1)
	lo, hi := int(math.Floor(rank)), int(math.Ceil(rank))
	return sorted[lo] + (rank-float64(lo))*(sorted[hi]-sorted[lo])
}

func pearson(x, y []float64) float64 {
	n := float64(len(x))
	var sx, sy, sxy, sx2, sy2 float64
	for i := range x {
		sx += x[i]
		sy += y[i]
		sxy += x[i] * y[i]
		sx2 += x[i] * x[i]
		sy2 += y[i] * y[i]
	}
	den := math.Sqrt((n*sx2 - sx*sx) * (n*sy2 - sy*sy))
	if den == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / den
}

func label(mape, r float64) string {
	switch {
	case mape < 0.10 && r > 0.95:
		return "excellent"
	case mape < 0.20 && r > 0.85:
		return "good"
	case mape < 0.35 && r > 0.70:
		return "fair"
	}
	return "poor"
}

// bytesPerToken is what BLIS's network terms move per token each way.
const bytesPerToken = 4

// transferUs is the time tokens take over bandwidthMbps (0 = not given).
func transferUs(bandwidthMbps float64, tokens int32) float64 {
	if bandwidthMbps <= 0 {
		return 0
	}
	return float64(tokens) * bytesPerToken * 8 / (bandwidthMbps * 1e6) * 1e6
}

// checkBandwidth refuses a bandwidth that is not a finite number ≥ 0.
func checkBandwidth(v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return fmt.Errorf("--network-bandwidth-mbps: must be a finite number >= 0, got %v", v)
	}
	return nil
}
