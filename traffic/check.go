package traffic

import (
	"fmt"
	"math"

	"optimize/simcore/workload"
)

// Tolerance is the largest relative difference Compare accepts.
const Tolerance = 0.05

// Check compares one figure of a generated workload with its trace's.
type Check struct {
	Figure    string  `json:"figure"`
	Trace     float64 `json:"trace"`
	Generated float64 `json:"generated"`
	RelDiff   float64 `json:"rel_diff"` // |generated − trace| / trace
	OK        bool    `json:"ok"`
}

// Compare checks a generated workload against its trace: mean rate, peak
// window rate, inter-arrival CV and the quartiles of input and output
// lengths, each within tol of the trace's (relative).
func Compare(trace, gen *Stats, tol float64) []Check {
	figures := []struct {
		name string
		pick func(*Stats) float64
	}{
		{"mean rate (req/s)", func(s *Stats) float64 { return s.MeanRate }},
		{fmt.Sprintf("peak %gs-window rate (req/s)", trace.WindowS), func(s *Stats) float64 { return s.PeakRate }},
		{"inter-arrival CV", func(s *Stats) float64 { return s.InterArrivalCV }},
		{"input p25 (tokens)", func(s *Stats) float64 { return s.Input.P25 }},
		{"input p50 (tokens)", func(s *Stats) float64 { return s.Input.P50 }},
		{"input p75 (tokens)", func(s *Stats) float64 { return s.Input.P75 }},
		{"output p25 (tokens)", func(s *Stats) float64 { return s.Output.P25 }},
		{"output p50 (tokens)", func(s *Stats) float64 { return s.Output.P50 }},
		{"output p75 (tokens)", func(s *Stats) float64 { return s.Output.P75 }},
	}
	out := make([]Check, len(figures))
	for i, f := range figures {
		t, g := f.pick(trace), f.pick(gen)
		d := math.Abs(g-t) / math.Abs(t)
		if t == 0 {
			d = math.Abs(g)
		}
		out[i] = Check{Figure: f.name, Trace: t, Generated: g, RelDiff: d, OK: d <= tol}
	}
	return out
}

// AllOK reports whether every check passed.
func AllOK(checks []Check) bool {
	for _, c := range checks {
		if !c.OK {
			return false
		}
	}
	return true
}

// Generate draws spec's workload (at its own seed) and measures it over
// windows of windowUs µs; blockSize sets the blocks of its prompts.
func Generate(spec *workload.Spec, windowUs int64, blockSize int) (*Stats, error) {
	g, err := workload.NewGenerator(spec, workload.Options{Seed: spec.Seed, BlockSize: blockSize})
	if err != nil {
		return nil, err
	}
	return Measure(FromGenerator(g, blockSize), windowUs)
}

// PoissonAtMean is the baseline a fit must beat: the fitted spec's
// lengths and prefixes, but one Poisson stream at the trace's mean rate
// over its whole span.
func PoissonAtMean(fitted *workload.Spec, st *Stats) *workload.Spec {
	out := *fitted
	out.AggregateRate = st.MeanRate
	out.Clients = nil
	seen := map[string]bool{}
	for _, c := range fitted.Clients {
		key := c.PrefixGroup
		if seen[key] {
			continue
		}
		seen[key] = true
		c.ID = "poisson"
		if key != "" {
			c.ID += "-" + key
		}
		c.Arrival = workload.Arrival{Process: "poisson"}
		c.Lifecycle = nil
		c.RateFraction = groupShare(fitted, key)
		out.Clients = append(out.Clients, c)
	}
	return &out
}

// groupShare is the share of a spec's rate its clients of prefix group
// key send.
func groupShare(spec *workload.Spec, key string) float64 {
	var in, all float64
	for _, c := range spec.Clients {
		all += c.RateFraction
		if c.PrefixGroup == key {
			in += c.RateFraction
		}
	}
	return in / all
}
