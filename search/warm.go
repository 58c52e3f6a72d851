package search

import (
	"fmt"

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
	id, err := s.storage.CreateNewTrial(s.studyID)
	if err != nil {
		return fmt.Errorf("warm start from %s: create: %w", from, err)
	}
	if err := s.transaction(func(st goptuna.Storage) error {
		return record(st, s.space, id, -1, warmSource+from, s.space.Encode(values))
	}); err != nil {
		_ = s.Fail(id)
		return fmt.Errorf("warm start from %s: %w", from, err)
	}
	return s.TellObjectives(id, e)
}
