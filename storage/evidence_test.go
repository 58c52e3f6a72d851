package storage

import (
	"fmt"
	"testing"
	"time"

	"gorm.io/gorm/clause"

	"optimize/internal/pgtest"
)

// previousEvidenceRow is the evidence table as the previous release made
// it: one request per (study, kind), under a unique index.
type previousEvidenceRow struct {
	ID        uint   `gorm:"primaryKey"`
	StudyID   uint   `gorm:"not null;uniqueIndex:idx_evidence_kind"`
	Kind      string `gorm:"size:32;not null;uniqueIndex:idx_evidence_kind"`
	Request   string `gorm:"type:text;not null"`
	UpdatedAt time.Time
}

func (previousEvidenceRow) TableName() string { return "evidence_rows" }

// savePrevious is the previous release's SaveEvidence: an upsert that
// replaced the study's request of the same kind.
func savePrevious(t *testing.T, s *Store, studyID uint, kind, request string) {
	t.Helper()
	err := s.db.Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "study_id"}, {Name: "kind"}},
		DoUpdates: clause.AssignmentColumns([]string{"request", "updated_at"}),
	}).Create(&previousEvidenceRow{StudyID: studyID, Kind: kind, Request: request, UpdatedAt: time.Now()}).Error
	if err != nil {
		t.Fatal(err)
	}
}

// A database whose evidence the previous release wrote keeps its request
// through the migration, which drops the one-per-kind index; from then on
// every distinct request is kept, a repeated one only moves its time, and
// EvidenceRequests lists them oldest first.
func TestEvidenceRequestsAreKept(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { checkEvidenceRequestsKept(t, openTemp(t)) })
	t.Run("postgres", func(t *testing.T) {
		st, err := Open(pgtest.DB(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		if err := st.Migrate(); err != nil {
			t.Fatal(err)
		}
		checkEvidenceRequestsKept(t, st)
	})
}

func checkEvidenceRequestsKept(t *testing.T, st *Store) {
	study := newStudy(t, st, 1)
	other := study.ID + 1000 // another study's requests are not this one's
	if err := st.db.AutoMigrate(&previousEvidenceRow{}); err != nil {
		t.Fatal(err)
	}
	savePrevious(t, st, study.ID, "validation", `{"regimes":["a"]}`)
	savePrevious(t, st, study.ID, "validation", `{"regimes":["b"]}`) // replaced the first: what the previous release kept
	savePrevious(t, st, other, "validation", `{"other":true}`)
	if !st.db.Migrator().HasIndex(&evidenceRow{}, oldEvidenceIndex) {
		t.Fatalf("the fixture lacks the previous release's index %s", oldEvidenceIndex)
	}

	if err := st.MigrateEvidence(); err != nil {
		t.Fatal(err)
	}
	if st.db.Migrator().HasIndex(&evidenceRow{}, oldEvidenceIndex) {
		t.Errorf("%s is still there after the migration", oldEvidenceIndex)
	}
	if err := st.Migrate(); err != nil { // again, as `study create` does: idempotent
		t.Fatal(err)
	}
	got, err := st.EvidenceRequests(study.ID)
	if err != nil || len(got) != 1 || got[0].Request != `{"regimes":["b"]}` {
		t.Fatalf("after the migration: %+v, %v; want the previous release's one row", got, err)
	}

	for _, req := range []string{`{"pareto":true}`, `{"plain":true}`, `{"regimes":["b"]}`} {
		time.Sleep(2 * time.Millisecond) // distinct times on any clock
		if err := st.SaveEvidence(study.ID, "validation", req); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SaveEvidence(study.ID, "ablation", `{"trial":3}`); err != nil {
		t.Fatal(err)
	}
	got, err = st.EvidenceRequests(study.ID)
	if err != nil {
		t.Fatal(err)
	}
	var order string
	for i, q := range got {
		order += fmt.Sprintf("%s %s; ", q.Kind, q.Request)
		if i > 0 && q.RanAt.Before(got[i-1].RanAt) {
			t.Errorf("request %d ran at %v, before the one listed ahead of it (%v)", i, q.RanAt, got[i-1].RanAt)
		}
	}
	// The repeated regimes request moved to just before the ablation; none twice.
	want := `validation {"pareto":true}; validation {"plain":true}; validation {"regimes":["b"]}; ablation {"trial":3}; `
	if order != want {
		t.Errorf("requests:\n %s\nwant\n %s", order, want)
	}
	if others, _ := st.EvidenceRequests(other); len(others) != 1 {
		t.Errorf("the other study has %d requests, want its 1", len(others))
	}
}

// A database without the evidence tables (made before they existed) has
// no requests, and its Migrate leaves it so.
func TestEvidenceRequestsWithoutTables(t *testing.T) {
	st := openTemp(t)
	if got, err := st.EvidenceRequests(1); err != nil || len(got) != 0 {
		t.Errorf("EvidenceRequests = %v, %v; want none", got, err)
	}
	if st.db.Migrator().HasTable(&evidenceRow{}) {
		t.Errorf("Migrate made the evidence table; only MigrateEvidence does")
	}
}
