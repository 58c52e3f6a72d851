// Writing a trial's proposal and result, giving a claimed trial back,
// deleting a study, and back-filling older rows' violations.

package storage

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/c-bata/goptuna"
	"gorm.io/gorm"

	"optimize/simcore/metrics"
)

// SetProposal records the sampler's trial id and parameters.
func (s *Store) SetProposal(t *Trial, goptunaID int, params []float64) error {
	return s.transaction(func(tx *gorm.DB) error { return setProposal(tx, t, goptunaID, params) })
}

// ProposalIn records the sampler's trial id and parameters in the
// sampler's transaction st (search's Ask hook), so that the proposal is in
// both ledgers or in neither. ErrLeaseLost: t is no longer running under
// its claim, or has a proposal already (an earlier run of this
// transaction committed although its connection was lost); nothing of
// this one is kept.
func (s *Store) ProposalIn(st goptuna.Storage, t *Trial, goptunaID int, params []float64) error {
	tx, err := stepTx(st)
	if err != nil {
		return err
	}
	return setProposal(tx, t, goptunaID, params)
}

func setProposal(tx *gorm.DB, t *Trial, goptunaID int, params []float64) error {
	encoded := EncodeParams(params)
	res := tx.Model(&trialRow{}).Where("id = ? AND state = ? AND goptuna_id = 0", t.ID, TrialRunning).
		Updates(map[string]any{"goptuna_id": goptunaID, "params": encoded})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != 1 {
		return fmt.Errorf("trial %d: %w", t.Number, ErrLeaseLost)
	}
	t.GoptunaID, t.Params = goptunaID, slices.Clone(params)
	return nil
}

// ErrLeaseLost is Complete's answer for a trial that is no longer running
// under its claim: its lease expired and another worker rescued it, so
// the rescuer's result counts instead.
var ErrLeaseLost = errors.New("lost its lease before it finished")

// Outcome is a finished trial's result: its score, objectives and
// constraint violations (search.Evaluation), each objective's lowest and
// highest value over the seeds, and its metrics, mean and per seed
// (PerSeed[i] ran on Seeds[i]).
type Outcome struct {
	Score      float64
	Objectives []float64
	Violations []float64
	Violation  float64
	Ranges     [][2]float64
	Mean       metrics.Summary
	Seeds      []int64
	PerSeed    []metrics.Summary
	// Scenarios are a robust study's runs in its other scenarios, each on
	// Seeds (PerSeed is its reference scenario's); nil for other studies.
	Scenarios []ScenarioRuns
	// Pruned stores the trial as TrialPruned: it ran only some scenarios
	// (PerSeed is empty when the reference was not among them, and Mean
	// is then the zero Summary), and its score and objectives are the
	// bounds those scenarios give.
	Pruned bool
}

// ScenarioRuns is a trial's runs in one scenario of a robust study, one
// per seed in the study's seed order.
type ScenarioRuns struct {
	Scenario string
	PerSeed  []metrics.Summary
}

// Complete stores a finished trial with its per-seed metrics in one
// transaction. A trial rescued meanwhile is not recorded twice: that is
// ErrLeaseLost; any other error is the database's, or a value that
// cannot be stored. A NaN objective or violation is stored as null (JSON
// has no NaN), a NaN total violation as a full shortfall of 1.
func (s *Store) Complete(t *Trial, o Outcome) error {
	err := s.transaction(func(tx *gorm.DB) error { return s.complete(tx, t, o) })
	return s.completeError(t, err)
}

// CompleteIn is Complete in the sampler's transaction st (search's Tell
// hook): our row and the sampler's result are written together or not at
// all. After a lost connection the transaction runs again; when an earlier
// run committed unseen, this one finds the trial complete already and
// answers ErrLeaseLost, so the result is still recorded once. Database
// errors come back as they are, for the transaction's retry to read.
func (s *Store) CompleteIn(st goptuna.Storage, t *Trial, o Outcome) error {
	tx, err := stepTx(st)
	if err != nil {
		return err
	}
	err = s.complete(tx, t, o)
	if errors.Is(err, ErrLeaseLost) {
		return fmt.Errorf("trial %d: %w", t.Number, err)
	}
	return err
}

