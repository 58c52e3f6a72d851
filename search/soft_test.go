package search

import (
	"testing"

	"github.com/c-bata/goptuna"
)

// The sampler ranks trials with a softened constraint penalty, from the
// penalty each trial recorded: a trial far ahead on its objective that
// misses a constraint by 3 points ranks ahead of a feasible trial that
// does little (0.02 + 0.3 against 0.87), whereas its stored score (the
// report's ranking) puts it far behind. Random search records nothing.
func TestSamplerRanksWithASoftenedPenalty(t *testing.T) {
	st := openStorage(t)
	space := []Param{{Name: "x", Kind: Float, Low: 0, High: 1}}
	s := newTestSampler(t, st, "soft", space, MethodTPE, 1, Options{})
	tell := func(number int, x, ratio, shortfall float64) {
		id, err := s.AskFixed(number, vector(space, x))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.TellObjectives(id, ratioEvaluation(ratio, shortfall)); err != nil {
			t.Fatal(err)
		}
	}
	tell(0, 0.1, 0.02, 0.03) // stored score 30.02
	tell(1, 0.9, 0.87, 0)    // stored score 0.87
	trials, err := st.GetAllTrials(s.StudyID())
	if err != nil {
		t.Fatal(err)
	}
	if trials[0].Value < 30 || trials[1].Value != 0.87 {
		t.Fatalf("stored scores %v and %v, want 30.02 and 0.87", trials[0].Value, trials[1].Value)
	}
	h := s.history(trials, 2)
	if len(h) != 2 || h[0].score > 0.33 || h[0].score < 0.31 || h[1].score != 0.87 {
		t.Fatalf("sampler's scores %v, want 0.32 and 0.87", []float64{h[0].score, h[1].score})
	}
	r := newTestSampler(t, st, "random", space, MethodRandom, 1, Options{})
	id, _, err := r.Ask(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.TellObjectives(id, ratioEvaluation(0.02, 0.03)); err != nil {
		t.Fatal(err)
	}
	rt, err := st.GetAllTrials(r.StudyID())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rt[0].SystemAttrs[AttrObjectives]; ok || rt[0].State != goptuna.TrialStateComplete {
		t.Fatalf("random search: attrs %v, state %v; want no objectives record, complete", rt[0].SystemAttrs, rt[0].State)
	}
}
