package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// ErrStudyNotFound is returned for an unknown study name.
var ErrStudyNotFound = errors.New("study not found")

// StudyByName loads a study.
func (s *Store) StudyByName(name string) (*StudyRow, error) {
	var st StudyRow
	err := s.DB.Where("name = ?", name).First(&st).Error
	if errors.Is(err, gorm.ErrRecordNotFound) || missingTable(err) {
		return nil, fmt.Errorf("%w: %q", ErrStudyNotFound, name)
	}
	if err != nil {
		return nil, fmt.Errorf("storage %s: %s", s.Label, oneLine(err))
	}
	return &st, nil
}

// Studies lists every study, oldest first.
func (s *Store) Studies() ([]StudyRow, error) {
	var out []StudyRow
	err := s.DB.Order("id").Find(&out).Error
	return out, err
}

// Trials returns a study's trials in number order.
func (s *Store) Trials(studyID uint) ([]TrialRow, error) {
	var out []TrialRow
	err := s.DB.Where("study_id = ?", studyID).Order("number").Find(&out).Error
	return out, err
}

// Counts returns how many of a study's trials are complete and running.
func (s *Store) Counts(studyID uint) (complete, running int64, err error) {
	if err = s.DB.Model(&TrialRow{}).Where("study_id = ? AND state = ?", studyID, TrialComplete).Count(&complete).Error; err != nil {
		return
	}
	err = s.DB.Model(&TrialRow{}).Where("study_id = ? AND state = ?", studyID, TrialRunning).Count(&running).Error
	return
}

// Claim is the outcome of ClaimTrial.
type Claim struct {
	Trial  *TrialRow // the new running trial, nil when none may start
	Rescue []byte    // JSON params to re-run (a dead worker's trial), nil for a fresh proposal
	Done   bool      // the study has its total of complete trials
	// Failed are the dead workers' trials this claim marked failed: the
	// caller fails them in the sampler too.
	Failed []TrialRow
}

// ClaimTrial starts the study's next trial for worker, inside one
// transaction that serialises claims (a row lock on the study in
// PostgreSQL; SQLite's immediate transactions lock the whole file):
//   - running trials whose lease expired (no heartbeat for lease, or an
//     owner that isAlive says is dead) become failed, and the first of
//     them is re-run under the new trial's number;
//   - a trial starts only while complete + running < total, so the study
//     total is never exceeded;
//   - numbers are unique and increasing.
func (s *Store) ClaimTrial(study *StudyRow, worker string, lease time.Duration, isAlive func(owner string) bool) (Claim, error) {
	var claim Claim
	err := s.DB.Transaction(func(tx *gorm.DB) error {
		var locked StudyRow
		q := tx
		if s.Postgres {
			q = q.Clauses(clause.Locking{Strength: "UPDATE"})
		}
		if err := q.First(&locked, study.ID).Error; err != nil {
			return err
		}
		var running []TrialRow
		if err := tx.Where("study_id = ? AND state = ?", study.ID, TrialRunning).Order("number").Find(&running).Error; err != nil {
			return err
		}
		now := time.Now()
		live := 0
		var rescue *TrialRow
		for i := range running {
			t := &running[i]
			if now.Sub(t.HeartbeatAt) <= lease && (isAlive == nil || isAlive(t.Worker)) {
				live++
				continue
			}
			// Only while still running: on PostgreSQL the owner's Complete
			// may commit between the read above and this write.
			res := tx.Model(&TrialRow{}).Where("id = ? AND state = ?", t.ID, TrialRunning).
				Updates(map[string]any{"state": TrialFailed, "finished_at": now})
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected == 0 {
				live++ // it completed meanwhile: counted like a live trial
				continue
			}
			claim.Failed = append(claim.Failed, *t)
			if rescue == nil && t.Params != "" {
				rescue = t // one that died before its proposal ran nothing
			}
		}
		var complete int64
		if err := tx.Model(&TrialRow{}).Where("study_id = ? AND state = ?", study.ID, TrialComplete).Count(&complete).Error; err != nil {
			return err
		}
		if int(complete) >= locked.TrialsTotal {
			claim.Done = true
			return nil
		}
		if int(complete)+live >= locked.TrialsTotal {
			return nil // the rest is running elsewhere
		}
		if rescue == nil {
			// A trial failed earlier whose parameters were never re-run.
			var orphan TrialRow
			err := tx.Where("study_id = ? AND state = ? AND params <> '' AND number NOT IN (?)", study.ID, TrialFailed,
				tx.Model(&TrialRow{}).Select("rescue_of").Where("study_id = ?", study.ID)).
				Order("number").First(&orphan).Error
			if err == nil {
				rescue = &orphan
			} else if !errors.Is(err, gorm.ErrRecordNotFound) {
				return err
			}
		}
		var last struct{ N *int }
		if err := tx.Model(&TrialRow{}).Select("MAX(number) AS n").Where("study_id = ?", study.ID).Scan(&last).Error; err != nil {
			return err
		}
		next := 0
		if last.N != nil {
			next = *last.N + 1
		}
		t := &TrialRow{StudyID: study.ID, Number: next, State: TrialRunning, Worker: worker,
			HeartbeatAt: now, StartedAt: now, RescueOf: -1}
		if rescue != nil {
			t.RescueOf = rescue.Number
			t.Params = rescue.Params
			claim.Rescue = []byte(rescue.Params)
		}
		if err := tx.Create(t).Error; err != nil {
			return err
		}
		claim.Trial = t
		return nil
	})
	if err != nil {
		return Claim{}, fmt.Errorf("storage %s: claim a trial: %s", s.Label, oneLine(err))
	}
	return claim, nil
}

