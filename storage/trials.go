package storage

import (
	"cmp"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/c-bata/goptuna"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"optimize/simcore/metrics"
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

// Trials returns a study's trials in number order, every column.
func (s *Store) Trials(studyID uint) ([]TrialRow, error) {
	var out []TrialRow
	err := s.DB.Where("study_id = ?", studyID).Order("number").Find(&out).Error
	return out, err
}

// Trial is one trial as a report reads it, its columns decoded.
type Trial struct {
	ID         uint
	Number     int
	State      string
	Params     []float64 // aligned with the template's parameters; NaN where inactive
	Score      float64
	Objectives []float64 // the template's objectives, means over the seeds; NaN where missing
	// Judged says whether the row holds its constraint violations: rows
	// written before they were stored do not, until back-filled.
	Judged     bool
	Violations []float64    // each constraint's shortfall (NaN: not measured)
	Violation  float64      // their total (search.Evaluation.Violation)
	SeedRanges [][2]float64 // each objective's range over the seeds; nil when not stored
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
	rows, err := s.DB.Raw("SELECT id, number, state, params, score, objectives, "+ranges+", "+judged+
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
		if t.State == TrialComplete {
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

var unbracket = strings.NewReplacer("[", "", "]", "")

// decodeRanges reads the seed_ranges column ([[min,max],...], one pair per
// objective); nil when it is empty or does not fit.
func decodeRanges(js string, objectives int) [][2]float64 {
	js = strings.TrimSpace(js)
	if len(js) < 2 || js[0] != '[' || js[len(js)-1] != ']' {
		return nil
	}
	flat, err := DecodeFloats("[" + unbracket.Replace(js[1:len(js)-1]) + "]")
	if err != nil || len(flat) != 2*objectives {
		return nil
	}
	out := make([][2]float64, objectives)
	for i := range out {
		out[i] = [2]float64{flat[2*i], flat[2*i+1]}
	}
	return out
}

// TrialMetrics returns one trial's mean metrics (JSON metrics.Summary).
func (s *Store) TrialMetrics(trialID uint) (string, error) {
	var t TrialRow
	if err := s.DB.Select("metrics").Where("id = ?", trialID).Take(&t).Error; err != nil {
		return "", fmt.Errorf("storage %s: trial metrics: %s", s.Label, oneLine(err))
	}
	return t.Metrics, nil
}

// TrialSeedRows returns one trial's per-seed rows.
func (s *Store) TrialSeedRows(trialID uint) ([]TrialSeedRow, error) {
	var rows []TrialSeedRow
	if err := s.DB.Where("trial_id = ?", trialID).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("storage %s: per-seed metrics: %s", s.Label, oneLine(err))
	}
	return rows, nil
}

// trialColumns says which of the trial table's later columns a database
// has: one migrated before they existed has not, and workers do not
// migrate (concurrent migrations race).
type trialColumns struct{ seedRanges, violation bool }

// columns is asked once per store.
func (s *Store) columns() trialColumns {
	s.columnsOnce.Do(func() {
		m := s.DB.Migrator()
		s.cols = trialColumns{seedRanges: m.HasColumn(&TrialRow{}, "seed_ranges"), violation: m.HasColumn(&TrialRow{}, "violation")}
	})
	return s.cols
}

// SeedRows returns the per-seed rows of a study's trials by trial id.
func (s *Store) SeedRows(studyID uint) (map[uint][]TrialSeedRow, error) {
	var rows []TrialSeedRow
	err := s.DB.Where("trial_id IN (?)", s.DB.Model(&TrialRow{}).Select("id").Where("study_id = ?", studyID)).
		Order("id").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("storage %s: per-seed metrics: %s", s.Label, oneLine(err))
	}
	out := make(map[uint][]TrialSeedRow)
	for _, r := range rows {
		out[r.TrialID] = append(out[r.TrialID], r)
	}
	return out, nil
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
	// Failed are the dead workers' trials this claim marked failed, here
	// and in the sampler's tables, in the claim's transaction.
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
//
// A read-only look comes first (idle): when it finds nothing to claim or
// rescue, no write transaction is taken.
func (s *Store) ClaimTrial(study *StudyRow, worker string, lease time.Duration, isAlive func(owner string) bool) (Claim, error) {
	done, idle, err := s.idle(study.ID, lease, isAlive)
	if err != nil {
		return Claim{}, fmt.Errorf("storage %s: claim a trial: %s", s.Label, oneLine(err))
	}
	if done || idle {
		return Claim{Done: done}, nil
	}
	var claim Claim
	err = s.transaction(func(tx *gorm.DB) error {
		claim = Claim{} // a run again after a lost connection starts afresh
		var locked StudyRow
		q := tx
		if s.Postgres {
			q = q.Clauses(clause.Locking{Strength: "UPDATE"})
		}
		if err := q.First(&locked, study.ID).Error; err != nil {
			return err
		}
		// Sorted here, not by ORDER BY number: that would lead SQLite's
		// planner to walk the whole study by idx_study_number instead of
		// the few running rows by idx_study_state_score.
		var running []TrialRow
		if err := tx.Where("study_id = ? AND state = ?", study.ID, TrialRunning).Find(&running).Error; err != nil {
			return err
		}
		slices.SortFunc(running, func(a, b TrialRow) int { return cmp.Compare(a.Number, b.Number) })
		now := time.Now()
		live := 0
		var rescue *TrialRow
		for i := range running {
			t := &running[i]
			if !leaseLost(t, now, lease, isAlive) {
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
		if len(claim.Failed) > 0 {
			ids := make([]uint, len(claim.Failed))
			for i, f := range claim.Failed {
				ids[i] = f.ID
			}
			// No longer a pending point for the sampler's liar.
			if err := failSamplerTrials(tx, ids, now); err != nil {
				return err
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
			// A trial failed earlier whose parameters were never re-run
			// (the lowest-numbered; failed trials are few, so they are
			// read by idx_study_state_score and the lowest picked here).
			// NOT EXISTS goes through idx_study_rescue: a NOT IN list of
			// every rescue would be read whole for each claim.
			var orphans []TrialRow
			err := tx.Where("study_id = ? AND state = ? AND params <> '' AND NOT EXISTS (?)", study.ID, TrialFailed,
				tx.Table("trial_rows AS r").Select("1").Where("r.study_id = trial_rows.study_id AND r.rescue_of = trial_rows.number")).
				Find(&orphans).Error
			if err != nil {
				return err
			}
			for i := range orphans {
				if rescue == nil || orphans[i].Number < rescue.Number {
					rescue = &orphans[i]
				}
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

// idle is ClaimTrial's read-only first look, so that idle workers polling
// for work do not take the write lock (on SQLite, the whole file) 20 times
// a second. done: the study has its total; idle: the rest of the total is
// running under live leases, so a claim would change nothing. The
// transaction still decides every claim; reads racing with writers only
// delay one to the next poll (complete counts never drop).
func (s *Store) idle(studyID uint, lease time.Duration, isAlive func(owner string) bool) (done, idle bool, err error) {
	var study StudyRow
	if err := s.DB.Select("trials_total").First(&study, studyID).Error; err != nil {
		return false, false, err
	}
	var running []TrialRow
	if err := s.DB.Select("worker", "heartbeat_at").Where("study_id = ? AND state = ?", studyID, TrialRunning).Find(&running).Error; err != nil {
		return false, false, err
	}
	now := time.Now()
	for i := range running {
		if leaseLost(&running[i], now, lease, isAlive) {
			return false, false, nil // to be rescued: the transaction's work
		}
	}
	var complete int64
	if err := s.DB.Model(&TrialRow{}).Where("study_id = ? AND state = ?", studyID, TrialComplete).Count(&complete).Error; err != nil {
		return false, false, err
	}
	done = int(complete) >= study.TrialsTotal
	return done, !done && int(complete)+len(running) >= study.TrialsTotal, nil
}

// leaseLost reports whether a running trial's worker is gone: no heartbeat
// for lease, or an owner that isAlive says is dead.
func leaseLost(t *TrialRow, now time.Time, lease time.Duration, isAlive func(owner string) bool) bool {
	return now.Sub(t.HeartbeatAt) > lease || (isAlive != nil && !isAlive(t.Worker))
}

// Heartbeat renews a running trial's lease.
func (s *Store) Heartbeat(t *TrialRow) error {
	return s.DB.Model(&TrialRow{}).Where("id = ? AND state = ?", t.ID, TrialRunning).
		Update("heartbeat_at", time.Now()).Error
}

// SetProposal records the sampler's trial id and parameters.
func (s *Store) SetProposal(t *TrialRow, goptunaID int, params []float64) error {
	return s.transaction(func(tx *gorm.DB) error { return setProposal(tx, t, goptunaID, params) })
}

// ProposalIn records the sampler's trial id and parameters in the
// sampler's transaction st (search's Ask hook), so that the proposal is in
// both ledgers or in neither. ErrLeaseLost: t is no longer running under
// its claim, or has a proposal already (an earlier run of this
// transaction committed although its connection was lost); nothing of
// this one is kept.
func (s *Store) ProposalIn(st goptuna.Storage, t *TrialRow, goptunaID int, params []float64) error {
	tx, err := stepTx(st)
	if err != nil {
		return err
	}
	return setProposal(tx, t, goptunaID, params)
}

func setProposal(tx *gorm.DB, t *TrialRow, goptunaID int, params []float64) error {
	encoded := EncodeParams(params)
	res := tx.Model(&TrialRow{}).Where("id = ? AND state = ? AND goptuna_id = 0", t.ID, TrialRunning).
		Updates(map[string]any{"goptuna_id": goptunaID, "params": encoded})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != 1 {
		return fmt.Errorf("trial %d: %w", t.Number, ErrLeaseLost)
	}
	t.GoptunaID, t.Params = goptunaID, encoded
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
}

// Complete stores a finished trial with its per-seed metrics in one
// transaction. A trial rescued meanwhile is not recorded twice: that is
// ErrLeaseLost; any other error is the database's, or a value that
// cannot be stored. A NaN objective or violation is stored as null (JSON
// has no NaN), a NaN total violation as a full shortfall of 1.
func (s *Store) Complete(t *TrialRow, o Outcome) error {
	err := s.transaction(func(tx *gorm.DB) error { return s.complete(tx, t, o) })
	return s.completeError(t, err)
}

// CompleteIn is Complete in the sampler's transaction st (search's Tell
// hook): our row and the sampler's result are written together or not at
// all. After a lost connection the transaction runs again; when an earlier
// run committed unseen, this one finds the trial complete already and
// answers ErrLeaseLost, so the result is still recorded once. Database
// errors come back as they are, for the transaction's retry to read.
func (s *Store) CompleteIn(st goptuna.Storage, t *TrialRow, o Outcome) error {
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

func (s *Store) complete(tx *gorm.DB, t *TrialRow, o Outcome) error {
	if len(o.Seeds) != len(o.PerSeed) {
		return fmt.Errorf("trial %d: %d per-seed results for %d seeds", t.Number, len(o.PerSeed), len(o.Seeds))
	}
	m, err := encodeMetrics(o.Mean)
	if err != nil {
		return fmt.Errorf("trial %d: metrics: %v", t.Number, err)
	}
	set := map[string]any{"state": TrialComplete, "score": o.Score, "objectives": EncodeFloats(o.Objectives), "metrics": m, "finished_at": time.Now()}
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
	rows := make([]TrialSeedRow, len(o.Seeds))
	for i, seed := range o.Seeds {
		js, err := encodeMetrics(o.PerSeed[i])
		if err != nil {
			return fmt.Errorf("trial %d: seed %d: metrics: %v", t.Number, seed, err)
		}
		rows[i] = TrialSeedRow{TrialID: t.ID, Seed: seed, Metrics: js}
	}
	res := tx.Model(&TrialRow{}).Where("id = ? AND state = ?", t.ID, TrialRunning).Updates(set)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != 1 {
		return ErrLeaseLost
	}
	if len(rows) == 0 {
		return nil
	}
	return tx.Create(&rows).Error
}

func (s *Store) completeError(t *TrialRow, err error) error {
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
func (s *Store) Release(t *TrialRow) error {
	return s.transaction(func(tx *gorm.DB) error { return release(tx, t) })
}

// ReleaseIn is Release in the sampler's transaction st (search's Fail
// hook): the sampler's trial fails as ours is given back.
func (s *Store) ReleaseIn(st goptuna.Storage, t *TrialRow) error {
	tx, err := stepTx(st)
	if err != nil {
		return err
	}
	return release(tx, t)
}

func release(tx *gorm.DB, t *TrialRow) error {
	return tx.Where("id = ? AND state = ?", t.ID, TrialRunning).Delete(&TrialRow{}).Error
}

// DeleteStudy removes a study and all its trials (ours; goptuna's study is
// removed by the caller through goptuna).
func (s *Store) DeleteStudy(st *StudyRow) error {
	return s.transaction(func(tx *gorm.DB) error {
		if err := deleteEvidence(tx, st.ID); err != nil {
			return err
		}
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

// EncodeParams is the params column's JSON: a number per parameter, null
// for an inactive one (NaN in memory; JSON has no NaN).
func EncodeParams(values []float64) string { return EncodeFloats(values) }

// EncodeFloats is a flat JSON array of numbers, null for NaN (JSON has no
// NaN) — the params, objectives and violations columns.
func EncodeFloats(values []float64) string {
	out := make([]*float64, len(values))
	for i := range values {
		if !math.IsNaN(values[i]) {
			out[i] = &values[i]
		}
	}
	js, _ := json.Marshal(out)
	return string(js)
}

// DecodeParams reads the params column: null is NaN (inactive).
func DecodeParams(js []byte) ([]float64, error) { return DecodeFloats(string(js)) }

// DecodeFloats reads a flat JSON array of numbers and nulls (null is NaN)
// — the params, objectives and seed-range columns — without the
// reflection of encoding/json, which was a quarter of loading a
// 10,000-trial study.
func DecodeFloats(js string) ([]float64, error) {
	s := strings.TrimSpace(js)
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return nil, fmt.Errorf("not a JSON array: %.40q", js)
	}
	s = strings.TrimSpace(s[1 : len(s)-1])
	if s == "" {
		return []float64{}, nil
	}
	out := make([]float64, 0, strings.Count(s, ",")+1)
	for field := range strings.SplitSeq(s, ",") {
		field = strings.TrimSpace(field)
		if field == "null" {
			out = append(out, math.NaN())
			continue
		}
		v, err := strconv.ParseFloat(field, 64)
		if err != nil {
			return nil, fmt.Errorf("not a number in a JSON array: %.40q", field)
		}
		out = append(out, v)
	}
	return out, nil
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
	err := s.DB.Model(&TrialRow{}).Where("study_id = ?", studyID).
		Select("COUNT(*) AS n, SUM(CASE WHEN state = ? THEN 1 ELSE 0 END) AS running, MAX(finished_at) AS finished, MAX(id) AS max_id", TrialRunning).
		Scan(&t).Error
	if err != nil {
		return "", fmt.Errorf("storage %s: fingerprint: %s", s.Label, oneLine(err))
	}
	var evidence struct {
		Updated sql.NullString
		Runs    int64
	}
	if s.DB.Migrator().HasTable(&EvidenceRow{}) {
		err := s.DB.Model(&EvidenceRow{}).Where("study_id = ?", studyID).Select("MAX(updated_at) AS updated").Scan(&evidence).Error
		if err == nil {
			err = s.DB.Model(&EvidenceRunRow{}).Where("study_id = ?", studyID).Count(&evidence.Runs).Error
		}
		if err != nil {
			return "", fmt.Errorf("storage %s: fingerprint: %s", s.Label, oneLine(err))
		}
	}
	// The study's id, creation and total tell a study from another that
	// took its name after a delete.
	var st StudyRow
	if err := s.DB.Select("id", "created_at", "trials_total").Where("id = ?", studyID).Take(&st).Error; err != nil {
		return "", fmt.Errorf("storage %s: fingerprint: %s", s.Label, oneLine(err))
	}
	return fmt.Sprintf("%d/%d/%d/%d/%d/%s/%d/%s/%d", st.ID, st.CreatedAt.UnixNano(), st.TrialsTotal, t.N, t.Running,
		t.Finished.String, t.MaxID, evidence.Updated.String, evidence.Runs), nil
}

// encodeRanges is the seed_ranges column's JSON; a NaN bound is null.
func encodeRanges(ranges [][2]float64) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, r := range ranges {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(EncodeFloats(r[:]))
	}
	b.WriteByte(']')
	return b.String()
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
	err := s.DB.Transaction(func(tx *gorm.DB) error {
		for _, j := range js {
			err := tx.Model(&TrialRow{}).Where("id = ?", j.TrialID).
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

// Unjudged lists the names of the studies that have complete trials
// stored without their violations (by a release before they were
// stored), for a back-fill; none on a database without the column.
func (s *Store) Unjudged() ([]string, error) {
	if !s.columns().violation {
		return nil, nil
	}
	var names []string
	err := s.DB.Model(&StudyRow{}).Where("id IN (?)",
		s.DB.Model(&TrialRow{}).Select("study_id").Where("state = ? AND violation IS NULL", TrialComplete)).
		Order("id").Pluck("name", &names).Error
	if err != nil {
		return nil, fmt.Errorf("storage %s: studies to back-fill: %s", s.Label, oneLine(err))
	}
	return names, nil
}
