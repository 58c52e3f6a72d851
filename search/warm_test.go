package search

import (
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
