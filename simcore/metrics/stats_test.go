package metrics

import (
	"math"
	"math/rand"
	"slices"
	"testing"

	"optimize/simcore"
)

// Percentiles interpolate linearly at rank p/100·(n−1), as numpy's
// "linear" and BLIS do, and come out in ms from µs.
func TestDistInterpolates(t *testing.T) {
	d := distOf([]int64{4000, 1000, 3000, 2000}) // sorted: 1,2,3,4 ms
	want := Dist{Mean: 2.5, P50: 2.5, P90: 3.7, P99: 3.97}
	for name, pair := range map[string][2]float64{
		"mean": {d.Mean, want.Mean}, "p50": {d.P50, want.P50}, "p90": {d.P90, want.P90}, "p99": {d.P99, want.P99},
	} {
		if math.Abs(pair[0]-pair[1]) > 1e-12 {
			t.Errorf("%s = %v, want %v", name, pair[0], pair[1])
		}
	}
	if got := distOf(nil); got != (Dist{}) {
		t.Errorf("empty distribution = %+v", got)
	}
}

// ITLs are kept as (value, count) per step; the weighted distribution must
// equal the plain one over the expanded multiset.
func TestWeightedDistEqualsExpanded(t *testing.T) {
	vals := []int64{9000, 7000, 9000, 44000, 7000}
	counts := []int64{3, 120, 1, 2, 50}
	var expanded []int64
	for i, v := range vals {
		for range counts[i] {
			expanded = append(expanded, v)
		}
	}
	got, want := weightedDist(pairsOf(vals, counts)), distOf(expanded)
	if math.Abs(got.Mean-want.Mean) > 1e-9 || got.P50 != want.P50 || got.P90 != want.P90 || got.P99 != want.P99 {
		t.Fatalf("weighted %+v, expanded %+v", got, want)
	}
}

// Past histogramMin steps the weighted distribution narrows by histogram
// before sorting: its percentiles must still be the expanded multiset's,
// with ties, spread-out values and a long tail, and its input unchanged.
func TestWeightedDistNarrowedEqualsExpanded(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, n := range []int{histogramMin, 3 * histogramMin} {
		vals, counts := make([]int64, n), make([]int64, n)
		var expanded []int64
		for i := range vals {
			switch i % 3 {
			case 0:
				vals[i] = 7000 + rng.Int63n(40)*250 // many ties
			case 1:
				vals[i] = 5000 + rng.Int63n(60000)
			default:
				vals[i] = 5000 + rng.Int63n(1<<40) // a tail far out
			}
			counts[i] = 1 + rng.Int63n(60)
			for range counts[i] {
				expanded = append(expanded, vals[i])
			}
		}
		steps := pairsOf(vals, counts)
		before := slices.Clone(steps)
		got, want := weightedDist(steps), distOf(expanded)
		if math.Abs(got.Mean-want.Mean) > 1e-6*want.Mean || got.P50 != want.P50 || got.P90 != want.P90 || got.P99 != want.P99 {
			t.Fatalf("%d steps: weighted %+v, expanded %+v", n, got, want)
		}
		if !slices.Equal(steps, before) {
			t.Fatalf("%d steps: weightedDist reordered its input", n)
		}
	}
}

// pairsOf pairs each value with its count.
func pairsOf(vals, counts []int64) []valueCount {
	pairs := make([]valueCount, len(vals))
	for i, v := range vals {
		pairs[i] = valueCount{v, counts[i]}
	}
	return pairs
}

func TestJain(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{1, 1, 1}, 1},
		{[]float64{1, 0, 0, 0}, 0.25},
		{[]float64{0, 0}, 1},
		{nil, 0},
	} {
		if got := jain(c.xs); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("jain(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
}

// Summarize counts outcomes per class, reports the SLO gap and TTFT
// attainment, and Mean averages runs field by field.
func TestSummarizeAndMean(t *testing.T) {
	var c Collector
	var targets Targets
	targets.TTFT.V[simcore.SLOCritical], targets.TTFT.Set[simcore.SLOCritical] = 100, true
	c.SetTargets(targets)
	reqs := []struct {
		slo  simcore.SLOClass
		ttft int64
		done bool
	}{
		{simcore.SLOCritical, 50_000, true}, {simcore.SLOCritical, 150_000, true},
		{simcore.SLOSheddable, 300_000, true}, {simcore.SLOSheddable, -1, false},
	}
	for i, q := range reqs {
		r := &simcore.Request{ID: int64(i), SLO: q.slo, OutputLen: 10}
		c.Arrived(r)
		if q.done {
			r.FirstToken = q.ttft
			c.FirstToken(r)
			c.Completed(r)
		} else {
			c.Rejected(r)
		}
	}
	s := c.Summarize(RunInfo{Makespan: 1_000_000})
	crit, shed := s.PerSLO["critical"], s.PerSLO["sheddable"]
	if crit.Count != 2 || shed.Count != 2 || shed.Rejected != 1 || s.Completed != 3 || s.Rejected != 1 {
		t.Fatalf("counts: %+v", s)
	}
	if a := crit.TTFTAttainment; a == nil || *a != 0.5 {
		t.Fatalf("critical attainment %v, want 0.5 (one of two within 100 ms)", a)
	}
	if shed.TTFTAttainment != nil {
		t.Fatal("attainment reported for a class without a target")
	}
	if want := 300 / (50 + 0.99*100); math.Abs(s.SLOGap-want) > 1e-9 {
		t.Fatalf("slo gap %v, want %v", s.SLOGap, want)
	}
	m := Mean([]Summary{s, s})
	if m.Completed != s.Completed || m.SLOGap != s.SLOGap || *m.PerSLO["critical"].TTFTAttainment != 0.5 {
		t.Fatalf("mean of identical runs differs: %+v", m)
	}
}

// The cluster's size and cost are the configuration's: a run reports
// instances × TP GPUs at their price, a GPU without a price reports no
// cost (not a free cluster), and the mean over seeds is the value itself,
// exactly, where a sum of three equal floats divided by 3 is not (9 ×
// 6.88 summed three times and divided by 3 misses by an ulp).
func TestClusterCostIsTheConfigurations(t *testing.T) {
	var c Collector
	s := c.Summarize(RunInfo{Makespan: 1_000_000, GPUs: 9, PricePerGPUHour: 6.88})
	if s.GPUCount == nil || *s.GPUCount != 9 || s.CostPerHour == nil || *s.CostPerHour != 9*6.88 {
		t.Fatalf("gpu_count %v, cost_per_hour %v; want 9 and %v", s.GPUCount, s.CostPerHour, 9*6.88)
	}
	if v := *s.CostPerHour; (v+v+v)/3 == v {
		t.Fatalf("the averaging this test guards against is exact for %v: pick another price", v)
	}
	m := Mean([]Summary{s, s, s})
	if *m.GPUCount != 9 || *m.CostPerHour != *s.CostPerHour {
		t.Errorf("mean of three seeds: gpu_count %v, cost_per_hour %v; want 9 and %v exactly", *m.GPUCount, *m.CostPerHour, *s.CostPerHour)
	}
	free := c.Summarize(RunInfo{Makespan: 1_000_000, GPUs: 9})
	if free.GPUCount == nil || free.CostPerHour != nil {
		t.Errorf("a GPU without a price: gpu_count %v, cost_per_hour %v; want 9 and absent", free.GPUCount, free.CostPerHour)
	}
}
