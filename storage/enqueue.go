// Enqueued vectors: parameter vectors from outside a study (study enqueue,
// Optuna's enqueue_trial) waiting to run as its next trials.

package storage

import (
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// enqueuedRow is one vector waiting in its study's queue: claimed, oldest
// first, by the next claim that has room under the study's total, and
// deleted by that claim in its transaction, so that it runs exactly once.
type enqueuedRow struct {
	ID      uint   `gorm:"primaryKey"`
	StudyID uint   `gorm:"not null;index"`
	Params  string `gorm:"type:text;not null"` // as trialRow.Params: JSON []float64, null inactive
	// CreatedAt is when it was enqueued.
	CreatedAt time.Time
}

// Queued is what Enqueue did: the vector's place in the study's queue
// (1: the next trial a worker claims, after any rescue) and the study's
// total of trials after it.
type Queued struct {
	Position    int
	TrialsTotal int
}

// Enqueue stores params (a trial's stored vector: Space.Encode's, NaN
// inactive) as one of the study's next trials. An enqueued vector is one
// of the study's total, as Optuna's enqueue_trial is one of n_trials:
// it runs in place of a proposal. When the study has no trial left for it
// — finished, or the rest of its total running or enqueued — the total
// grows by one, so that every enqueued vector runs. Nothing runs here:
// the study's workers (or study resume) claim it. Needs a migrated
// database (Migrate).
func (s *Store) Enqueue(study *Study, params []float64) (Queued, error) {
	var q Queued
	err := s.transaction(func(tx *gorm.DB) error {
		var locked studyRow
		lock := tx
		if s.Postgres {
			lock = lock.Clauses(clause.Locking{Strength: "UPDATE"})
		}
		if err := lock.Select("id", "trials_total").First(&locked, study.ID).Error; err != nil {
			return err
		}
		var used, queued int64
		if err := tx.Model(&trialRow{}).Where("study_id = ? AND state IN ?", study.ID, append([]string{TrialRunning}, resultStates...)).Count(&used).Error; err != nil {
			return err
		}
		if err := tx.Model(&enqueuedRow{}).Where("study_id = ?", study.ID).Count(&queued).Error; err != nil {
			return err
		}
		if err := tx.Create(&enqueuedRow{StudyID: study.ID, Params: EncodeParams(params)}).Error; err != nil {
			return err
		}
		q = Queued{Position: int(queued) + 1, TrialsTotal: locked.TrialsTotal}
		if need := int(used + queued + 1); need > locked.TrialsTotal {
			q.TrialsTotal = need
			return tx.Model(&studyRow{}).Where("id = ?", study.ID).Update("trials_total", need).Error
		}
		return nil
	})
	if err != nil {
		return Queued{}, fmt.Errorf("storage %s: enqueue a trial: %s", s.Label, oneLine(err))
	}
	study.TrialsTotal = q.TrialsTotal
	return q, nil
}

// Enqueued returns the vectors waiting in the study's queue, oldest first
// (none in a database migrated before queues existed).
func (s *Store) Enqueued(studyID uint) ([][]float64, error) {
	if !s.columns().enqueued {
		return nil, nil
	}
	var rows []enqueuedRow
	if err := s.db.Where("study_id = ?", studyID).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("storage %s: enqueued trials: %s", s.Label, oneLine(err))
	}
	out := make([][]float64, len(rows))
	for i, r := range rows {
		v, err := DecodeFloats(r.Params)
		if err != nil {
			return nil, fmt.Errorf("storage %s: enqueued trial %d: %v", s.Label, i+1, err)
		}
		out[i] = v
	}
	return out, nil
}

// dequeue takes the oldest vector of the study's queue inside a claim's
// transaction: its row is deleted there, so the trial the claim creates
// is its only run. nil when the queue is empty or the database has none.
func (s *Store) dequeue(tx *gorm.DB, studyID uint) (*enqueuedRow, error) {
	if !s.columns().enqueued {
		return nil, nil
	}
	var rows []enqueuedRow
	if err := tx.Where("study_id = ?", studyID).Order("id").Limit(1).Find(&rows).Error; err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, nil
	}
	if err := tx.Delete(&enqueuedRow{}, rows[0].ID).Error; err != nil {
		return nil, err
	}
	return &rows[0], nil
}
