package search

import (
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/c-bata/goptuna"
)

// bestAfter runs n sequential trials of method on the noise-free bowl and
// returns the best value seen.
func bestAfter(t *testing.T, method Method, seed int64, n int) float64 {
	t.Helper()
	s := newTestSampler(t, goptuna.NewInMemoryStorage(), "bowl", bowlSpace(), method, seed, Options{StartupTrials: 5})
	best := math.Inf(1)
	for _, x := range runStudy(t, s, 0, n, bowl) {
		best = math.Min(best, bowl(x))
	}
	return best
}

// On a smooth 5-D bowl the Gaussian process, which models how the value
// changes along each axis, gets much closer to the optimum in 25 trials
// than TPE, which only sees which trials were among the best. Over 30
// seeds: on 5 the margin held by luck while gp's proposals went to the
// box's edges (gp 4.87 against TPE 5.39 over 30; gpPriorMean).
func TestGPBeatsTPEOnTheBowlAt25Trials(t *testing.T) {
	var gp, tpe []float64
	for seed := int64(1); seed <= 30; seed++ {
		gp = append(gp, bestAfter(t, MethodGP, seed, 25))
		tpe = append(tpe, bestAfter(t, MethodTPE, seed, 25))
	}
	t.Logf("best after 25 trials, median of 30 seeds: gp %.3f, tpe %.3f", median(gp), median(tpe))
	if median(gp) > 0.5*median(tpe) {
		t.Errorf("gp's median best %.3f is not under half TPE's %.3f", median(gp), median(tpe))
	}
}

// A proposal depends only on the seed, the trial number and the history:
// two studies with the same seed propose the same 15 vectors.
func TestGPRepeatsWithTheSameSeed(t *testing.T) {
	run := func() [][]float64 {
		s := newTestSampler(t, goptuna.NewInMemoryStorage(), "mixed", mixedSpace(), MethodGP, 7, Options{StartupTrials: 4})
		return runStudy(t, s, 0, 15, mixedObjective)
	}
	a, b := run(), run()
	for i := range a {
		if !slices.EqualFunc(a[i], b[i], func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) }) {
			t.Fatalf("trial %d: %v then %v", i, a[i], b[i])
		}
	}
}

// Over a conditional space every gp proposal is a valid vector: the
// parameters whose condition fails are inactive, the others in range.
func TestGPProposalsRespectConditions(t *testing.T) {
	space := Space{
		{Name: "mode", Kind: Categorical, Choices: []string{"a", "b", "c"}},
		{Name: "x", Kind: Float, Low: 0, High: 1, When: &When{Param: "mode", Choices: []string{"a"}}},
		{Name: "k", Kind: Int, Low: 1, High: 9, When: &When{Param: "mode", Choices: []string{"b", "c"}}},
		{Name: "y", Kind: LogFloat, Low: 0.01, High: 1},
	}
	objective := func(v []float64) float64 {
		switch v[0] {
		case 0:
			return sq(v[1]-0.3) + math.Abs(math.Log10(v[3])+1)
		case 1:
			return 0.1*sq(v[2]-7) + math.Abs(math.Log10(v[3])+1)
		}
		return 2
	}
	s := newTestSampler(t, goptuna.NewInMemoryStorage(), "cond", space, MethodGP, 3, Options{StartupTrials: 4})
	best := math.Inf(1)
	for i, x := range runStudy(t, s, 0, 25, objective) {
		if err := space.validateValues(space.values(x)); err != nil {
			t.Fatalf("trial %d: %v: %v", i, x, err)
		}
		best = math.Min(best, objective(x))
	}
	if best > 0.2 {
		t.Errorf("best %.3f after 25 trials, want under 0.2 (the optimum is 0)", best)
	}
}

// With trials still running (several workers), each gp proposal believes
// the running ones at its own prediction: four proposals asked before any
// of them is told are four different vectors, each away from the others.
func TestGPSpreadsProposalsOverRunningTrials(t *testing.T) {
	s := newTestSampler(t, goptuna.NewInMemoryStorage(), "bowl", bowlSpace(), MethodGP, 5, Options{StartupTrials: 5})
	runStudy(t, s, 0, 12, bowl)
	var running [][]float64
	for number := 12; number < 16; number++ {
		_, values, err := s.Ask(number)
		if err != nil {
			t.Fatal(err)
		}
		x := s.space.Encode(values)
		for _, r := range running {
			if slices.Equal(r, x) {
				t.Fatalf("trial %d proposes %v, already running", number, x)
			}
		}
		running = append(running, x)
	}
}

