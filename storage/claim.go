// Claiming trials: the lease a worker holds on a running trial, its rescue
// when the worker dies, and the study total that no claim exceeds.

package storage

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Claim is the outcome of ClaimTrial.
type Claim struct {
	Trial *Trial // the new running trial, nil when none may start
	// Rescue is the stored parameter vector to run (a dead worker's
	// trial re-run, or an enqueued vector; NaN where inactive), nil for a
	// fresh proposal.
	Rescue []float64
	// Enqueued: Rescue is a vector from the study's queue (Enqueue).
	Enqueued bool
	Done     bool // the study has its total of complete trials
	// Failed are the dead workers' trials this claim marked failed, here
	// and in the sampler's tables, in the claim's transaction.
	Failed []Trial
}

// ClaimTrial starts the study's next trial for worker, inside one
// transaction that serialises claims (a row lock on the study in
// PostgreSQL; SQLite's immediate transactions lock the whole file):
//   - running trials whose lease expired (no heartbeat for lease, or an
//     owner that isAlive says is dead) become failed, and the first of
//     them is re-run under the new trial's number;
//   - a trial starts only while complete + running < total, so the study
//     total is never exceeded;
//   - numbers are unique and increasing;
//   - with no trial to rescue, the oldest enqueued vector (Enqueue), if
//     any, runs before the sampler proposes.
//
// A read-only look comes first (idle): when it finds nothing to claim or
// rescue, no write transaction is taken.
func (s *Store) ClaimTrial(study *Study, worker string, lease time.Duration, isAlive func(owner string) bool) (Claim, error) {
	done, idle, err := s.idle(study.ID, lease, isAlive)
	if err != nil {
		return Claim{}, fmt.Errorf("storage %s: claim a trial: %s", s.Label, oneLine(err))
	}
	if done || idle {
		return Claim{Done: done}, nil
	}
	var claim Claim
	stamp := claimStamp()
	err = s.transaction(func(tx *gorm.DB) (err error) {
		claim, err = s.claimIn(tx, study, worker, stamp, lease, isAlive)
		return err
	})
	if err != nil {
		return Claim{}, fmt.Errorf("storage %s: claim a trial: %s", s.Label, oneLine(err))
	}
	return claim, nil
}

// claimStamps makes every claim of this process a distinct start time.
var claimStamps struct {
	sync.Mutex
	last time.Time
}

// claimStamp is a claim's start time, to the microsecond both databases
// store, later than every earlier claim's in this process: with the
// worker's identity it names the trial a claim created.
func claimStamp() time.Time {
	claimStamps.Lock()
	defer claimStamps.Unlock()
	now := time.Now().Round(0).Truncate(time.Microsecond)
	if !now.After(claimStamps.last) {
		now = claimStamps.last.Add(time.Microsecond)
	}
	claimStamps.last = now
	return now
}

