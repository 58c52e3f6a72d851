package strategies

import (
	"fmt"
	"slices"
	"strings"

	"optimize/simcore"
	"optimize/simcore/metrics"
	"optimize/strategies/settings"
)

// Metric paths name one number of a run's summary, as its JSON spells it:
// "tokens_per_sec", "e2e_ms.p99", "kv.transfer_ms",
// "per_slo.critical.ttft_ms.p99", "per_slo.sheddable.completed_fraction".
// Three derived numbers are added: "completed_fraction" (completed over
// all injected requests), "min_class_completed_fraction" (the worst
// class's completed fraction: starvation or shedding of any class shows up
// here) and "cost_per_million_tokens" (cost_per_hour over the simulated
// output throughput, cost.go).
// "attainment", "goodput" and their per_slo.<class> forms exist only in
// runs with latency targets (slo.*_target_ms or the workload's
// slo_targets); reading them from a run without one is an error.

// metricGetter reads one number; it fails when the run lacks it (a class
// absent from the workload, a TTFT attainment without a target).
type metricGetter func(s *metrics.Summary) (float64, error)

// The numbers a summary holds are metrics.SummaryNumbers and, per class,
// metrics.ClassNumbers (named by the summary's JSON); this file adds only
// the derived ones and the messages for a number a run lacks.

// derivedMetrics are the numbers computed from a summary rather than
// read from it, with their units.
var derivedMetrics = []struct {
	name, unit string
	get        metricGetter
}{
	{"completed_fraction", "fraction", completedFraction},
	{"min_class_completed_fraction", "fraction", minClassCompletedFraction},
	{CostPerMillionTokens, "USD/Mtok", costPerMillionTokens},
}

// classCompletedFraction is the one derived per-class number
// (per_slo.<class>.completed_fraction).
const classCompletedFraction = "completed_fraction"

// metricClasses are the per_slo keys: the classes and "default" for
// unclassed requests.
var metricClasses = append(slices.Clip(settings.ClassNames), simcore.SLONone.Label())

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
	for _, d := range derivedMetrics {
		if d.name == path {
			return d.get, nil
		}
	}
	if rest, ok := strings.CutPrefix(path, "per_slo."); ok {
		return compileClassMetric(rest, path)
	}
	num, err := findNumber(metrics.SummaryNumbers(), path, path)
	if err != nil {
		return nil, err
	}
	if num == nil {
		return nil, fmt.Errorf("unknown metric %q (allowed: %s)", path, metricHint())
	}
	return func(s *metrics.Summary) (float64, error) {
		v, ok := num.Get(s)
		if !ok && num.Same {
			return 0, fmt.Errorf("metric %s: %s", path, noCost(path))
		}
		if !ok {
			return 0, fmt.Errorf("metric %s: the run has no latency target (set slo.ttft_target_ms.<class>, slo.itl_target_ms.<class> or slo.e2e_target_ms.<class>, or the workload's slo_targets)", path)
		}
		return v, nil
	}, nil
}

