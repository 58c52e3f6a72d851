package search

import (
	"math"

	"github.com/c-bata/goptuna"
)

// Pending (RUNNING) trials pretend to have scored the worst completed
// score while TPE proposes, so that parallel workers spread out instead of
// piling onto the current optimum ("constant liar").

// worstScore is the highest finite score among complete trials; with none
// there is nothing sensible to pretend, so pending trials stay invisible.
func worstScore(complete []scored) (float64, bool) {
	worst, found := math.Inf(-1), false
	for _, c := range complete {
		if math.IsNaN(c.score) || math.IsInf(c.score, 0) {
			continue
		}
		worst, found = math.Max(worst, c.score), true
	}
	return worst, found
}

func countCompleted(trials []goptuna.FrozenTrial) int {
	n := 0
	for _, t := range trials {
		if t.State == goptuna.TrialStateComplete {
			n++
		}
	}
	return n
}
