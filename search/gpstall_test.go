package search

import "testing"

// The stall counts the study's own complete trials after the first with
// the lowest score: a trial that only ties the best does not end it.
func TestStalledCountsTrialsSinceTheBest(t *testing.T) {
	history := func(scores ...float64) []scored {
		var out []scored
		for _, s := range scores {
			out = append(out, scored{score: s})
		}
		return out
	}
	tail := func(n int, s float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = s
		}
		return out
	}
	for _, c := range []struct {
		name   string
		scores []float64
		want   bool
	}{
		{"best then gpStallTrials worse", append([]float64{0.3}, tail(gpStallTrials, 0.5)...), true},
		{"best then one fewer", append([]float64{0.3}, tail(gpStallTrials-1, 0.5)...), false},
		{"best then ties", append([]float64{0.3}, tail(gpStallTrials, 0.3)...), true},
		{"a better trial last", append(append([]float64{0.3}, tail(gpStallTrials, 0.5)...), 0.29), false},
		{"no trials", nil, false},
	} {
		if got := stalled(history(c.scores...)); got != c.want {
			t.Errorf("%s: stalled %v, want %v", c.name, got, c.want)
		}
	}
	// A warm start's trials (first, as Warm stores them) do not count: the
	// earlier study's best, ahead of every own trial, is not this study's.
	warm := history(append([]float64{0.1}, tail(2*gpStallTrials, 0.5)...)...)
	for i := range warm {
		warm[i].warm = true
	}
	own := history(append([]float64{0.3}, tail(gpStallTrials-1, 0.5)...)...)
	if stalled(append(warm, own...)) {
		t.Errorf("a warm start's best and %d own trials after the own best: stalled", gpStallTrials-1)
	}
	if !stalled(append(append(warm, own...), scored{score: 0.5})) {
		t.Errorf("%d own trials after the own best, after a warm start: not stalled", gpStallTrials)
	}
}