// claimIn is one run of ClaimTrial's transaction. The transaction runs
// again after a lost connection, and a run whose commit reached the
// database unseen must not claim a second trial: the first would stay
// running with no worker heartbeating it, be failed when its lease ran
// out, and the study would end with a failed trial and one past its
// numbers (seen when PostgreSQL stopped at once in the middle of a
// claim). So a run first looks for the running trial this worker started
// at stamp, and takes it when an earlier run made it.
func (s *Store) claimIn(tx *gorm.DB, study *Study, worker string, stamp time.Time, lease time.Duration, isAlive func(owner string) bool) (claim Claim, err error) {
	err = func() error {
		var locked studyRow
		q := tx
		if s.Postgres {
			q = q.Clauses(clause.Locking{Strength: "UPDATE"})
		}
		// The columns by name: a "SELECT *" plan prepared before another
		// process's migration added a column is refused afterwards.
		if err := q.Select("id", "trials_total").First(&locked, study.ID).Error; err != nil {
			return err
		}
		// Sorted here, not by ORDER BY number: that would lead SQLite's
		// planner to walk the whole study by idx_study_number instead of
		// the few running rows by idx_study_state_score.
		var running []trialRow
		if err := tx.Where("study_id = ? AND state = ?", study.ID, TrialRunning).Find(&running).Error; err != nil {
			return err
		}
		slices.SortFunc(running, func(a, b trialRow) int { return cmp.Compare(a.Number, b.Number) })
		for i := range running {
			if t := &running[i]; t.Worker == worker && t.StartedAt.Equal(stamp) {
				claim, err = adopted(t)
				return err
			}
		}
		now := time.Now()
		live := 0
		var rescue *trialRow
		for i := range running {
			t := &running[i]
			if !leaseLost(t, now, lease, isAlive) {
				live++
				continue
			}
			// Only while still running: on PostgreSQL the owner's Complete
			// may commit between the read above and this write.
			res := tx.Model(&trialRow{}).Where("id = ? AND state = ?", t.ID, TrialRunning).
				Updates(map[string]any{"state": TrialFailed, "finished_at": now})
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected == 0 {
				live++ // it completed meanwhile: counted like a live trial
				continue
			}
			failed, err := t.trial()
			if err != nil {
				return err
			}
			claim.Failed = append(claim.Failed, failed)
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
		if err := tx.Model(&trialRow{}).Where("study_id = ? AND state IN ?", study.ID, resultStates).Count(&complete).Error; err != nil {
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
			var orphans []trialRow
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
		var queued *enqueuedRow
		if rescue == nil {
			if queued, err = s.dequeue(tx, study.ID); err != nil {
				return err
			}
		}
		var last struct{ N *int }
		if err := tx.Model(&trialRow{}).Select("MAX(number) AS n").Where("study_id = ?", study.ID).Scan(&last).Error; err != nil {
			return err
		}
		next := 0
		if last.N != nil {
			next = *last.N + 1
		}
		t := &trialRow{StudyID: study.ID, Number: next, State: TrialRunning, Worker: worker,
			HeartbeatAt: now, StartedAt: stamp, RescueOf: -1}
		if rescue != nil {
			t.RescueOf = rescue.Number
			t.Params = rescue.Params
			var err error
			if claim.Rescue, err = DecodeFloats(rescue.Params); err != nil {
				return fmt.Errorf("trial %d: params: %v", rescue.Number, err)
			}
		}
		if queued != nil {
			t.Params = queued.Params
			var err error
			if claim.Rescue, err = DecodeFloats(queued.Params); err != nil {
				return fmt.Errorf("enqueued trial: params: %v", err)
			}
			claim.Enqueued = true
		}
		// A database migrated before the later columns existed (workers do
		// not migrate) takes the row without them.
		if err := tx.Omit(s.columns().omitted()...).Create(t).Error; err != nil {
			return err
		}
		claim.Trial = &Trial{ID: t.ID, Number: t.Number, State: t.State, Worker: t.Worker, RescueOf: t.RescueOf}
		return nil
	}()
	return claim, err
}

// adopted is the claim of a trial an earlier run of the claim committed:
// the trial, and the parameters it runs when it is a rescue or an
// enqueued vector (a fresh proposal's are written after the claim). The
// trials that run marked failed are failed already (in both ledgers).
func adopted(t *trialRow) (Claim, error) {
	claim := Claim{Trial: &Trial{ID: t.ID, Number: t.Number, State: t.State, Worker: t.Worker, RescueOf: t.RescueOf}}
	if t.RescueOf >= 0 || t.Params != "" {
		claim.Enqueued = t.RescueOf < 0
		var err error
		if claim.Rescue, err = DecodeFloats(t.Params); err != nil {
			return Claim{}, fmt.Errorf("trial %d: params: %v", t.Number, err)
		}
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
	var study studyRow
	if err := s.db.Select("trials_total").First(&study, studyID).Error; err != nil {
		return false, false, err
	}
	var running []trialRow
	if err := s.db.Select("worker", "heartbeat_at").Where("study_id = ? AND state = ?", studyID, TrialRunning).Find(&running).Error; err != nil {
		return false, false, err
	}
	now := time.Now()
	for i := range running {
		if leaseLost(&running[i], now, lease, isAlive) {
			return false, false, nil // to be rescued: the transaction's work
		}
	}
	var complete int64
	if err := s.db.Model(&trialRow{}).Where("study_id = ? AND state IN ?", studyID, resultStates).Count(&complete).Error; err != nil {
		return false, false, err
	}
	done = int(complete) >= study.TrialsTotal
	return done, !done && int(complete)+len(running) >= study.TrialsTotal, nil
}

// leaseLost reports whether a running trial's worker is gone: no heartbeat
// for lease, or an owner that isAlive says is dead.
func leaseLost(t *trialRow, now time.Time, lease time.Duration, isAlive func(owner string) bool) bool {
	return now.Sub(t.HeartbeatAt) > lease || (isAlive != nil && !isAlive(t.Worker))
}

// Heartbeat renews a running trial's lease.
func (s *Store) Heartbeat(t *Trial) error {
	return s.db.Model(&trialRow{}).Where("id = ? AND state = ?", t.ID, TrialRunning).
		Update("heartbeat_at", time.Now()).Error
}
