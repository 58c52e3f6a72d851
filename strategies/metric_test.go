package strategies

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"optimize/simcore"
	"optimize/simcore/metrics"
)

func sampleSummary() *metrics.Summary {
	attain, critAttain, critGoodput, overall, goodput := 0.75, 0.9, 18.0, 0.6, 36.0
	return &metrics.Summary{
		Attainment: &overall, Goodput: &goodput,
		Completed: 90, Rejected: 8, Dropped: 1, InFlight: 1,
		TTFT:            metrics.Dist{Mean: 1, P50: 2, P90: 3, P99: 4},
		E2E:             metrics.Dist{P99: 5000},
		SchedulingDelay: metrics.Dist{P90: 7},
		TokensPerSec:    17000, SLOGap: 4.5, JainFairness: 0.99,
		KV: metrics.KVSummary{TransferMs: 12},
		PerSLO: map[string]metrics.ClassSummary{
			"critical": {Count: 20, Completed: 20, TTFT: metrics.Dist{P99: 90}, TTFTAttainment: &attain,
				Attainment: &critAttain, Goodput: &critGoodput},
			"sheddable": {Count: 40, Completed: 30, Rejected: 10, E2E: metrics.Dist{Mean: 800}},
			"standard":  {Count: 40, Completed: 40},
		},
	}
}

func TestMetricPaths(t *testing.T) {
	s := sampleSummary()
	for path, want := range map[string]float64{
		"tokens_per_sec":                       17000,
		"completed":                            90,
		"ttft_ms.mean":                         1,
		"ttft_ms.p50":                          2,
		"e2e_ms.p99":                           5000,
		"scheduling_delay_ms.p90":              7,
		"kv.transfer_ms":                       12,
		"slo_gap":                              4.5,
		"jain_fairness":                        0.99,
		"completed_fraction":                   0.9,
		"min_class_completed_fraction":         0.75,
		"per_slo.critical.ttft_ms.p99":         90,
		"per_slo.critical.ttft_attainment":     0.75,
		"per_slo.sheddable.completed_fraction": 0.75,
		"per_slo.sheddable.rejected":           10,
		"per_slo.sheddable.e2e_ms.mean":        800,
		"per_slo.standard.count":               40,
		"attainment":                           0.6,
		"goodput":                              36,
		"per_slo.critical.attainment":          0.9,
		"per_slo.critical.goodput":             18,
	} {
		got, err := Metric(s, path)
		if err != nil || got != want {
			t.Errorf("Metric(%s) = %v, %v; want %v", path, got, err, want)
		}
	}
}

func TestMetricErrors(t *testing.T) {
	s := sampleSummary()
	for path, want := range map[string]string{
		"tokens_per_second":                `unknown metric "tokens_per_second" (allowed: completed,`,
		"ttft_ms":                          `unknown metric "ttft_ms" (allowed:`,
		"ttft_ms.p95":                      `statistic "p95" is not one of mean, p50, p90, p99`,
		"per_slo.gold.ttft_ms.p99":         "want per_slo.<class>.<field> with <class> one of critical,",
		"per_slo.critical":                 "want per_slo.<class>.<field>",
		"per_slo.critical.itl_ms.p99":      "<field> is one of count, completed,",
		"per_slo.batch.ttft_ms.p99":        "metric per_slo.batch.ttft_ms.p99: the run has no batch requests",
		"per_slo.standard.ttft_attainment": "no TTFT target for standard (set slo.ttft_target_ms.standard)",
		"per_slo.standard.attainment":      "metric per_slo.standard.attainment: no latency target for standard (set slo.ttft_target_ms.standard,",
		"per_slo.sheddable.goodput":        "metric per_slo.sheddable.goodput: no latency target for sheddable",
		"per_slo.critical.goodput_ms":      "<field> is one of count, completed, rejected, completed_fraction, ttft_attainment, attainment, goodput,",
	} {
		_, err := Metric(s, path)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Metric(%s) error %v, want %q", path, err, want)
		}
	}
	if err := ValidMetric("per_slo.batch.ttft_ms.p99"); err != nil {
		t.Errorf("a class absent from one run is still a valid path: %v", err)
	}
	for _, path := range []string{"attainment", "goodput"} {
		if _, err := Metric(&metrics.Summary{}, path); err == nil || !strings.Contains(err.Error(), "metric "+path+": the run has no latency target") {
			t.Errorf("Metric(%s) of a run without targets: error %v, want one naming the missing target", path, err)
		}
	}
	if _, err := Metric(&metrics.Summary{}, "completed_fraction"); err == nil {
		t.Error("completed_fraction of an empty run: want an error, not 0/0")
	}
}

