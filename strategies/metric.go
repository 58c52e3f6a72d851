package strategies

import (
	"fmt"
	"slices"
	"strings"

	"optimize/simcore"
	"optimize/simcore/metrics"
)

// Metric paths name one number of a run's summary, as its JSON spells it:
// "tokens_per_sec", "e2e_ms.p99", "kv.transfer_ms",
// "per_slo.critical.ttft_ms.p99", "per_slo.sheddable.completed_fraction".
// Two derived numbers are added: "completed_fraction" (completed over all
// injected requests) and "min_class_completed_fraction" (the worst class's
// completed fraction: starvation or shedding of any class shows up here).
// "attainment", "goodput" and their per_slo.<class> forms exist only in
// runs with latency targets (slo.*_target_ms or the workload's
// slo_targets); reading them from a run without one is an error.

// metricGetter reads one number; it fails when the run lacks it (a class
// absent from the workload, a TTFT attainment without a target).
type metricGetter func(s *metrics.Summary) (float64, error)

type namedValue[T any] struct {
	name string
	get  func(T) float64
}

func summaryScalars() []namedValue[*metrics.Summary] {
	return []namedValue[*metrics.Summary]{
		{"completed", func(s *metrics.Summary) float64 { return s.Completed }},
		{"rejected", func(s *metrics.Summary) float64 { return s.Rejected }},
		{"dropped", func(s *metrics.Summary) float64 { return s.Dropped }},
		{"in_flight", func(s *metrics.Summary) float64 { return s.InFlight }},
		{"tokens_per_sec", func(s *metrics.Summary) float64 { return s.TokensPerSec }},
		{"responses_per_sec", func(s *metrics.Summary) float64 { return s.ResponsesPerSec }},
		{"preemptions", func(s *metrics.Summary) float64 { return s.Preemptions }},
		{"cache_hit_rate", func(s *metrics.Summary) float64 { return s.CacheHitRate }},
		{"slo_gap", func(s *metrics.Summary) float64 { return s.SLOGap }},
		{"jain_fairness", func(s *metrics.Summary) float64 { return s.JainFairness }},
		{"makespan_ms", func(s *metrics.Summary) float64 { return s.MakespanMs }},
		{"input_tokens", func(s *metrics.Summary) float64 { return s.InputTokens }},
		{"output_tokens", func(s *metrics.Summary) float64 { return s.OutputTokens }},
		{"kv.offloaded_blocks", func(s *metrics.Summary) float64 { return s.KV.OffloadedBlocks }},
		{"kv.reloaded_blocks", func(s *metrics.Summary) float64 { return s.KV.ReloadedBlocks }},
		{"kv.transfer_ms", func(s *metrics.Summary) float64 { return s.KV.TransferMs }},
		{"kv.thrashing_rate", func(s *metrics.Summary) float64 { return s.KV.ThrashingRate }},
	}
}

func summaryDists() []struct {
	name string
	get  func(*metrics.Summary) metrics.Dist
} {
	return []struct {
		name string
		get  func(*metrics.Summary) metrics.Dist
	}{
		{"ttft_ms", func(s *metrics.Summary) metrics.Dist { return s.TTFT }},
		{"e2e_ms", func(s *metrics.Summary) metrics.Dist { return s.E2E }},
		{"itl_ms", func(s *metrics.Summary) metrics.Dist { return s.ITL }},
		{"scheduling_delay_ms", func(s *metrics.Summary) metrics.Dist { return s.SchedulingDelay }},
	}
}

func distStats() []namedValue[metrics.Dist] {
	return []namedValue[metrics.Dist]{
		{"mean", func(d metrics.Dist) float64 { return d.Mean }},
		{"p50", func(d metrics.Dist) float64 { return d.P50 }},
		{"p90", func(d metrics.Dist) float64 { return d.P90 }},
		{"p99", func(d metrics.Dist) float64 { return d.P99 }},
	}
}

func classScalars() []namedValue[*metrics.ClassSummary] {
	return []namedValue[*metrics.ClassSummary]{
		{"count", func(c *metrics.ClassSummary) float64 { return c.Count }},
		{"completed", func(c *metrics.ClassSummary) float64 { return c.Completed }},
		{"rejected", func(c *metrics.ClassSummary) float64 { return c.Rejected }},
	}
}

// metricClasses are the per_slo keys: the classes and "default" for
// unclassed requests.
var metricClasses = append(slices.Clip(classNames), simcore.SLONone.Label())

// ValidMetric reports whether path names a metric, listing the allowed
// forms when it does not.
func ValidMetric(path string) error {
	_, err := compileMetric(path)
	return err
}

// Metric reads the number path names from s.
func Metric(s *metrics.Summary, path string) (float64, error) {
	get, err := compileMetric(path)
	if err != nil {
		return 0, err
	}
	return get(s)
}

