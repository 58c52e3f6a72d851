package search

import "testing"

// The stall counts complete trials after the first with the lowest
// score: a trial that only ties the best does not end it.
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
}