// A KnownRatio that knows no point (a latency primary: studies set one
// for every minimised primary) leaves gp's proposals exactly as without
// one; only a known ratio (a cost) switches to modelling the penalty.
func TestGPIgnoresAKnownRatioThatKnowsNothing(t *testing.T) {
	run := func(opts Options) [][]float64 {
		s := newTestSampler(t, goptuna.NewInMemoryStorage(), "bowl", bowlSpace(), MethodGP, 9, opts)
		return runStudy(t, s, 0, 12, bowl)
	}
	plain := run(Options{StartupTrials: 5})
	unknown := run(Options{StartupTrials: 5, KnownRatio: func([]Value) (float64, bool) { return 0, false }})
	for i := range plain {
		if !slices.Equal(plain[i], unknown[i]) {
			t.Fatalf("trial %d: %v without KnownRatio, %v with one that knows nothing", i, plain[i], unknown[i])
		}
	}
}

// The process sees the scores' order only: equal scores get one target,
// a better score a lower one, and a huge constraint penalty is no further
// from the rest than the next rank.
func TestGPTargetsAreNormalScoresOfTheOrder(t *testing.T) {
	scores := []float64{0.3, 31.2, 0.25, 0.3, 0.4}
	y := gpTargets(scores)
	if y[0] != y[3] {
		t.Errorf("equal scores 0.3: targets %.3f and %.3f", y[0], y[3])
	}
	if !(y[2] < y[0] && y[0] < y[4] && y[4] < y[1]) {
		t.Errorf("targets %v do not follow the scores' order %v", y, scores)
	}
	if gap, next := y[1]-y[4], y[4]-y[0]; gap > 1.5*next {
		t.Errorf("the penalised score is %.2f above the next, the next %.2f above its own: a size reached the process", gap, next)
	}
}

// Past gpHistory trials the process models the historyBest best and the
// newest others only: an old trial outside the best changes nothing in a
// proposal, while a new one does (the control that the comparison can
// tell proposals apart).
func TestGPModelsTheBestAndTheNewestPastItsBound(t *testing.T) {
	s := newTestSampler(t, goptuna.NewInMemoryStorage(), "bowl", bowlSpace(), MethodGP, 3, Options{StartupTrials: 5})
	rng := rand.New(rand.NewSource(11))
	history := make([]scored, gpHistory+30)
	for i := range history {
		v := drawUniformVector(s.space, rng)
		params := map[string]float64{}
		for d, p := range s.space {
			params[p.Name] = p.toInternal(v[d])
		}
		history[i] = scored{params: params, score: bowl(v)}
	}
	propose := func(changed int) []float64 {
		h := slices.Clone(history)
		if changed >= 0 {
			h[changed].score = slices.Max(scoresOf(history)) + 1 // the worst: never among the best
		}
		return s.proposeGP(len(h), 0, h)
	}
	plain := propose(-1)
	old, newest := -1, len(history)-1
	for i := range history[:len(history)-gpHistory+historyBest] {
		if !slices.Contains(lowestScores(history, historyBest), i) {
			old = i
			break
		}
	}
	if got := propose(old); !slices.Equal(got, plain) {
		t.Errorf("trial %d, old and not among the best, moved the proposal: %v against %v", old, got, plain)
	}
	if got := propose(newest); slices.Equal(got, plain) {
		t.Errorf("the newest trial's score does not reach the proposal (%v): the comparison cannot tell", got)
	}
}

func scoresOf(h []scored) []float64 {
	out := make([]float64, len(h))
	for i := range h {
		out[i] = h[i].score
	}
	return out
}

// lowestScores is the positions of the n lowest scores.
func lowestScores(h []scored, n int) []int {
	return lowest(len(h), n, func(i int) float64 { return h[i].score })
}
