package report

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

// scatteredReport is a report of n trials over four objectives (three
// minimised, one maximised) scattered around a baseline of 100 each, some
// of them worse than the reference point on some axis; its front and
// hypervolume are computed as Load computes them.
func scatteredReport(n int, seed uint64) *Report {
	tpl := &strategies.Template{Objectives: []strategies.Objective{
		{Name: "e2e_p99", Metric: "e2e_ms.p99", Minimize: true},
		{Name: "tokens_per_sec", Metric: "tokens_per_sec"},
		{Name: "ttft_p99", Metric: "ttft_ms.p99", Minimize: true},
		{Name: "itl_p99", Metric: "itl_ms.p99", Minimize: true},
	}}
	var base metrics.Summary
	base.E2E.P99, base.TokensPerSec, base.TTFT.P99, base.ITL.P99 = 100, 100, 100, 100
	r := &Report{Study: &storage.Study{Name: "synthetic"}, Template: tpl, Baseline: base, Best: -1}
	rng := rand.New(rand.NewPCG(seed, 7))
	for i := range n {
		obj := make([]float64, 4)
		for d := range obj {
			obj[d] = 100 * (0.3 + 1.9*rng.Float64()) // ratio 0.3 to 2.2
		}
		score, violation := obj[0]/100, 0.0
		if rng.IntN(4) == 0 {
			violation = 0.003 // a constraint missed by 0.3 points
			score += search.DefaultViolationWeight * violation
		}
		r.Complete = append(r.Complete, Result{Number: i, Objectives: obj, Score: score, Violations: []float64{violation}, Violation: violation})
	}
	r.pareto()
	return r
}

// The history ends at the report's hypervolume, never decreases, and
// matches a full recomputation on every prefix.
func TestHypervolumeHistory(t *testing.T) {
	r := scatteredReport(300, 1)
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
	base, minimize := r.BaselineObjectives()
	ref := []float64{HypervolumeReference, HypervolumeReference, HypervolumeReference, HypervolumeReference}
	var points [][]float64
	for k, c := range r.Complete[:80] {
		if search.Feasible(c.Violation) {
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
	r := scatteredReport(120, 3)
	front, hv := append([]int(nil), r.Pareto...), r.Hypervolume
	if len(front) < 3 || hv <= 0 {
		t.Fatalf("front of %d, hypervolume %v: the fixture is too small to say anything", len(front), hv)
	}
	for _, i := range front {
		if !search.Feasible(r.Complete[i].Violation) {
			t.Fatalf("trial %d is penalised and on the front", r.Complete[i].Number)
		}
	}
	k := -1
	for i := range r.Complete {
		if !search.Feasible(r.Complete[i].Violation) {
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
	r.Complete[k].Violations, r.Complete[k].Violation = []float64{0}, 0
	r.pareto()
	if !slices.Equal(r.Pareto, []int{k}) || r.Hypervolume < hv {
		t.Fatalf("the same trial made feasible: front %v (want [%d]), hypervolume %v (was %v)", r.Pareto, k, r.Hypervolume, hv)
	}
}

// An empty study has an empty history; one trial outside the reference
// box has hypervolume 0.
func TestHypervolumeHistoryEdges(t *testing.T) {
	r := scatteredReport(0, 1)
	if h := r.HypervolumeHistory(); len(h) != 0 {
		t.Fatalf("empty study: %v", h)
	}
	r = scatteredReport(1, 1)
	r.Complete[0].Objectives[0] = 250 // 2.5 × the baseline: outside
	if h := r.HypervolumeHistory(); len(h) != 1 || h[0] != 0 {
		t.Fatalf("one trial outside the box: %v", h)
	}
}

// The best-feasible line is the lowest primary value among the feasible
// trials so far: it never rises, ignores infeasible trials however good
// their value, and is NaN until the first feasible trial.
func TestBestFeasibleSoFar(t *testing.T) {
	r := scatteredReport(200, 2)
	// The first three trials miss a constraint, the second with the best
	// value of the whole study.
	for i := range 3 {
		c := &r.Complete[i]
		c.Violations, c.Violation = []float64{0.004}, 0.004
	}
	r.Complete[1].Objectives[0] = 1
	r.Complete[3].Violations, r.Complete[3].Violation = []float64{0}, 0
	best := r.BestFeasibleSoFar()
	infeasible, lowest := 0, math.Inf(1)
	for i, c := range r.Complete {
		if search.Feasible(c.Violation) {
			lowest = min(lowest, c.Objectives[0])
		} else {
			infeasible++
		}
		want := lowest
		if math.IsInf(lowest, 1) {
			want = math.NaN()
		}
		if !(best[i] == want || math.IsNaN(best[i]) && math.IsNaN(want)) || i > 3 && best[i] > best[i-1] {
			t.Fatalf("trial %d: best feasible so far %v, want %v (previous %v)", i, best[i], want, best[max(i-1, 0)])
		}
	}
	if !math.IsNaN(best[0]) || !math.IsNaN(best[2]) || math.IsNaN(best[3]) || best[199] <= 1 {
		t.Fatalf("best feasible %v … %v: NaN until trial 3, never the infeasible 1", best[:4], best[199])
	}
	// scatteredReport makes about one trial in four infeasible.
	if infeasible < 30 || infeasible > 70 {
		t.Fatalf("%d of 200 trials infeasible, want about 50", infeasible)
	}
	// A maximised objective: the line never falls.
	r.Template.Objectives[0], r.Template.Primary = r.Template.Objectives[1], 0
	for i, b := range r.BestFeasibleSoFar()[4:] {
		if prev := r.BestFeasibleSoFar()[3+i]; b < prev {
			t.Fatalf("maximised: trial %d falls from %v to %v", 4+i, prev, b)
		}
	}
}

func BenchmarkHypervolumeHistory5000(b *testing.B) {
	r := scatteredReport(5000, 3)
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
		e := search.Judge([]float64{e2e}, []float64{100}, []bool{true}, []float64{violation}, 0)
		return Result{Number: n, Objectives: []float64{e2e}, Score: e.Score(0), Violations: e.Violations, Violation: e.Violation(), Metrics: m}
	}
	r := &Report{Study: &storage.Study{Name: "s"}, Template: tpl, Baseline: base}
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

// A history is drawn on a log axis exactly when the primary values, the
// baseline's among them, are all positive and span more than a decade.
func TestPrimaryLogScale(t *testing.T) {
	r := scatteredReport(20, 3) // ratios 0.3 to 2.2 around a baseline of 100
	if r.PrimaryLogScale() {
		t.Fatalf("values within 30-220 of a baseline of 100: log scale")
	}
	for _, c := range []struct {
		value float64
		want  bool
	}{{250, false}, {1000, true}, {0, false}, {-5, false}} {
		r.Complete[7].Objectives[r.Template.Primary] = c.value
		lo := math.Inf(1)
		for _, res := range r.Complete {
			lo = math.Min(lo, res.Objectives[r.Template.Primary])
		}
		if got := r.PrimaryLogScale(); got != (c.want && lo > 0) {
			t.Errorf("one trial at %g (the lowest %g): log scale %v, want %v", c.value, lo, got, c.want)
		}
		if h := r.History(); h.LogScale != r.PrimaryLogScale() {
			t.Errorf("one trial at %g: the history document says log_scale %v", c.value, h.LogScale)
		}
	}
}
