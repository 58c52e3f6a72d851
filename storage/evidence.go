package storage

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"optimize/simcore/metrics"
)

// evidenceRow is one request for evidence of a kind ("validation",
// "ablation") that a study was given: the request as JSON, so that `show`
// can rebuild the report from the runs, and when it last ran. Every
// distinct request is kept (a later `validate --pareto` does not erase an
// earlier `validate --regimes`); the same request run again only moves its
// time.
type evidenceRow struct {
	ID        uint   `gorm:"primaryKey"`
	StudyID   uint   `gorm:"not null;index:idx_evidence_study_kind"`
	Kind      string `gorm:"size:32;not null;index:idx_evidence_study_kind"`
	Request   string `gorm:"type:text;not null"`
	UpdatedAt time.Time
}

// oldEvidenceIndex is the unique (study_id, kind) index of databases made
// when a study kept one request per kind: it would refuse a second one.
const oldEvidenceIndex = "idx_evidence_kind"

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
// made before they existed, and drops oldEvidenceIndex where an older
// release made it (its rows stay).
func (s *Store) MigrateEvidence() error {
	return s.migrating(func(db *gorm.DB) error {
		if err := s.dropOldEvidenceIndex(db); err != nil {
			return err
		}
		if err := db.AutoMigrate(&evidenceRow{}, &evidenceRunRow{}); err != nil {
			return fmt.Errorf("storage %s: migrate evidence: %s", s.Label, oneLine(err))
		}
		return nil
	})
}

// dropOldEvidenceIndex drops oldEvidenceIndex if the database has it.
func (s *Store) dropOldEvidenceIndex(db *gorm.DB) error {
	m := db.Migrator()
	if !m.HasTable(&evidenceRow{}) || !m.HasIndex(&evidenceRow{}, oldEvidenceIndex) {
		return nil
	}
	if err := m.DropIndex(&evidenceRow{}, oldEvidenceIndex); err != nil {
		return fmt.Errorf("storage %s: migrate evidence: drop %s: %s", s.Label, oldEvidenceIndex, oneLine(err))
	}
	return nil
}

// EvidenceRequest is one stored request for evidence: its kind
// ("validation", "ablation"), the request as its caller encoded it, and
// when it last ran.
type EvidenceRequest struct {
	Kind    string
	Request string
	RanAt   time.Time
}

// SaveEvidence records that a study was asked for evidence of a kind, now:
// a request it was given before (the same kind and text) has its time
// moved, any other is added beside the earlier ones.
func (s *Store) SaveEvidence(studyID uint, kind, request string) error {
	now := time.Now()
	res := s.db.Model(&evidenceRow{}).Where("study_id = ? AND kind = ? AND request = ?", studyID, kind, request).
		Update("updated_at", now)
	err := res.Error
	if err == nil && res.RowsAffected == 0 {
		err = s.db.Create(&evidenceRow{StudyID: studyID, Kind: kind, Request: request, UpdatedAt: now}).Error
	}
	if err != nil {
		return fmt.Errorf("storage %s: save %s: %s", s.Label, kind, oneLine(err))
	}
	return nil
}

// EvidenceRequests returns every request the study was given, of every
// kind, oldest first (by when it last ran, then as stored); none in a
// database that predates the evidence tables.
func (s *Store) EvidenceRequests(studyID uint) ([]EvidenceRequest, error) {
	var rows []evidenceRow
	err := s.db.Where("study_id = ?", studyID).Order("id").Find(&rows).Error
	switch {
	case missingTable(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("storage %s: read evidence requests: %s", s.Label, oneLine(err))
	}
	out := make([]EvidenceRequest, len(rows))
	for i, r := range rows {
		out[i] = EvidenceRequest{Kind: r.Kind, Request: r.Request, RanAt: r.UpdatedAt}
	}
	// Stable: requests stored within one clock tick keep their order.
	slices.SortStableFunc(out, func(a, b EvidenceRequest) int { return a.RanAt.Compare(b.RanAt) })
	return out, nil
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