func compileMetric(path string) (metricGetter, error) {
	for _, m := range summaryScalars() {
		if m.name == path {
			return func(s *metrics.Summary) (float64, error) { return m.get(s), nil }, nil
		}
	}
	switch path {
	case "completed_fraction":
		return completedFraction, nil
	case "min_class_completed_fraction":
		return minClassCompletedFraction, nil
	case "attainment", "goodput":
		return func(s *metrics.Summary) (float64, error) {
			v := s.Attainment
			if path == "goodput" {
				v = s.Goodput
			}
			if v == nil {
				return 0, fmt.Errorf("metric %s: the run has no latency target (set knob slo.ttft_target_ms.<class>, slo.itl_target_ms.<class> or slo.e2e_target_ms.<class>, or the workload's slo_targets)", path)
			}
			return *v, nil
		}, nil
	}
	for _, d := range summaryDists() {
		if stat, ok := strings.CutPrefix(path, d.name+"."); ok {
			get, err := compileStat(stat, path)
			if err != nil {
				return nil, err
			}
			return func(s *metrics.Summary) (float64, error) { return get(d.get(s)), nil }, nil
		}
	}
	if rest, ok := strings.CutPrefix(path, "per_slo."); ok {
		return compileClassMetric(rest, path)
	}
	return nil, fmt.Errorf("unknown metric %q (allowed: %s)", path, metricHint())
}

func compileStat(stat, path string) (func(metrics.Dist) float64, error) {
	for _, st := range distStats() {
		if st.name == stat {
			return st.get, nil
		}
	}
	return nil, fmt.Errorf("unknown metric %q: statistic %q is not one of mean, p50, p90, p99", path, stat)
}

func compileClassMetric(rest, path string) (metricGetter, error) {
	class, field, ok := strings.Cut(rest, ".")
	if !ok || !slices.Contains(metricClasses, class) {
		return nil, fmt.Errorf("unknown metric %q: want per_slo.<class>.<field> with <class> one of %s", path, strings.Join(metricClasses, ", "))
	}
	lookup := func(s *metrics.Summary) (*metrics.ClassSummary, error) {
		c, ok := s.PerSLO[class]
		if !ok || c.Count == 0 {
			return nil, fmt.Errorf("metric %s: the run has no %s requests", path, class)
		}
		return &c, nil
	}
	for _, m := range classScalars() {
		if m.name == field {
			return func(s *metrics.Summary) (float64, error) {
				c, err := lookup(s)
				if err != nil {
					return 0, err
				}
				return m.get(c), nil
			}, nil
		}
	}
	switch field {
	case "completed_fraction":
		return func(s *metrics.Summary) (float64, error) {
			c, err := lookup(s)
			if err != nil {
				return 0, err
			}
			return c.Completed / c.Count, nil
		}, nil
	case "attainment", "goodput":
		return func(s *metrics.Summary) (float64, error) {
			c, err := lookup(s)
			if err != nil {
				return 0, err
			}
			v := c.Attainment
			if field == "goodput" {
				v = c.Goodput
			}
			if v == nil {
				return 0, fmt.Errorf("metric %s: no latency target for %s (set knob slo.ttft_target_ms.%s, slo.itl_target_ms.%s or slo.e2e_target_ms.%s, or the workload's slo_targets)", path, class, class, class, class)
			}
			return *v, nil
		}, nil
	case "ttft_attainment":
		return func(s *metrics.Summary) (float64, error) {
			c, err := lookup(s)
			if err != nil {
				return 0, err
			}
			if c.TTFTAttainment == nil {
				return 0, fmt.Errorf("metric %s: no TTFT target for %s (set knob slo.ttft_target_ms.%s)", path, class, class)
			}
			return *c.TTFTAttainment, nil
		}, nil
	}
	for _, dist := range []struct {
		name string
		get  func(*metrics.ClassSummary) metrics.Dist
	}{
		{"ttft_ms", func(c *metrics.ClassSummary) metrics.Dist { return c.TTFT }},
		{"e2e_ms", func(c *metrics.ClassSummary) metrics.Dist { return c.E2E }},
	} {
		if stat, ok := strings.CutPrefix(field, dist.name+"."); ok {
			get, err := compileStat(stat, path)
			if err != nil {
				return nil, err
			}
			return func(s *metrics.Summary) (float64, error) {
				c, err := lookup(s)
				if err != nil {
					return 0, err
				}
				return get(dist.get(c)), nil
			}, nil
		}
	}
	return nil, fmt.Errorf("unknown metric %q: <field> is one of count, completed, rejected, completed_fraction, ttft_attainment, attainment, goodput, ttft_ms.<stat>, e2e_ms.<stat>", path)
}

func completedFraction(s *metrics.Summary) (float64, error) {
	total := s.Completed + s.Rejected + s.Dropped + s.InFlight
	if total == 0 {
		return 0, fmt.Errorf("metric completed_fraction: the run has no requests")
	}
	return s.Completed / total, nil
}

// minClassCompletedFraction is the lowest completed fraction over the
// classes present; map order cannot matter to a minimum.
func minClassCompletedFraction(s *metrics.Summary) (float64, error) {
	worst, found := 1.0, false
	for _, c := range s.PerSLO {
		if c.Count > 0 {
			worst, found = min(worst, c.Completed/c.Count), true
		}
	}
	if !found {
		return 0, fmt.Errorf("metric min_class_completed_fraction: the run has no requests")
	}
	return worst, nil
}

func metricHint() string {
	var names []string
	for _, m := range summaryScalars() {
		names = append(names, m.name)
	}
	names = append(names, "completed_fraction", "min_class_completed_fraction", "attainment", "goodput")
	for _, d := range summaryDists() {
		names = append(names, d.name+".<stat>")
	}
	names = append(names, "per_slo.<class>.<field>")
	return strings.Join(names, ", ") + "; <stat>: mean, p50, p90, p99"
}
