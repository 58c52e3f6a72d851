package storage

import (
	"time"

	"github.com/c-bata/goptuna"
	rdb "github.com/c-bata/goptuna/rdb.v2"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// CreateNewTrial is goptuna's, with the trial's number read from the
// study's newest trial through an index instead of counting every earlier
// trial of the study (which costs more the larger the study). goptuna
// numbers a study's trials 0, 1, 2, ... in id order and never deletes one,
// so the two agree. The study's row is locked as goptuna locks it
// (PostgreSQL; SQLite's immediate transaction locks the file).
func (s *samplerStorage) CreateNewTrial(studyID int) (int, error) {
	var id int
	err := s.db.Transaction(func(tx *gorm.DB) error {
		var study struct {
			ID int `gorm:"column:study_id"`
		}
		if err := tx.Table("studies").Clauses(clause.Locking{Strength: "UPDATE"}).
			Where("study_id = ?", studyID).Take(&study).Error; err != nil {
			return err
		}
		var last []gTrial
		if err := tx.Table("trials").Select("number").Where("study_id = ?", studyID).
			Order("trial_id DESC").Limit(1).Find(&last).Error; err != nil {
			return err
		}
		now := time.Now()
		t := gTrial{StudyID: studyID, State: "RUNNING", DatetimeStart: &now}
		if len(last) > 0 {
			t.Number = last[0].Number + 1
		}
		if err := tx.Table("trials").Create(&t).Error; err != nil {
			return err
		}
		id = t.ID
		return nil
	})
	return id, err
}

// trialsByStudy is the index CreateNewTrial and refresh read goptuna's
// trials through; goptuna's own schema has none on study_id.
const trialsByStudy = "CREATE INDEX IF NOT EXISTS optimize_trials_by_study ON trials (study_id, trial_id)"

// Transaction runs fn's goptuna writes as one transaction (search's
// Transactional): one commit for a proposal's parameters and attributes,
// or for a result's value and state, instead of one per write. Parameters
// and system attributes set inside fn are written when fn returns, each
// kind in one statement; fn must not read them back.
func (s *samplerStorage) Transaction(fn func(goptuna.Storage) error) error {
	return s.db.Transaction(func(tx *gorm.DB) error {
		b := &batchedWrites{Storage: rdb.NewStorage(tx)}
		if err := fn(b); err != nil {
			return err
		}
		return b.flush(tx)
	})
}

// batchedWrites collects a transaction's parameters and system attributes.
type batchedWrites struct {
	*rdb.Storage
	params []gParam
	attrs  []gAttr
}

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

// flush inserts the parameters (goptuna's SetTrialParam inserts too: a
// parameter is set once) and upserts the attributes (goptuna's
// SetTrialSystemAttr replaces an existing value).
func (b *batchedWrites) flush(tx *gorm.DB) error {
	if len(b.params) > 0 {
		if err := tx.Table("trial_params").Create(&b.params).Error; err != nil {
			return err
		}
	}
	if len(b.attrs) > 0 {
		upsert := clause.OnConflict{Columns: []clause.Column{{Name: "trial_id"}, {Name: "key"}},
			DoUpdates: clause.AssignmentColumns([]string{"value"})}
		if err := tx.Table("trial_system_attributes").Clauses(upsert).Create(&b.attrs).Error; err != nil {
			return err
		}
	}
	return nil
}
