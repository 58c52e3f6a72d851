package storage

import (
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"optimize/simcore/errtext"
	"optimize/simcore/metrics"
)

// ErrStudyNotFound is returned for an unknown study name.
var ErrStudyNotFound = errors.New("study not found")

// ErrStudyExists is returned by CreateStudy when the name is taken: the
// name's unique index refused the row, so another process created the
// study between the caller's check and this insert.
var ErrStudyExists = errors.New("study already exists")

// studyQuery selects a study row's columns by name, those the database
// has: never "SELECT *", whose prepared plan PostgreSQL refuses to reuse
// once a migration (by another process, or this one) has added a column.
func (s *Store) studyQuery() (*gorm.DB, error) {
	stmt := &gorm.Statement{DB: s.db}
	if err := stmt.Parse(&studyRow{}); err != nil {
		return nil, fmt.Errorf("storage %s: %s", s.Label, oneLine(err))
	}
	cols := slices.Clone(stmt.Schema.DBNames)
	later := s.columns()
	if !later.world {
		cols = slices.DeleteFunc(cols, func(c string) bool { return c == "world" })
	}
	if !later.baselineFrom {
		cols = slices.DeleteFunc(cols, func(c string) bool { return c == "baseline_from" })
	}
	if !later.robust {
		cols = slices.DeleteFunc(cols, func(c string) bool { return c == "robust" })
	}
	if !later.failure {
		cols = slices.DeleteFunc(cols, func(c string) bool { return c == "failure" })
	}
	if !later.baseFrom {
		cols = slices.DeleteFunc(cols, func(c string) bool { return c == "base_from" })
	}
	if !later.deployable {
		cols = slices.DeleteFunc(cols, func(c string) bool { return c == "deployable" })
	}
	return s.db.Select(cols), nil
}

// RecordFailure stores why the study's run stopped before its total (one
// line), or clears it (""), when a run starts again. A database migrated
// before studies recorded failures has no such column: nothing is stored,
// and the study reads as stopped.
func (s *Store) RecordFailure(studyID uint, why string) error {
	if !s.columns().failure {
		return nil
	}
	err := s.db.Model(&studyRow{}).Where("id = ?", studyID).Update("failure", why).Error
	if err != nil {
		return fmt.Errorf("storage %s: record a study's failure: %s", s.Label, oneLine(err))
	}
	return nil
}

// StudyByName loads a study.
func (s *Store) StudyByName(name string) (*Study, error) {
	var row studyRow
	q, err := s.studyQuery()
	if err != nil {
		return nil, err
	}
	err = q.Where("name = ?", name).First(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) || missingTable(err) {
		return nil, fmt.Errorf("%w: %s", ErrStudyNotFound, errtext.Quote(name))
	}
	if err != nil {
		return nil, fmt.Errorf("storage %s: %s", s.Label, oneLine(err))
	}
	st, err := row.study()
	if err != nil {
		return nil, err
	}
	return &st, nil
}

// Studies lists every study, oldest first.
func (s *Store) Studies() ([]Study, error) {
	var rows []studyRow
	q, err := s.studyQuery()
	if err != nil {
		return nil, err
	}
	if err := q.Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("storage %s: studies: %s", s.Label, oneLine(err))
	}
	out := make([]Study, len(rows))
	for i := range rows {
		var err error
		if out[i], err = rows[i].study(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// CreateStudy stores a new study (with its baseline) and sets its ID and
// creation time.
func (s *Store) CreateStudy(st *Study) error {
	row, err := st.row()
	if err != nil {
		return fmt.Errorf("study %s: %v", st.Name, err)
	}
	if err := s.db.Create(row).Error; err != nil {
		if uniqueViolation(err) {
			return fmt.Errorf("%w: %q", ErrStudyExists, st.Name)
		}
		return fmt.Errorf("storage %s: create study %s: %s", s.Label, st.Name, oneLine(err))
	}
	st.ID, st.CreatedAt = row.ID, row.CreatedAt
	return nil
}

// uniqueViolation reports whether err is a unique index refusing a row:
// PostgreSQL's SQLSTATE 23505 or SQLite's extended code
// SQLITE_CONSTRAINT_UNIQUE (2067).
func uniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23505"
	}
	var liteErr *sqlite.Error
	return errors.As(err, &liteErr) && liteErr.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE
}

