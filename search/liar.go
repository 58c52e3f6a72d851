package search

import (
	"fmt"
	"math"

	"github.com/c-bata/goptuna"
)

// Liar is the score pending (RUNNING) trials pretend to have while TPE
// proposes, so that parallel workers spread out instead of piling onto the
// current optimum ("constant liar"; goptuna's TPE ignores RUNNING trials).
type Liar string

const (
	// LiarWorst pretends pending trials scored the worst completed score:
	// TPE then steers away from them. The default.
	LiarWorst Liar = "worst"
	// LiarMean pretends they scored the mean of completed scores.
	LiarMean Liar = "mean"
	// LiarOff leaves pending trials invisible (goptuna's own behaviour).
	LiarOff Liar = "off"
)

func parseLiar(l Liar) (Liar, error) {
	switch l {
	case "":
		return LiarWorst, nil
	case LiarWorst, LiarMean, LiarOff:
		return l, nil
	}
	return "", fmt.Errorf("options.Penalty: unknown liar %q (want worst, mean or off)", string(l))
}

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
// COMPLETE with the lie value. Trials still being written (some params
// missing) stay RUNNING: their position is not known yet.
func withPendingLies(trials []goptuna.FrozenTrial, askingID int, space []Param, liar Liar) []goptuna.FrozenTrial {
	out := append([]goptuna.FrozenTrial(nil), trials...)
	lie, ok := lieValue(trials, liar)
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

// lieValue is computed from finite COMPLETE scores; with none there is
// nothing sensible to pretend, so pending trials stay invisible.
func lieValue(trials []goptuna.FrozenTrial, liar Liar) (float64, bool) {
	if liar == LiarOff {
		return 0, false
	}
	worst, sum, n := math.Inf(-1), 0.0, 0
	for _, t := range trials {
		if t.State != goptuna.TrialStateComplete || math.IsNaN(t.Value) || math.IsInf(t.Value, 0) {
			continue
		}
		worst = math.Max(worst, t.Value)
		sum += t.Value
		n++
	}
	if n == 0 {
		return 0, false
	}
	if liar == LiarMean {
		return sum / float64(n), true
	}
	return worst, true
}

func hasAllParams(t goptuna.FrozenTrial, space []Param) bool {
	for _, p := range space {
		if _, ok := t.InternalParams[p.Name]; !ok {
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