// Every number a run's summary reports (every numeric leaf of its JSON) is
// a metric path that reads that very number, so a field added to
// metrics.Summary cannot be left out of objectives and constraints.
func TestMetricPathsCoverTheSummary(t *testing.T) {
	var s metrics.Summary
	next := 0.0
	fillDistinct(t, reflect.ValueOf(&s).Elem(), &next)
	js, err := json.Marshal(&s)
	if err != nil {
		t.Fatal(err)
	}
	var tree map[string]any
	if err := json.Unmarshal(js, &tree); err != nil {
		t.Fatal(err)
	}
	leaves := map[string]float64{}
	flatten(t, "", tree, leaves)
	if len(leaves) != int(next) {
		t.Fatalf("%d numeric leaves in the JSON, %d numbers in the summary", len(leaves), int(next))
	}
	for path, want := range leaves {
		if err := ValidMetric(path); err != nil {
			t.Errorf("summary field %s is not a metric: %v", path, err)
			continue
		}
		if got, err := Metric(&s, path); err != nil || got != want {
			t.Errorf("Metric(%s) = %v, %v; the summary holds %v", path, got, err, want)
		}
	}
}

// fillDistinct gives every number reachable from v its own value, and
// every map one entry per SLO class label simcore can report.
func fillDistinct(t *testing.T, v reflect.Value, next *float64) {
	switch v.Kind() {
	case reflect.Float64:
		*next++
		v.SetFloat(*next)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillDistinct(t, v.Elem(), next)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).Tag.Get("metric") == "-" {
				continue // a report, not numbers (left nil, it is omitted)
			}
			fillDistinct(t, v.Field(i), next)
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		for c := simcore.SLONone; c < simcore.NumSLOClasses; c++ {
			e := reflect.New(v.Type().Elem()).Elem()
			fillDistinct(t, e, next)
			v.SetMapIndex(reflect.ValueOf(c.Label()), e)
		}
	default:
		t.Fatalf("summary field of type %s: teach metric.go (and this test) to read it", v.Type())
	}
}

func flatten(t *testing.T, prefix string, v any, out map[string]float64) {
	switch x := v.(type) {
	case float64:
		out[prefix] = x
	case map[string]any:
		for k, sub := range x {
			if prefix != "" {
				k = prefix + "." + k
			}
			flatten(t, k, sub, out)
		}
	default:
		t.Fatalf("summary JSON %s: unexpected %T", prefix, v)
	}
}

// Every metric a template may name has a unit, and MetricUnit answers for
// each path form (plain, distribution, derived, per class).
func TestEveryMetricHasAUnit(t *testing.T) {
	names := MetricNames()
	if len(names) < 25 {
		t.Fatalf("only %d metric forms: %v", len(names), names)
	}
	for _, m := range names {
		if m.Unit == "" {
			t.Errorf("metric %s has no unit", m.Name)
		}
	}
	for path, want := range map[string]string{
		"tokens_per_sec": "tokens/s", "ttft_ms.p99": "ms", "kv.transfer_ms": "ms", "slo_gap": "ratio",
		"completed_fraction": "fraction", "min_class_completed_fraction": "fraction", "attainment": "fraction", "goodput": "req/s",
		"per_slo.critical.ttft_ms.p99": "ms", "per_slo.sheddable.completed_fraction": "fraction", "per_slo.critical.rejected": "requests",
		"no_such_metric": "",
	} {
		if got := MetricUnit(path); got != want {
			t.Errorf("MetricUnit(%s) = %q, want %q", path, got, want)
		}
	}
}
