package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"
)

// MaxRate is `study validate --max-rate --output json`, and "max_rate" in
// `show`: the highest request rate at which the trial and the baseline
// each meet the attainment targets, seed by seed, found by bisection on
// the workload's rate. Rates are the workload's aggregate arrival rate in
// requests per second.
type MaxRate struct {
	Trial int     `json:"trial"`
	Seeds []int64 `json:"seeds"`
	// Windows: Seeds are a trace study's held-out windows, and the rates
	// multiples of the trace's own (Unit says so).
	Windows bool               `json:"windows,omitempty"`
	Targets []AttainmentTarget `json:"targets"`
	// Tolerance is the bisection's stopping width relative to the rate
	// found (0.02: the rate is within 2 % below the threshold).
	Tolerance float64 `json:"tolerance"`
	// StartRate is the workload's own rate, where the bracketing starts.
	StartRate float64 `json:"start_rate"`
	// Unit is the rates' unit: "req/s", "sessions/s" for a multi-turn
	// workload, whose aggregate rate counts sessions, or "× the trace's
	// rate" for a trace.
	Unit    string        `json:"unit"`
	PerSeed []SeedMaxRate `json:"per_seed"`
	// Winner and Baseline are the means over the seeds of their max rates;
	// Ratio is the mean of the per-seed relative changes winner/baseline −
	// 1, CI95 its paired Student-t interval.
	Winner   Num    `json:"winner"`
	Baseline Num    `json:"baseline"`
	Ratio    Num    `json:"ratio_delta"`
	CI95     [2]Num `json:"ci95"`
	// Missing counts seeds whose search could not be rebuilt from the
	// stored runs (an interrupted request); the figures cover the rest.
	Missing int `json:"missing,omitempty"`
	// RanAt is when the request last ran, for stored evidence (`show`).
	RanAt *time.Time `json:"ran_at,omitempty"`
}

// AttainmentTarget is one SLO-attainment constraint a rate must meet:
// metric (per_slo.<class>.ttft_attainment or .attainment) ≥ Min.
type AttainmentTarget struct {
	Metric string  `json:"metric"`
	Min    float64 `json:"min"`
}

// Words renders the target, "per_slo.critical.ttft_attainment ≥ 0.99".
func (a AttainmentTarget) Words() string { return fmt.Sprintf("%s ≥ %g", a.Metric, a.Min) }

// SeedMaxRate is one seed's result for the trial and the baseline.
type SeedMaxRate struct {
	Seed     int64     `json:"seed"`
	Winner   RateBound `json:"winner"`
	Baseline RateBound `json:"baseline"`
}

// Delta is the seed's relative change of max rate, winner/baseline − 1;
// NaN when the baseline met the targets at no rate tried.
func (s SeedMaxRate) Delta() float64 {
	if s.Baseline.Rate > 0 {
		return float64(s.Winner.Rate/s.Baseline.Rate) - 1
	}
	return math.NaN()
}

// RateBound is one bisection's answer: Rate meets the targets (0: none
// tried did), FailsAt misses them (null: every rate tried met them, so
// Rate is only a lower bound); Probes counts the simulations.
type RateBound struct {
	Rate    Num `json:"rate"`
	FailsAt Num `json:"fails_at"`
	Probes  int `json:"probes"`
}

// Bounded reports whether the threshold lies between Rate and FailsAt.
func (b RateBound) Bounded() bool {
	return b.Rate > 0 && !math.IsNaN(float64(b.FailsAt)) && !math.IsInf(float64(b.FailsAt), 0)
}

// Text renders the bound, "1,450" or "≥ 8,192" (never failed) or "< 1.95"
// (never met).
func (b RateBound) Text() string {
	switch {
	case b.Rate == 0:
		return "< " + RateText(float64(b.FailsAt))
	case !b.Bounded():
		return "≥ " + RateText(float64(b.Rate))
	}
	return RateText(float64(b.Rate))
}

// TargetsText renders the targets joined by " and ".
func (m *MaxRate) TargetsText() string {
	words := make([]string, len(m.Targets))
	for i, t := range m.Targets {
		words[i] = t.Words()
	}
	return strings.Join(words, " and ")
}

// Summary is the sentence: "trial 12 sustains 1,450 req/s at … , the
// baseline 1,100 (+31.8%, 95% CI [+25.0%, +38.6%], 10 seeds)".
func (m *MaxRate) Summary() string {
	return fmt.Sprintf("trial %d sustains %s %s at %s, the baseline %s (%s, 95%% CI [%s, %s], %d %s)",
		m.Trial, RateText(float64(m.Winner)), m.Unit, m.TargetsText(), RateText(float64(m.Baseline)),
		Percent(float64(m.Ratio)), Percent(float64(m.CI95[0])), Percent(float64(m.CI95[1])), len(m.PerSeed)-m.Missing, m.heldOut())
}

// heldOut is what the searches ran on: "seeds", or a trace's "windows".
func (m *MaxRate) heldOut() string {
	if m.Windows {
		return "windows"
	}
	return "seeds"
}

// RateText renders a rate with thousands separators and three significant
// digits at least: "1,450", "12.3", "–" when not finite.
func RateText(r float64) string {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return "–"
	}
	if r < 100 {
		return Human(r)
	}
	s := fmt.Sprintf("%.0f", r)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// WriteText prints the summary sentence and one row per seed.
func (m *MaxRate) WriteText(w io.Writer) {
	fmt.Fprintf(w, "Maximum sustainable rate (trial %d and the baseline; bisection on the workload's rate from %s %s to %.3g%%, %s %s):\n",
		m.Trial, RateText(m.StartRate), m.Unit, 100*m.Tolerance, m.heldOut(), SeedList(m.Seeds))
	if m.RanAt != nil {
		fmt.Fprintf(w, "  latest `study validate --max-rate`, ran %s\n", RanText(*m.RanAt))
	}
	if m.Missing > 0 {
		fmt.Fprintf(w, "  incomplete: %d seeds not searched yet (run study validate --max-rate again to finish)\n", m.Missing)
	}
	fmt.Fprintf(w, "  %s\n", m.Summary())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "    %s\ttrial (%s)\tfails at\tbaseline\tfails at\tΔ\t\n", strings.TrimSuffix(m.heldOut(), "s"), m.Unit)
	for _, s := range m.PerSeed {
		fmt.Fprintf(tw, "    %d\t%s\t%s\t%s\t%s\t%s\t\n", s.Seed, s.Winner.Text(), RateText(float64(s.Winner.FailsAt)),
			s.Baseline.Text(), RateText(float64(s.Baseline.FailsAt)), Percent(s.Delta()))
	}
	tw.Flush()
}
