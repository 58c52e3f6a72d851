package search

import (
	"strings"

	"github.com/c-bata/goptuna"
)

// A point whose primary ratio is known before it runs (Options.KnownRatio:
// a cost per hour is instances × TP × price, whatever the simulation
// shows) scores at least that ratio, since a score is the ratio plus
// non-negative penalties. When the ratio is no lower than the best
// feasible trial's, the point cannot become the best, and simulating it
// would spend a trial's simulations on nothing; the sampler draws again
// instead: up to maxRedraws times from its model, then up to maxRedraws
// times uniformly (the model proposes nothing cheaper, but the space may
// hold it), after which it keeps the last draw (nothing cheaper is left
// to find). Feasible
// means what it means for the report: the stored violation is within
// FeasibleTolerance.

// maxRedraws bounds the redraws of one proposal from each source.
const maxRedraws = 200

// redrawStream is the random stream of a redraw: attempt 0 is the trial's
// own stream, so a proposal with nothing to redraw is what it was without
// a bound.
func redrawStream(stream uint64, attempt int) uint64 {
	return stream + uint64(attempt)<<16
}

// bestFeasibleRatio is the lowest score among the complete feasible
// trials of this study (a feasible trial's score is its primary ratio);
// false when none is feasible, or without Options.KnownRatio. Warm-start
// trials are left out: their ratios are to another study's baseline.
// Runs with s.mu held (recordOf's cache).
func (s *Sampler) bestFeasibleRatio(trials []goptuna.FrozenTrial) (float64, bool) {
	if s.opts.KnownRatio == nil {
		return 0, false
	}
	best, found := 0.0, false
	for i := range trials {
		t := &trials[i]
		if t.State != goptuna.TrialStateComplete || strings.HasPrefix(t.SystemAttrs[AttrSource], warmSource) {
			continue
		}
		rec, ok := s.recordOf(i, t)
		if !ok || !Feasible(rec.violation()) {
			continue
		}
		if !found || t.Value < best {
			best, found = t.Value, true
		}
	}
	return best, found
}

// cannotBeat reports whether the stored vector values has a known ratio
// no lower than best.
func (s *Sampler) cannotBeat(values []float64, best float64) bool {
	ratio, ok := s.opts.KnownRatio(s.space.values(values))
	return ok && ratio >= best
}
