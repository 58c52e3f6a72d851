package search

import (
	"math"

	"github.com/c-bata/goptuna"
)

// Pending (RUNNING) trials pretend to have scored the worst completed
// score while TPE proposes, so that parallel workers spread out instead of
// piling onto the current optimum ("constant liar"; goptuna's TPE ignores
// RUNNING trials).

// pendingAwareStorage is the storage seen by the TPE study. While a TPE
// proposal runs (tpeMu held) GetAllTrials returns a snapshot in which
// pending trials carry the lie; every other call reaches the real storage.
type pendingAwareStorage struct {
	goptuna.Storage
	snapshot []goptuna.FrozenTrial
}

func (p *pendingAwareStorage) GetAllTrials(studyID int) ([]goptuna.FrozenTrial, error) {
	if p.snapshot != nil {
		return p.snapshot, nil
	}
	return p.Storage.GetAllTrials(studyID)
}

// withPendingLies returns a copy of trials in which every RUNNING trial that
// already has all parameters of space — except the one being asked — is
// COMPLETE with the worst completed score. Trials still being written (some
// params missing) stay RUNNING: their position is not known yet.
func withPendingLies(trials []goptuna.FrozenTrial, askingID int, space []Param) []goptuna.FrozenTrial {
	out := append([]goptuna.FrozenTrial(nil), trials...)
	lie, ok := worstScore(trials)
	if !ok {
		return out
	}
	for i := range out {
		t := &out[i]
		if t.State != goptuna.TrialStateRunning || t.ID == askingID || !hasAllParams(*t, space) {
			continue
		}
		t.State = goptuna.TrialStateComplete
		t.Value = lie
	}
	return out
}

// worstScore is the highest finite COMPLETE score; with none there is
// nothing sensible to pretend, so pending trials stay invisible.
func worstScore(trials []goptuna.FrozenTrial) (float64, bool) {
	worst, found := math.Inf(-1), false
	for _, t := range trials {
		if t.State != goptuna.TrialStateComplete || math.IsNaN(t.Value) || math.IsInf(t.Value, 0) {
			continue
		}
		worst, found = math.Max(worst, t.Value), true
	}
	return worst, found
}

// hasAllParams reports whether t's proposal is fully written: every axis
// is stored, or is conditional on a stored axis whose choice leaves it
// inactive.
func hasAllParams(t goptuna.FrozenTrial, space []Param) bool {
	values := make([]float64, len(space))
	for i, p := range space {
		v, ok := t.InternalParams[p.Name]
		switch {
		case ok:
			values[i] = v
		case p.When != nil && !Active(space[:i+1], values[:i+1])[i]:
			values[i] = math.NaN()
		default:
			return false
		}
	}
	return true
}

// observed counts, per parameter, the trials TPE will learn from.
func observed(trials []goptuna.FrozenTrial, name string) int {
	n := 0
	for _, t := range trials {
		if t.State != goptuna.TrialStateComplete && t.State != goptuna.TrialStatePruned {
			continue
		}
		if _, ok := t.InternalParams[name]; ok {
			n++
		}
	}
	return n
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
