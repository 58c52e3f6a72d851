package studies

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"optimize/search"
	"optimize/simcore/metrics"
	"optimize/storage"
	"optimize/strategies"
)

// syntheticReport is a report of n trials over four objectives (three
// minimised, one maximised) scattered around a baseline of 100 each, some
// of them worse than the reference point on some axis; its front and
// hypervolume are computed as Load computes them.
func syntheticReport(n int, seed uint64) *Report {
	tpl := &strategies.Template{Objectives: []strategies.Objective{
		{Name: "e2e_p99", Metric: "e2e_ms.p99", Minimize: true},
		{Name: "tokens_per_sec", Metric: "tokens_per_sec"},
		{Name: "ttft_p99", Metric: "ttft_ms.p99", Minimize: true},
		{Name: "itl_p99", Metric: "itl_ms.p99", Minimize: true},
	}}
	var base metrics.Summary
	base.E2E.P99, base.TokensPerSec, base.TTFT.P99, base.ITL.P99 = 100, 100, 100, 100
	r := &Report{Study: &storage.StudyRow{Name: "synthetic"}, Template: tpl, Baseline: base, Best: -1}
	rng := rand.New(rand.NewPCG(seed, 7))
	for i := range n {
		obj := make([]float64, 4)
		for d := range obj {
			obj[d] = 100 * (0.3 + 1.9*rng.Float64()) // ratio 0.3 to 2.2
		}
		score := obj[0] / 100
		if rng.IntN(4) == 0 {
			score += 3 // a constraint penalty
		}
		r.Complete = append(r.Complete, Result{Number: i, Objectives: obj, Score: score})
	}
	r.pareto()
	return r
}

// The history ends at the report's hypervolume, never decreases, and
// matches a full recomputation on every prefix.
func TestHypervolumeHistory(t *testing.T) {
	r := syntheticReport(300, 1)
	h := r.HypervolumeHistory()
	if len(h) != len(r.Complete) {
		t.Fatalf("%d values for %d trials", len(h), len(r.Complete))
	}
	last := h[len(h)-1]
	if r.Hypervolume <= 0 || math.Abs(last-r.Hypervolume) > 1e-12*r.Hypervolume {
		t.Fatalf("last value %v, report hypervolume %v", last, r.Hypervolume)
	}
	rises := 0
	for k := 1; k < len(h); k++ {
		if h[k] < h[k-1] {
			t.Fatalf("decreases at trial %d: %v → %v", k, h[k-1], h[k])
		}
		if h[k] > h[k-1] {
			rises++
		}
	}
	if rises < 5 {
		t.Fatalf("the hypervolume rose only %d times over 300 trials", rises)
	}
	base, minimize := r.baselineObjectives()
	ref := []float64{HypervolumeReference, HypervolumeReference, HypervolumeReference, HypervolumeReference}
	var points [][]float64
	for k, c := range r.Complete[:80] {
		if !r.Penalised(&c) {
			points = append(points, search.Normalize(c.Objectives, base, minimize))
		}
		if want := search.Hypervolume(points, ref); math.Abs(h[k]-want) > 1e-12*max(want, 1) {
			t.Fatalf("prefix of %d trials: history %v, recomputed %v", k+1, h[k], want)
		}
	}
}

// A trial that violates a constraint is never on the front, however good
// its objectives: made to dominate every other trial, it leaves the front
// and the hypervolume exactly as they were.
func TestInfeasibleTrialsNeverOnTheFront(t *testing.T) {
	r := syntheticReport(120, 3)
	front, hv := append([]int(nil), r.Pareto...), r.Hypervolume
	if len(front) < 3 || hv <= 0 {
		t.Fatalf("front of %d, hypervolume %v: the fixture is too small to say anything", len(front), hv)
	}
	for _, i := range front {
		if r.Penalised(&r.Complete[i]) {
			t.Fatalf("trial %d is penalised and on the front", r.Complete[i].Number)
		}
	}
	k := -1
	for i := range r.Complete {
		if r.Penalised(&r.Complete[i]) {
			k = i
			break
		}
	}
	r.Complete[k].Objectives = []float64{10, 1000, 10, 10} // ratio 0.1 on every axis
	r.pareto()
	if !slices.Equal(r.Pareto, front) || r.Hypervolume != hv {
		t.Fatalf("an infeasible trial changed the front %v → %v, hypervolume %v → %v", front, r.Pareto, hv, r.Hypervolume)
	}
	if h := r.HypervolumeHistory(); math.Abs(h[len(h)-1]-hv) > 1e-12*hv {
		t.Fatalf("hypervolume history ends at %v, report %v", h[len(h)-1], hv)
	}
	r.Complete[k].Score = r.Complete[k].Objectives[0] / 100 // the same trial, feasible
	r.pareto()
	if !slices.Equal(r.Pareto, []int{k}) || r.Hypervolume < hv {
		t.Fatalf("the same trial made feasible: front %v (want [%d]), hypervolume %v (was %v)", r.Pareto, k, r.Hypervolume, hv)
	}
}

