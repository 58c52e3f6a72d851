package storage

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"optimize/simcore/metrics"
)

// evidenceRow is what a study was last asked to prove of one kind
// ("validation", "ablation"): the request as JSON, so that `show` can
// rebuild the report from the runs.
type evidenceRow struct {
	ID        uint   `gorm:"primaryKey"`
	StudyID   uint   `gorm:"not null;uniqueIndex:idx_evidence_kind"`
	Kind      string `gorm:"size:32;not null;uniqueIndex:idx_evidence_kind"`
	Request   string `gorm:"type:text;not null"`
	UpdatedAt time.Time
}

// evidenceRunRow is one simulation done for the evidence: one
// configuration (named by Key: what was run, under which regime) on one
// seed. (study, key, seed) is unique, so an interrupted validation resumes
// where it stopped and two processes never store a run twice.
type evidenceRunRow struct {
	ID      uint   `gorm:"primaryKey"`
	StudyID uint   `gorm:"not null;uniqueIndex:idx_evidence_run"`
	Key     string `gorm:"size:512;not null;uniqueIndex:idx_evidence_run"`
	Seed    int64  `gorm:"not null;uniqueIndex:idx_evidence_run"`
	Metrics string `gorm:"type:text;not null"` // JSON metrics.Summary
}

// MigrateEvidence creates the evidence tables (idempotent), for databases
// made before they existed.
func (s *Store) MigrateEvidence() error {
	if err := s.db.AutoMigrate(&evidenceRow{}, &evidenceRunRow{}); err != nil {
		return fmt.Errorf("storage %s: migrate evidence: %s", s.Label, oneLine(err))
	}
	return nil
}

// SaveEvidence records the latest request of a kind for a study.
func (s *Store) SaveEvidence(studyID uint, kind, request string) error {
	row := evidenceRow{StudyID: studyID, Kind: kind, Request: request, UpdatedAt: time.Now()}
	err := s.db.Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "study_id"}, {Name: "kind"}},
		DoUpdates: clause.AssignmentColumns([]string{"request", "updated_at"}),
	}).Create(&row).Error
	if err != nil {
		return fmt.Errorf("storage %s: save %s: %s", s.Label, kind, oneLine(err))
	}
	return nil
}

// Evidence returns the latest request of a kind, or "" when there is none
// (also in a database that predates the evidence tables).
func (s *Store) Evidence(studyID uint, kind string) (string, error) {
	var row evidenceRow
	err := s.db.Where("study_id = ? AND kind = ?", studyID, kind).Take(&row).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound), missingTable(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("storage %s: read %s: %s", s.Label, kind, oneLine(err))
	}
	return row.Request, nil
}

// RunKey names one stored evidence run.
type RunKey struct {
	Key  string
	Seed int64
}

// EvidenceRuns returns the stored runs whose key starts with prefix: their
// metrics by key and seed.
func (s *Store) EvidenceRuns(studyID uint, prefix string) (map[RunKey]metrics.Summary, error) {
	var rows []evidenceRunRow
	err := s.db.Where("study_id = ?", studyID).Find(&rows).Error
	if missingTable(err) {
		return map[RunKey]metrics.Summary{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("storage %s: read evidence runs: %s", s.Label, oneLine(err))
	}
	out := make(map[RunKey]metrics.Summary, len(rows))
	for _, r := range rows {
		if strings.HasPrefix(r.Key, prefix) {
			m, err := decodeMetrics(r.Metrics)
			if err != nil {
				return nil, fmt.Errorf("evidence run %s seed %d: metrics: %v", r.Key, r.Seed, err)
			}
			out[RunKey{r.Key, r.Seed}] = m
		}
	}
	return out, nil
}

// PutEvidenceRun stores one run; a run already stored (by another
// process) is kept as it is: the simulator is deterministic, so both are
// the same.
func (s *Store) PutEvidenceRun(studyID uint, key string, seed int64, m metrics.Summary) error {
	js, err := encodeMetrics(m)
	if err != nil {
		return fmt.Errorf("evidence run %s seed %d: metrics: %v", key, seed, err)
	}
	row := evidenceRunRow{StudyID: studyID, Key: key, Seed: seed, Metrics: js}
	if err := s.db.Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error; err != nil {
		return fmt.Errorf("storage %s: store evidence run: %s", s.Label, oneLine(err))
	}
	return nil
}

// deleteEvidence removes a study's evidence (inside DeleteStudy's
// transaction); a database without the tables has none. The tables are
// looked up first: in PostgreSQL a failed statement aborts the transaction.
func deleteEvidence(tx *gorm.DB, studyID uint) error {
	for _, model := range []any{&evidenceRunRow{}, &evidenceRow{}} {
		if !tx.Migrator().HasTable(model) {
			continue
		}
		if err := tx.Where("study_id = ?", studyID).Delete(model).Error; err != nil {
			return err
		}
	}
	return nil
}