// findNumber finds the number called name (nil if there is none); a name
// of a distribution with a statistic it lacks is an error naming path.
func findNumber[T any](numbers []metrics.Number[T], name, path string) (*metrics.Number[T], error) {
	for i := range numbers {
		if numbers[i].Name == name {
			return &numbers[i], nil
		}
	}
	for _, n := range numbers {
		if stat, ok := strings.CutPrefix(name, n.Dist+"."); ok && n.Dist != "" {
			return nil, fmt.Errorf("unknown metric %q: statistic %q is not one of %s", path, stat, strings.Join(metrics.DistStats(), ", "))
		}
	}
	return nil, nil
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
	if field == classCompletedFraction {
		return func(s *metrics.Summary) (float64, error) {
			c, err := lookup(s)
			if err != nil {
				return 0, err
			}
			return c.Completed / c.Count, nil
		}, nil
	}
	num, err := findNumber(metrics.ClassNumbers(), field, path)
	if err != nil {
		return nil, err
	}
	if num == nil {
		return nil, fmt.Errorf("unknown metric %q: <field> is one of %s", path, fieldHint(metrics.ClassNumbers(), classCompletedFraction))
	}
	return func(s *metrics.Summary) (float64, error) {
		c, err := lookup(s)
		if err != nil {
			return 0, err
		}
		v, ok := num.Get(c)
		switch {
		case ok:
			return v, nil
		case num.Name == "ttft_attainment":
			return 0, fmt.Errorf("metric %s: no TTFT target for %s (set slo.ttft_target_ms.%s)", path, class, class)
		}
		return 0, fmt.Errorf("metric %s: no latency target for %s (set slo.ttft_target_ms.%s, slo.itl_target_ms.%s or slo.e2e_target_ms.%s, or the workload's slo_targets)", path, class, class, class, class)
	}, nil
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
	derived := make([]string, len(derivedMetrics))
	for i, d := range derivedMetrics {
		derived[i] = d.name
	}
	return fieldHint(metrics.SummaryNumbers(), derived...) +
		", per_slo.<class>.<field>; <stat>: " + strings.Join(metrics.DistStats(), ", ")
}

// fieldHint lists numbers compactly: the plain ones, then the derived
// ones, then the optional ones, then each distribution as NAME.<stat>.
func fieldHint[T any](numbers []metrics.Number[T], derived ...string) string {
	var plain, optional, dists []string
	for _, n := range numbers {
		switch {
		case n.Dist != "":
			if d := n.Dist + ".<stat>"; !slices.Contains(dists, d) {
				dists = append(dists, d)
			}
		case n.Optional:
			optional = append(optional, n.Name)
		default:
			plain = append(plain, n.Name)
		}
	}
	return strings.Join(slices.Concat(plain, derived, optional, dists), ", ")
}

// MetricUnit is the unit of the number path names ("ms", "tokens/s",
// "fraction", ...; see metrics.Number.Unit), "" for a path that names no
// metric. The units are declared beside the metric names: the unit tags of
// the summary's fields and derivedMetrics.
func MetricUnit(path string) string {
	if rest, ok := strings.CutPrefix(path, "per_slo."); ok {
		_, field, _ := strings.Cut(rest, ".")
		if field == classCompletedFraction {
			return "fraction"
		}
		return unitOf(metrics.ClassNumbers(), field)
	}
	for _, d := range derivedMetrics {
		if d.name == path {
			return d.unit
		}
	}
	return unitOf(metrics.SummaryNumbers(), path)
}

func unitOf[T any](numbers []metrics.Number[T], name string) string {
	for _, n := range numbers {
		if n.Name == name {
			return n.Unit
		}
	}
	return ""
}

// MetricName is one metric form with its unit, as the glossary lists them:
// a distribution as "ttft_ms.<stat>", a class's number as
// "per_slo.<class>.ttft_ms.<stat>".
type MetricName struct {
	Name string `json:"name"`
	Unit string `json:"unit"`
}

// MetricNames lists every metric form once: the summary's numbers, the
// derived ones, then the per-class ones.
func MetricNames() []MetricName {
	var out []MetricName
	out = appendForms(out, metrics.SummaryNumbers(), "")
	for _, d := range derivedMetrics {
		out = append(out, MetricName{d.name, d.unit})
	}
	out = appendForms(out, metrics.ClassNumbers(), "per_slo.<class>.")
	return append(out, MetricName{"per_slo.<class>." + classCompletedFraction, "fraction"})
}

// appendForms adds numbers under prefix, each distribution once as
// NAME.<stat>.
func appendForms[T any](out []MetricName, numbers []metrics.Number[T], prefix string) []MetricName {
	for _, n := range numbers {
		name := prefix + n.Name
		if n.Dist != "" {
			name = prefix + n.Dist + ".<stat>"
		}
		if !slices.ContainsFunc(out, func(m MetricName) bool { return m.Name == name }) {
			out = append(out, MetricName{name, n.Unit})
		}
	}
	return out
}