// An empty study has an empty history; one trial outside the reference
// box has hypervolume 0.
func TestHypervolumeHistoryEdges(t *testing.T) {
	r := syntheticReport(0, 1)
	if h := r.HypervolumeHistory(); len(h) != 0 {
		t.Fatalf("empty study: %v", h)
	}
	r = syntheticReport(1, 1)
	r.Complete[0].Objectives[0] = 250 // 2.5 × the baseline: outside
	if h := r.HypervolumeHistory(); len(h) != 1 || h[0] != 0 {
		t.Fatalf("one trial outside the box: %v", h)
	}
}

func TestBestHistoryAndPenalised(t *testing.T) {
	r := syntheticReport(200, 2)
	best := r.BestHistory()
	penalised := 0
	for i, c := range r.Complete {
		if best[i] > c.Score || (i > 0 && best[i] > best[i-1]) {
			t.Fatalf("trial %d: best so far %v, score %v, previous best %v", i, best[i], c.Score, best[max(i-1, 0)])
		}
		if r.Penalised(&c) {
			penalised++
		}
	}
	if best[len(best)-1] != r.Complete[r.bestIndex()].Score {
		t.Fatalf("final best %v", best[len(best)-1])
	}
	// syntheticReport adds a penalty to about one trial in four.
	if penalised < 30 || penalised > 70 {
		t.Fatalf("%d of 200 trials penalised, want about 50", penalised)
	}
}

func (r *Report) bestIndex() int {
	b := 0
	for i, c := range r.Complete {
		if c.Score < r.Complete[b].Score {
			b = i
		}
	}
	return b
}

func BenchmarkHypervolumeHistory5000(b *testing.B) {
	r := syntheticReport(5000, 3)
	b.ResetTimer()
	for b.Loop() {
		r.HypervolumeHistory()
	}
}

// The best trial may miss a constraint: when no trial meets every one, or
// when it misses by under a point and gains more than the penalty costs.
// The report says which, naming the constraint.
func TestViolationSentence(t *testing.T) {
	tpl := &strategies.Template{
		Objectives:  []strategies.Objective{{Name: "e2e_p99", Metric: "e2e_ms.p99", Minimize: true}},
		Constraints: []strategies.Constraint{{Metric: "tokens_per_sec", MinRatioToBaseline: 0.99}},
	}
	var base metrics.Summary
	base.E2E.P99, base.TokensPerSec = 100, 100
	trial := func(n int, e2e, tps float64) Result {
		var m metrics.Summary
		m.E2E.P99, m.TokensPerSec = e2e, tps
		violation := max(0, 0.99-tps/100)
		return Result{Number: n, Objectives: []float64{e2e}, Score: search.Scalarize(e2e, 100, true, []float64{violation}, 0), Metrics: m}
	}
	r := &Report{Study: &storage.StudyRow{Name: "s"}, Template: tpl, Baseline: base}
	r.Complete = []Result{trial(0, 50, 98.99), trial(1, 80, 100)} // 0.01 points short, at half the latency
	r.pareto()
	if s := r.ViolationSentence(&r.Complete[1]); s != "" {
		t.Fatalf("a feasible trial: %q", s)
	}
	want := "trial 0 misses tokens_per_sec ≥ 0.99 × baseline by under a point, which its score charges less than it gains; 1 of 2 trials meet every constraint"
	if r.Complete[0].Score >= r.Complete[1].Score || r.ViolationSentence(&r.Complete[0]) != want {
		t.Fatalf("scores %v, %v; sentence %q, want %q", r.Complete[0].Score, r.Complete[1].Score, r.ViolationSentence(&r.Complete[0]), want)
	}
	r.Complete = r.Complete[:1]
	r.pareto()
	if s := r.ViolationSentence(&r.Complete[0]); s != "no trial meets every constraint: trial 0 misses tokens_per_sec ≥ 0.99 × baseline" {
		t.Fatalf("no feasible trial: %q", s)
	}
}
