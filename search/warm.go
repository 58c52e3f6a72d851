package search

import (
	"fmt"
	"math"

	"github.com/c-bata/goptuna"
)

// warmSource begins the AttrSource of a trial carried over from an earlier
// study; the study's name follows.
const warmSource = "warm:"

// Warm records a finished trial of an earlier study in this one's history
// (a warm start): TPE, and the multi-objective sampler, learn from it, by
// its quantile among the earlier study's trials once this study has trials
// of its own (toQuantiles), but it is not one of the study's trials. values
// follow the space (Inactive() where inactive); e as in TellObjectives.
func (s *Sampler) Warm(from string, values []Value, e Evaluation) error {
	if err := s.space.validateValues(values); err != nil {
		return fmt.Errorf("warm start from %s: %w", from, err)
	}
	score, objectives := s.result(e)
	if math.IsNaN(score) || math.IsInf(score, 0) {
		return fmt.Errorf("warm start from %s: score must be finite, got %g", from, score)
	}
	// One transaction: a carried-over trial is complete or absent, never
	// left running (the liar would count it as pending for good).
	err := s.transaction(func(st goptuna.Storage) error {
		id, err := st.CreateNewTrial(s.studyID)
		if err != nil {
			return fmt.Errorf("create: %w", err)
		}
		if err := record(st, s.space, id, -1, warmSource+from, s.space.Encode(values)); err != nil {
			return err
		}
		return tell(st, id, score, objectives)
	})
	if err != nil {
		return fmt.Errorf("warm start from %s: %w", from, err)
	}
	return nil
}
