package storage

import (
	"errors"
	"fmt"
	"time"

	"github.com/c-bata/goptuna"
	rdb "github.com/c-bata/goptuna/rdb.v2"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// CreateNewTrial is goptuna's, with the trial's number read from the
// study's newest trial through an index instead of counting every earlier
// trial of the study (which costs more the larger the study).
func (s *samplerStorage) CreateNewTrial(studyID int) (int, error) {
	var id int
	err := s.store.transaction(func(tx *gorm.DB) (err error) {
		id, err = createTrial(tx, studyID)
		return err
	})
	return id, err
}

// createTrial inserts a RUNNING trial in goptuna's tables. goptuna numbers
// a study's trials 0, 1, 2, ... in id order and never deletes one, so the
// newest trial's number plus one is the count goptuna would take. The
// study's row is locked as goptuna locks it (PostgreSQL; SQLite's
// immediate transaction locks the file).
func createTrial(tx *gorm.DB, studyID int) (int, error) {
	var study struct {
		ID int `gorm:"column:study_id"`
	}
	if err := tx.Table("studies").Clauses(clause.Locking{Strength: "UPDATE"}).
		Where("study_id = ?", studyID).Take(&study).Error; err != nil {
		return 0, err
	}
	var last []gTrial
	if err := tx.Table("trials").Select("number").Where("study_id = ?", studyID).
		Order("trial_id DESC").Limit(1).Find(&last).Error; err != nil {
		return 0, err
	}
	now := time.Now()
	t := gTrial{StudyID: studyID, State: "RUNNING", DatetimeStart: &now}
	if len(last) > 0 {
		t.Number = last[0].Number + 1
	}
	if err := tx.Table("trials").Create(&t).Error; err != nil {
		return 0, err
	}
	return t.ID, nil
}

// trialsByStudy is the index CreateNewTrial and refresh read goptuna's
// trials through; goptuna's own schema has none on study_id.
const trialsByStudy = "CREATE INDEX IF NOT EXISTS optimize_trials_by_study ON trials (study_id, trial_id)"

// Transaction runs fn's goptuna writes as one transaction (search's
// Transactional): one commit for a proposal's trial, parameters and
// attributes, or for a result's value and state, instead of one per
// write. The goptuna.Storage fn receives is also a step of our trial
// ledger: ProposalIn, CompleteIn and ReleaseIn write our trial row in the
// same transaction, so that both ledgers change together or not at all.
// Parameters, system attributes, values and states set inside fn are
// written when fn returns, each kind in one statement; fn must not read
// them back. After a lost connection fn runs again on a new transaction.
func (s *samplerStorage) Transaction(fn func(goptuna.Storage) error) error {
	return s.store.transaction(func(tx *gorm.DB) error {
		b := &batchedWrites{Storage: rdb.NewStorage(tx), tx: tx}
		if err := fn(b); err != nil {
			return err
		}
		return b.flush()
	})
}

// batchedWrites is one Transaction: goptuna's storage on the transaction,
// with its parameters, system attributes, values and states collected.
type batchedWrites struct {
	*rdb.Storage
	tx     *gorm.DB
	params []gParam
	attrs  []gAttr
	ends   []trialEnd
}

// trialEnd is a trial's value and state as set in a transaction (nil:
// unchanged).
type trialEnd struct {
	trialID int
	value   *float64
	state   *string
}

func (b *batchedWrites) CreateNewTrial(studyID int) (int, error) { return createTrial(b.tx, studyID) }

func (b *batchedWrites) SetTrialParam(trialID int, name string, internal float64, distribution any) error {
	js, err := goptuna.DistributionToJSON(distribution)
	if err != nil {
		return err
	}
	b.params = append(b.params, gParam{TrialID: trialID, Name: name, Value: internal, Dist: string(js)})
	return nil
}

func (b *batchedWrites) SetTrialSystemAttr(trialID int, key, value string) error {
	b.attrs = append(b.attrs, gAttr{TrialID: trialID, Key: key, Value: value})
	return nil
}

func (b *batchedWrites) SetTrialValue(trialID int, value float64) error {
	b.end(trialID).value = &value
	return nil
}

func (b *batchedWrites) SetTrialState(trialID int, state goptuna.TrialState) error {
	for name, st := range goptunaStates {
		if st == state {
			b.end(trialID).state = &name
			return nil
		}
	}
	return fmt.Errorf("trial %d: unknown state %v", trialID, state)
}

func (b *batchedWrites) end(trialID int) *trialEnd {
	for i := range b.ends {
		if b.ends[i].trialID == trialID {
			return &b.ends[i]
		}
	}
	b.ends = append(b.ends, trialEnd{trialID: trialID})
	return &b.ends[len(b.ends)-1]
}

// finishedStates are goptuna's states a trial never leaves.
var finishedStates = []string{"COMPLETE", "PRUNED", "FAIL"}

// flush inserts the parameters (goptuna's SetTrialParam inserts too: a
// parameter is set once), upserts the attributes (goptuna's
// SetTrialSystemAttr replaces an existing value), and writes each trial's
// value and state in one update, refused as goptuna refuses it
// (ErrTrialCannotBeUpdated) for a finished trial.
func (b *batchedWrites) flush() error {
	if len(b.params) > 0 {
		if err := b.tx.Table("trial_params").Create(&b.params).Error; err != nil {
			return err
		}
	}
	if len(b.attrs) > 0 {
		upsert := clause.OnConflict{Columns: []clause.Column{{Name: "trial_id"}, {Name: "key"}},
			DoUpdates: clause.AssignmentColumns([]string{"value"})}
		if err := b.tx.Table("trial_system_attributes").Clauses(upsert).Create(&b.attrs).Error; err != nil {
			return err
		}
	}
	for _, e := range b.ends {
		set := map[string]any{}
		q := b.tx.Table("trials").Where("trial_id = ? AND state NOT IN ?", e.trialID, finishedStates)
		if e.value != nil {
			set["value"] = *e.value
		}
		if e.state != nil {
			set["state"] = *e.state
			if goptunaStates[*e.state].IsFinished() {
				set["datetime_complete"] = time.Now()
			}
			q = q.Where("state <> ?", *e.state)
		}
		res := q.Updates(set)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return fmt.Errorf("trial %d: %w", e.trialID, goptuna.ErrTrialCannotBeUpdated)
		}
	}
	return nil
}

// stepTx returns the transaction of a sampler step: st must be the
// goptuna.Storage that Transaction handed to its function.
func stepTx(st goptuna.Storage) (*gorm.DB, error) {
	b, ok := st.(*batchedWrites)
	if !ok {
		return nil, errors.New("a trial step outside a transaction of the study's storage")
	}
	return b.tx, nil
}

// failSamplerTrials marks FAIL, in goptuna's tables, the sampler trials
// of our trial rows ids that are still RUNNING there. The sampler trial is
// read from our rows inside the statement: a proposal committed after
// the caller read the rows is failed too.
func failSamplerTrials(tx *gorm.DB, ids []uint, now time.Time) error {
	return tx.Table("trials").
		Where("state = ? AND trial_id IN (?)", "RUNNING", tx.Model(&TrialRow{}).Select("goptuna_id").Where("id IN ?", ids)).
		Updates(map[string]any{"state": "FAIL", "datetime_complete": now}).Error
}