// Trials returns a study's trials in number order, decoded.
func (s *Store) Trials(studyID uint) ([]Trial, error) {
	var rows []trialRow
	if err := s.db.Where("study_id = ?", studyID).Order("number").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("storage %s: trials: %s", s.Label, oneLine(err))
	}
	out := make([]Trial, len(rows))
	for i := range rows {
		var err error
		if out[i], err = rows[i].trial(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ReportTrials returns a study's trials in number order with only the
// columns a report reads for every trial: id, number, state, params,
// score, objectives, violations and seed ranges (idx_trial_report covers
// them). The mean metrics (the largest column), read for a few trials
// only, come from TrialMetrics. Fewer columns, scanned without gorm's
// reflection, load a 10,000-trial study in a third of the time a full
// Find took.
func (s *Store) ReportTrials(studyID uint) ([]Trial, error) {
	return s.reportTrials("study_id = ? ORDER BY number", studyID)
}

// BestTrial returns a study's complete trial with the lowest score, or nil.
func (s *Store) BestTrial(studyID uint) (*Trial, error) {
	best, err := s.reportTrials("study_id = ? AND state = ? ORDER BY score, number LIMIT 1", studyID, TrialComplete)
	if err != nil || len(best) == 0 {
		return nil, err
	}
	return &best[0], nil
}

// reportTrials reads the report's columns of the trials that the rest of
// a query (a condition and an order) selects.
func (s *Store) reportTrials(rest string, args ...any) ([]Trial, error) {
	cols := s.columns()
	ranges, judged := "''", "NULL, NULL"
	if cols.seedRanges {
		ranges = "seed_ranges"
	}
	if cols.violation {
		judged = "violations, violation"
	}
	rows, err := s.db.Raw("SELECT id, number, state, params, score, objectives, "+ranges+", "+judged+
		" FROM trial_rows WHERE "+rest, args...).Rows()
	if err != nil {
		return nil, fmt.Errorf("storage %s: trials: %s", s.Label, oneLine(err))
	}
	defer rows.Close()
	var out []Trial
	for rows.Next() {
		var t Trial
		var params, objectives, seedRanges, violations sql.NullString
		var violation sql.NullFloat64
		if err := rows.Scan(&t.ID, &t.Number, &t.State, &params, &t.Score, &objectives, &seedRanges, &violations, &violation); err != nil {
			return nil, fmt.Errorf("storage %s: trials: %s", s.Label, oneLine(err))
		}
		if Finished(t.State) {
			if err := t.decode(params.String, objectives.String, seedRanges.String, violations, violation); err != nil {
				return nil, err
			}
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("storage %s: trials: %s", s.Label, oneLine(err))
	}
	return out, nil
}

// decode reads a complete trial's JSON columns.
func (t *Trial) decode(params, objectives, seedRanges string, violations sql.NullString, violation sql.NullFloat64) error {
	var err error
	if t.Params, err = DecodeFloats(params); err != nil {
		return fmt.Errorf("trial %d: params: %v", t.Number, err)
	}
	if t.Objectives, err = DecodeFloats(objectives); err != nil {
		return fmt.Errorf("trial %d: objectives: %v", t.Number, err)
	}
	t.SeedRanges = decodeRanges(seedRanges, len(t.Objectives))
	if violations.Valid && violation.Valid {
		if t.Violations, err = DecodeFloats(violations.String); err != nil {
			return fmt.Errorf("trial %d: violations: %v", t.Number, err)
		}
		t.Violation, t.Judged = violation.Float64, true
	}
	return nil
}

// TrialMetrics returns one trial's mean metrics over the seeds.
func (s *Store) TrialMetrics(trialID uint) (metrics.Summary, error) {
	var t trialRow
	if err := s.db.Select("number", "metrics").Where("id = ?", trialID).Take(&t).Error; err != nil {
		return metrics.Summary{}, fmt.Errorf("storage %s: trial metrics: %s", s.Label, oneLine(err))
	}
	m, err := decodeMetrics(t.Metrics)
	if err != nil {
		return m, fmt.Errorf("trial %d: metrics: %v", t.Number, err)
	}
	return m, nil
}

// SeedMetrics returns one trial's metrics on each seed, in the order they
// were stored (the study's seed order), in the study's reference scenario.
func (s *Store) SeedMetrics(trialID uint) ([]SeedRun, error) {
	runs, err := s.ScenarioMetrics(trialID)
	return slices.DeleteFunc(runs, func(r SeedRun) bool { return r.Scenario != "" }), err
}

// ScenarioMetrics returns one trial's metrics on each seed in every
// scenario of a robust study (SeedRun.Scenario), in the order stored.
func (s *Store) ScenarioMetrics(trialID uint) ([]SeedRun, error) {
	var rows []trialSeedRow
	if err := s.seedQuery().Where("trial_id = ?", trialID).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("storage %s: per-seed metrics: %s", s.Label, oneLine(err))
	}
	return seedRuns(rows)
}

// seedQuery selects the per-seed rows' columns the database has, by name
// (as studyQuery): the scenario only once a migration has added it.
func (s *Store) seedQuery() *gorm.DB {
	cols := []string{"id", "trial_id", "seed", "metrics"}
	if s.columns().scenario {
		cols = append(cols, "scenario")
	}
	return s.db.Select(cols)
}

func seedRuns(rows []trialSeedRow) ([]SeedRun, error) {
	out := make([]SeedRun, len(rows))
	for i, r := range rows {
		m, err := decodeMetrics(r.Metrics)
		if err != nil {
			return nil, fmt.Errorf("seed %d: metrics: %v", r.Seed, err)
		}
		out[i] = SeedRun{Seed: r.Seed, Metrics: m, Scenario: r.Scenario}
	}
	return out, nil
}

// laterColumns says which of the tables' later columns a database has
// (the trials' seed ranges and violations, the studies' world and
// baseline configs): one
// migrated before they existed has not, and workers do not migrate
// (concurrent migrations race).
type laterColumns struct {
	seedRanges, violation, world, baselineFrom, robust, failure, scenario, baseFrom, deployable bool
	enqueued                                                                                    bool // the enqueued_rows table
}

// columns is asked of the database once per store, and again after a
// Migrate (which may add them; another goroutine may be reading them).
func (s *Store) columns() laterColumns {
	s.colsMu.Lock()
	defer s.colsMu.Unlock()
	if s.cols == nil {
		m := s.db.Migrator()
		s.cols = &laterColumns{seedRanges: m.HasColumn(&trialRow{}, "seed_ranges"), violation: m.HasColumn(&trialRow{}, "violation"),
			world: m.HasColumn(&studyRow{}, "world"), baselineFrom: m.HasColumn(&studyRow{}, "baseline_from"),
			robust: m.HasColumn(&studyRow{}, "robust"), failure: m.HasColumn(&studyRow{}, "failure"),
			scenario: m.HasColumn(&trialSeedRow{}, "scenario"), baseFrom: m.HasColumn(&studyRow{}, "base_from"),
			deployable: m.HasColumn(&studyRow{}, "deployable"), enqueued: m.HasTable(&enqueuedRow{})}
	}
	return *s.cols
}

// omitted lists the trial columns a database lacks, for inserts of whole
// rows.
func (c laterColumns) omitted() []string {
	var out []string
	if !c.seedRanges {
		out = append(out, "seed_ranges")
	}
	if !c.violation {
		out = append(out, "violations", "violation")
	}
	return out
}

// StudySeedMetrics returns every trial's per-seed metrics of a study, by
// trial id, in the study's reference scenario.
func (s *Store) StudySeedMetrics(studyID uint) (map[uint][]SeedRun, error) {
	var rows []trialSeedRow
	err := s.seedQuery().Where("trial_id IN (?)", s.db.Model(&trialRow{}).Select("id").Where("study_id = ?", studyID)).
		Order("id").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("storage %s: per-seed metrics: %s", s.Label, oneLine(err))
	}
	byTrial := make(map[uint][]trialSeedRow)
	for _, r := range rows {
		if r.Scenario == "" { // the reference scenario's, as SeedMetrics
			byTrial[r.TrialID] = append(byTrial[r.TrialID], r)
		}
	}
	out := make(map[uint][]SeedRun, len(byTrial))
	for id, rows := range byTrial {
		var err error
		if out[id], err = seedRuns(rows); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Simulations counts the runs a study's finished trials stored: one per
// seed and scenario run (a pruned trial's stop early).
func (s *Store) Simulations(studyID uint) (int64, error) {
	var n int64
	err := s.db.Model(&trialSeedRow{}).Where("trial_id IN (?)",
		s.db.Model(&trialRow{}).Select("id").Where("study_id = ? AND state IN ?", studyID, resultStates)).Count(&n).Error
	return n, err
}

// Counts returns how many of a study's trials are finished (complete or
// pruned) and running.
func (s *Store) Counts(studyID uint) (complete, running int64, err error) {
	if err = s.db.Model(&trialRow{}).Where("study_id = ? AND state IN ?", studyID, resultStates).Count(&complete).Error; err != nil {
		return
	}
	err = s.db.Model(&trialRow{}).Where("study_id = ? AND state = ?", studyID, TrialRunning).Count(&running).Error
	return
}

// missingTable recognises a database where no study was ever created.
func missingTable(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "no such table") || strings.Contains(msg, "does not exist")
}

// Fingerprint changes whenever anything a study's report shows changes: a
// trial starting, finishing or failing, or its evidence being updated. A
// reader may keep what it built from the study while it is unchanged.
func (s *Store) Fingerprint(studyID uint) (string, error) {
	var t struct {
		N        int64
		Running  int64
		Finished sql.NullString
		MaxID    int64
	}
	err := s.db.Model(&trialRow{}).Where("study_id = ?", studyID).
		Select("COUNT(*) AS n, SUM(CASE WHEN state = ? THEN 1 ELSE 0 END) AS running, MAX(finished_at) AS finished, MAX(id) AS max_id", TrialRunning).
		Scan(&t).Error
	if err != nil {
		return "", fmt.Errorf("storage %s: fingerprint: %s", s.Label, oneLine(err))
	}
	var evidence struct {
		Updated sql.NullString
		Runs    int64
	}
	if s.db.Migrator().HasTable(&evidenceRow{}) {
		err := s.db.Model(&evidenceRow{}).Where("study_id = ?", studyID).Select("MAX(updated_at) AS updated").Scan(&evidence).Error
		if err == nil {
			err = s.db.Model(&evidenceRunRow{}).Where("study_id = ?", studyID).Count(&evidence.Runs).Error
		}
		if err != nil {
			return "", fmt.Errorf("storage %s: fingerprint: %s", s.Label, oneLine(err))
		}
	}
	// The study's id, creation and total tell a study from another that
	// took its name after a delete.
	var st studyRow
	if err := s.db.Select("id", "created_at", "trials_total").Where("id = ?", studyID).Take(&st).Error; err != nil {
		return "", fmt.Errorf("storage %s: fingerprint: %s", s.Label, oneLine(err))
	}
	return fmt.Sprintf("%d/%d/%d/%d/%d/%s/%d/%s/%d", st.ID, st.CreatedAt.UnixNano(), st.TrialsTotal, t.N, t.Running,
		t.Finished.String, t.MaxID, evidence.Updated.String, evidence.Runs), nil
}

// Unjudged lists the names of the studies that have complete trials
// stored without their violations (by a release before they were
// stored), for a back-fill; none on a database without the column.
func (s *Store) Unjudged() ([]string, error) {
	if !s.columns().violation {
		return nil, nil
	}
	var names []string
	err := s.db.Model(&studyRow{}).Where("id IN (?)",
		s.db.Model(&trialRow{}).Select("study_id").Where("state = ? AND violation IS NULL", TrialComplete)).
		Order("id").Pluck("name", &names).Error
	if err != nil {
		return nil, fmt.Errorf("storage %s: studies to back-fill: %s", s.Label, oneLine(err))
	}
	return names, nil
}