func (s *Store) complete(tx *gorm.DB, t *Trial, o Outcome) error {
	if len(o.Seeds) != len(o.PerSeed) && !(o.Pruned && len(o.PerSeed) == 0) {
		return fmt.Errorf("trial %d: %d per-seed results for %d seeds", t.Number, len(o.PerSeed), len(o.Seeds))
	}
	m, err := encodeMetrics(o.Mean)
	if err != nil {
		return fmt.Errorf("trial %d: metrics: %v", t.Number, err)
	}
	state := TrialComplete
	if o.Pruned {
		state = TrialPruned
	}
	set := map[string]any{"state": state, "score": o.Score, "objectives": EncodeFloats(o.Objectives), "metrics": m, "finished_at": time.Now()}
	cols := s.columns()
	if cols.seedRanges {
		set["seed_ranges"] = encodeRanges(o.Ranges)
	}
	if cols.violation {
		total := o.Violation
		if math.IsNaN(total) {
			total = 1
		}
		set["violations"], set["violation"] = EncodeFloats(o.Violations), total
	}
	var rows []trialSeedRow
	for _, sc := range append([]ScenarioRuns{{PerSeed: o.PerSeed}}, o.Scenarios...) {
		if sc.Scenario == "" && len(sc.PerSeed) == 0 && o.Pruned {
			continue // pruned before its reference scenario ran
		}
		if len(sc.PerSeed) != len(o.Seeds) {
			return fmt.Errorf("trial %d: scenario %s: %d per-seed results for %d seeds", t.Number, sc.Scenario, len(sc.PerSeed), len(o.Seeds))
		}
		if sc.Scenario != "" && !cols.scenario {
			return fmt.Errorf("trial %d: the database has no scenario column: run `study create` or `study resume` once to migrate it", t.Number)
		}
		for i, seed := range o.Seeds {
			js, err := encodeMetrics(sc.PerSeed[i])
			if err != nil {
				return fmt.Errorf("trial %d: seed %d: metrics: %v", t.Number, seed, err)
			}
			rows = append(rows, trialSeedRow{TrialID: t.ID, Seed: seed, Metrics: js, Scenario: sc.Scenario})
		}
	}
	res := tx.Model(&trialRow{}).Where("id = ? AND state = ?", t.ID, TrialRunning).Updates(set)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != 1 {
		return ErrLeaseLost
	}
	if len(rows) == 0 {
		return nil
	}
	if !cols.scenario {
		tx = tx.Omit("scenario")
	}
	return tx.Create(&rows).Error
}

func (s *Store) completeError(t *Trial, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrLeaseLost):
		return fmt.Errorf("trial %d: %w", t.Number, ErrLeaseLost)
	}
	return fmt.Errorf("storage %s: complete trial %d: %s", s.Label, t.Number, oneLine(err))
}

// Release gives a claimed trial back unfinished (clean shutdown): it is
// deleted so that its number is not counted and its parameters are
// proposed afresh.
func (s *Store) Release(t *Trial) error {
	return s.transaction(func(tx *gorm.DB) error { return release(tx, t) })
}

// ReleaseIn is Release in the sampler's transaction st (search's Fail
// hook): the sampler's trial fails as ours is given back.
func (s *Store) ReleaseIn(st goptuna.Storage, t *Trial) error {
	tx, err := stepTx(st)
	if err != nil {
		return err
	}
	return release(tx, t)
}

func release(tx *gorm.DB, t *Trial) error {
	return tx.Where("id = ? AND state = ?", t.ID, TrialRunning).Delete(&trialRow{}).Error
}

// DeleteStudy removes a study and all its trials (ours; goptuna's study is
// removed by the caller through goptuna).
func (s *Store) DeleteStudy(st *Study) error {
	return s.transaction(func(tx *gorm.DB) error {
		if err := deleteEvidence(tx, st.ID); err != nil {
			return err
		}
		if err := tx.Where("trial_id IN (?)", tx.Model(&trialRow{}).Select("id").Where("study_id = ?", st.ID)).Delete(&trialSeedRow{}).Error; err != nil {
			return err
		}
		if err := tx.Where("study_id = ?", st.ID).Delete(&trialRow{}).Error; err != nil {
			return err
		}
		if s.columns().enqueued {
			if err := tx.Where("study_id = ?", st.ID).Delete(&enqueuedRow{}).Error; err != nil {
				return err
			}
		}
		return tx.Delete(&studyRow{}, st.ID).Error
	})
}

// Judgement is one trial's constraint violations, per constraint and in
// total (see Outcome).
type Judgement struct {
	TrialID    uint
	Violations []float64
	Violation  float64
}

// StoreViolations back-fills the violations of trials written before they
// were stored, in one transaction; it needs a migrated database.
func (s *Store) StoreViolations(js []Judgement) error {
	err := s.transaction(func(tx *gorm.DB) error {
		for _, j := range js {
			err := tx.Model(&trialRow{}).Where("id = ?", j.TrialID).
				Updates(map[string]any{"violations": EncodeFloats(j.Violations), "violation": j.Violation}).Error
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("storage %s: back-fill violations: %s", s.Label, oneLine(err))
	}
	return nil
}
