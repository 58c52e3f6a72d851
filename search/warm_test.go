package search

import (
	"math"
	"slices"
	"testing"
)

// A warm start whose earlier study scored better than anything the new
// regime allows: once the study has trials of its own, its best trials
// rank with the earlier study's best (both at the top quantiles), so they
// enter TPE's best group; before that, the earlier scores stand.
func TestWarmScoresBecomeQuantilesPerSource(t *testing.T) {
	var complete []scored
	for i := 0; i < 20; i++ {
		complete = append(complete, scored{score: 0.2 + float64(i)/100, warm: true}) // earlier study: 0.20-0.39
	}
	complete = append(complete, scored{score: 5})
	toQuantiles(complete)
	if complete[0].score != 0.2 || complete[20].score != 5 {
		t.Fatalf("one own trial (< minModelTrials): scores changed to %v and %v", complete[0].score, complete[20].score)
	}
	for _, s := range []float64{0.9, 7, 3, 0.95} { // the new regime: every own score worse than every earlier one
		complete = append(complete, scored{score: s})
	}
	toQuantiles(complete)
	ownBest, earlierBest := complete[21].score, complete[0].score // 0.9 and 0.2
	if ownBest != 0.1 || earlierBest != 0.025 {
		t.Fatalf("quantiles: own best %v (want (0+½)/5 = 0.1), earlier best %v (want (0+½)/20 = 0.025)", ownBest, earlierBest)
	}
	best := lowest(len(complete), tpeGamma(len(complete)), func(i int) float64 { return complete[i].score })
	if !slices.Contains(best, 21) {
		t.Fatalf("TPE's best group %v (of %d) leaves out the study's own best trial 21", best, tpeGamma(len(complete)))
	}
	ranks := map[float64]bool{}
	for _, c := range complete[20:] {
		ranks[c.score] = true
	}
	if len(ranks) != 5 {
		t.Fatalf("own quantiles %v: want 5 distinct values", ranks)
	}
}

// Through a real sampler: trials carried over with Warm and the study's
// own trials reach TPE's history as quantiles within their own source,
// equal scores sharing their mean rank; a sampler without Options.Warm
// leaves every score as stored.
func TestWarmHistoryRanksEachSourceByQuantile(t *testing.T) {
	st := openStorage(t)
	space := []Param{{Name: "x", Kind: Float, Low: 0, High: 1}}
	s := newTestSampler(t, st, "warm", space, MethodTPE, 1, Options{Warm: true})
	for i, score := range []float64{0.2, 0.3} { // the earlier study: better than anything here
		if err := s.Warm("old", vector(space, float64(i)/10), ratioEvaluation(score, 0)); err != nil {
			t.Fatal(err)
		}
	}
	for n, score := range []float64{0.9, 0.9, 5} {
		id, err := s.AskFixed(n, vector(space, 0.5+float64(n)/10))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.TellObjectives(id, ratioEvaluation(score, 0)); err != nil {
			t.Fatal(err)
		}
	}
	trials, err := st.GetAllTrials(s.StudyID())
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float64, 0, 5)
	for _, h := range s.history(trials, 3) {
		got = append(got, h.score)
	}
	// earlier: ranks 0, 1 of 2; own: 0.9 and 0.9 share ranks 0-1, 5 is rank 2 of 3
	want := []float64{0.25, 0.75, 1.0 / 3, 1.0 / 3, 2.5 / 3}
	if len(got) != len(want) {
		t.Fatalf("history %v, want %v", got, want)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("history %v, want %v", got, want)
		}
	}
	cold := newTestSampler(t, st, "warm", space, MethodTPE, 1, Options{})
	for i, h := range cold.history(trials, 3) {
		if h.score != trials[i].Value {
			t.Fatalf("without Options.Warm trial %d scores %v, stored %v", i, h.score, trials[i].Value)
		}
	}
}
