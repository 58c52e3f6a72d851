package strategies

import (
	"math"
	"testing"

	"optimize/simcore/metrics"
)

func TestConstraintShortfall(t *testing.T) {
	base := &metrics.Summary{TokensPerSec: 1000, E2E: metrics.Dist{P99: 200}}
	run := &metrics.Summary{TokensPerSec: 900, E2E: metrics.Dist{P99: 300}, Dropped: 3, Rejected: 0}
	cases := []struct {
		name string
		c    Constraint
		want float64
	}{
		{"min ratio met", Constraint{Metric: "tokens_per_sec", MinRatioToBaseline: 0.9}, 0},
		{"min ratio missed", Constraint{Metric: "tokens_per_sec", MinRatioToBaseline: 0.98}, 0.08},
		{"max ratio met", Constraint{Metric: "e2e_ms.p99", MaxRatioToBaseline: 1.5}, 0},
		{"max ratio missed", Constraint{Metric: "e2e_ms.p99", MaxRatioToBaseline: 1.2}, 0.3},
		{"min missed, relative to the bound", Constraint{Metric: "tokens_per_sec", Min: 1200, HasMin: true}, 0.25},
		{"max missed, relative to the bound", Constraint{Metric: "e2e_ms.p99", Max: 250, HasMax: true}, 0.2},
		{"max met", Constraint{Metric: "e2e_ms.p99", Max: 300, HasMax: true}, 0},
		{"worst of several bounds", Constraint{Metric: "e2e_ms.p99", MaxRatioToBaseline: 1.2, Max: 250, HasMax: true}, 0.3},
		// A bound of 0 is absolute: 3 dropped requests miss "max 0" by 3.
		{"max 0 missed", Constraint{Metric: "dropped", Max: 0, HasMax: true}, 3},
		{"max 0 met", Constraint{Metric: "rejected", Max: 0, HasMax: true}, 0},
		{"min 0 met", Constraint{Metric: "dropped", Min: 0, HasMin: true}, 0},
		// A ratio to a baseline of 0 is the bound 0.
		{"max ratio to a zero baseline missed", Constraint{Metric: "dropped", MaxRatioToBaseline: 1.1}, 3},
		{"max ratio to a zero baseline met", Constraint{Metric: "rejected", MaxRatioToBaseline: 1.1}, 0},
		{"min ratio to a zero baseline met", Constraint{Metric: "dropped", MinRatioToBaseline: 0.9}, 0},
		// A delta bound is absolute in the metric's unit: 3 dropped against
		// 0 is 3 above, so "at least baseline + 5" misses by 2 and "at
		// least baseline − 1" is met.
		{"min delta missed", Constraint{Metric: "dropped", MinDeltaToBaseline: 5, HasMinDelta: true}, 2},
		{"min delta met", Constraint{Metric: "dropped", MinDeltaToBaseline: -1, HasMinDelta: true}, 0},
		// 900 tokens/s against 1000 misses "baseline − 50" by 50 tokens/s.
		{"min delta below the baseline", Constraint{Metric: "tokens_per_sec", MinDeltaToBaseline: -50, HasMinDelta: true}, 50},
	}
	for _, c := range cases {
		got, err := c.c.Shortfall(base, run)
		if err != nil || math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: Shortfall = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}