// Heartbeat renews a running trial's lease.
func (s *Store) Heartbeat(t *TrialRow) error {
	return s.DB.Model(&TrialRow{}).Where("id = ? AND state = ?", t.ID, TrialRunning).
		Update("heartbeat_at", time.Now()).Error
}

// SetProposal records the sampler's trial id and parameters.
func (s *Store) SetProposal(t *TrialRow, goptunaID int, params []float64) error {
	js, _ := json.Marshal(params)
	t.GoptunaID, t.Params = goptunaID, string(js)
	return s.DB.Model(&TrialRow{}).Where("id = ?", t.ID).
		Updates(map[string]any{"goptuna_id": goptunaID, "params": t.Params}).Error
}

// Complete stores a finished trial with its per-seed metrics in one
// transaction; it fails if the trial lost its lease meanwhile (someone
// rescued it), so a result is never recorded twice.
func (s *Store) Complete(t *TrialRow, score float64, objectives []float64, mean any, seeds []int64, perSeed []any) error {
	obj, _ := json.Marshal(objectives)
	m, _ := json.Marshal(mean)
	now := time.Now()
	return s.DB.Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&TrialRow{}).Where("id = ? AND state = ?", t.ID, TrialRunning).Updates(map[string]any{
			"state": TrialComplete, "score": score, "objectives": string(obj), "metrics": string(m), "finished_at": now,
		})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return fmt.Errorf("trial %d lost its lease before it finished", t.Number)
		}
		for i, seed := range seeds {
			js, _ := json.Marshal(perSeed[i])
			if err := tx.Create(&TrialSeedRow{TrialID: t.ID, Seed: seed, Metrics: string(js)}).Error; err != nil {
				return err
			}
		}
		return nil
	})
}

// Release gives a claimed trial back unfinished (clean shutdown): it is
// deleted so that its number is not counted and its parameters are
// proposed afresh.
func (s *Store) Release(t *TrialRow) error {
	return s.DB.Where("id = ? AND state = ?", t.ID, TrialRunning).Delete(&TrialRow{}).Error
}

// DeleteStudy removes a study and all its trials (ours; goptuna's study is
// removed by the caller through goptuna).
func (s *Store) DeleteStudy(st *StudyRow) error {
	return s.DB.Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("trial_id IN (?)", tx.Model(&TrialRow{}).Select("id").Where("study_id = ?", st.ID)).Delete(&TrialSeedRow{}).Error; err != nil {
			return err
		}
		if err := tx.Where("study_id = ?", st.ID).Delete(&TrialRow{}).Error; err != nil {
			return err
		}
		return tx.Delete(&StudyRow{}, st.ID).Error
	})
}

// missingTable recognises a database where no study was ever created.
func missingTable(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "no such table") || strings.Contains(msg, "does not exist")
}
