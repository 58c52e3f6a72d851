package storage

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"optimize/simcore/metrics"
)

func openTemp(t *testing.T) *Store {
	t.Helper()
	st, err := Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func newStudy(t *testing.T, st *Store, total int) *StudyRow {
	t.Helper()
	row := &StudyRow{Name: "s", Template: "x", Workload: "w", Seeds: "[42]", Sampler: "tpe", TrialsTotal: total}
	if err := st.DB.Create(row).Error; err != nil {
		t.Fatal(err)
	}
	return row
}

// Many goroutines claiming and completing at once never exceed the total,
// never reuse a number, and never see "database is locked".
func TestClaimsRespectTotalUnderConcurrency(t *testing.T) {
	st := openTemp(t)
	row := newStudy(t, st, 25)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c, err := st.ClaimTrial(row, "w", time.Minute, nil)
				if err != nil {
					errs <- err
					return
				}
				if c.Done {
					return
				}
				if c.Trial == nil {
					time.Sleep(5 * time.Millisecond)
					continue
				}
				if err := st.SetProposal(c.Trial, 0, []float64{1}); err != nil {
					errs <- err
					return
				}
				if err := st.Complete(c.Trial, Outcome{Score: 1, Objectives: []float64{1}, Ranges: [][2]float64{{1, 1}}, Seeds: []int64{42}, PerSeed: []metrics.Summary{{}}}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	trials, _ := st.Trials(row.ID)
	seen := map[int]bool{}
	complete := 0
	for _, tr := range trials {
		if seen[tr.Number] {
			t.Fatalf("trial number %d used twice", tr.Number)
		}
		seen[tr.Number] = true
		if tr.State == TrialComplete {
			complete++
		}
	}
	if complete != 25 || len(trials) != 25 {
		t.Fatalf("%d complete of %d trials, want exactly 25", complete, len(trials))
	}
}

// A trial whose lease expired is failed and its parameters re-run under
// the next number; a live one is left alone.
func TestExpiredLeaseIsRescued(t *testing.T) {
	st := openTemp(t)
	row := newStudy(t, st, 3)
	dead, _ := st.ClaimTrial(row, "dead", time.Minute, nil)
	st.SetProposal(dead.Trial, 7, []float64{0.25, 3})
	live, _ := st.ClaimTrial(row, "live", time.Minute, nil)
	st.SetProposal(live.Trial, 8, []float64{0.5, 1})
	// The dead worker stopped beating long ago.
	st.DB.Model(&TrialRow{}).Where("id = ?", dead.Trial.ID).Update("heartbeat_at", time.Now().Add(-time.Hour))
	c, err := st.ClaimTrial(row, "new", time.Minute, nil)
	if err != nil || c.Trial == nil {
		t.Fatalf("claim: %+v %v", c, err)
	}
	if string(c.Rescue) != "[0.25,3]" || c.Trial.RescueOf != dead.Trial.Number || c.Trial.Number != 2 {
		t.Fatalf("rescue %s of %d as number %d", c.Rescue, c.Trial.RescueOf, c.Trial.Number)
	}
	trials, _ := st.Trials(row.ID)
	if trials[0].State != TrialFailed || trials[1].State != TrialRunning {
		t.Fatalf("states %s %s", trials[0].State, trials[1].State)
	}
	// The dead worker comes back: its result must not count twice.
	if err := st.Complete(dead.Trial, Outcome{Score: 1}); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("a rescued trial's late result: err = %v, want ErrLeaseLost", err)
	}
	// With 1 complete of 3 and two running, a fourth worker waits.
	if err := st.Complete(live.Trial, Outcome{Score: 1}); err != nil {
		t.Fatal(err)
	}
	if c, _ := st.ClaimTrial(row, "x", time.Minute, nil); c.Trial == nil || c.Done {
		t.Fatalf("a slot is free: %+v", c)
	}
	if c, _ := st.ClaimTrial(row, "y", time.Minute, nil); c.Trial != nil || c.Done {
		t.Fatalf("total reached by running trials, got a claim: %+v", c)
	}
}

// isAlive lets a claim rescue a dead owner without waiting for its lease.
func TestDeadOwnerRescuedAtOnce(t *testing.T) {
	st := openTemp(t)
	row := newStudy(t, st, 2)
	first, _ := st.ClaimTrial(row, "gone", time.Hour, nil)
	st.SetProposal(first.Trial, 1, []float64{9})
	c, _ := st.ClaimTrial(row, "me", time.Hour, func(owner string) bool { return owner != "gone" })
	if string(c.Rescue) != "[9]" {
		t.Fatalf("dead owner's trial not rescued: %+v", c)
	}
}

// A SQLite store runs in WAL mode with a busy timeout and foreign keys on
// (the pure-Go driver takes these as _pragma parameters; a wrong spelling
// would be ignored silently).
func TestSQLiteConnectionSettings(t *testing.T) {
	st, err := Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for pragma, want := range map[string]string{"journal_mode": "wal", "busy_timeout": "10000", "foreign_keys": "1"} {
		var got string
		if err := st.DB.Raw("PRAGMA " + pragma).Scan(&got).Error; err != nil || got != want {
			t.Errorf("PRAGMA %s = %q (%v), want %q", pragma, got, err, want)
		}
	}
}

// Complete stores one row per seed, in seed order, with that seed's metrics.
func TestCompleteStoresEverySeed(t *testing.T) {
	st := openTemp(t)
	row := newStudy(t, st, 1)
	c, _ := st.ClaimTrial(row, "w", time.Minute, nil)
	perSeed := []metrics.Summary{{Completed: 1}, {Completed: 2}, {Completed: 3}}
	if err := st.Complete(c.Trial, Outcome{Score: 1, Mean: metrics.Summary{Completed: 2}, Seeds: []int64{42, 43, 44}, PerSeed: perSeed}); err != nil {
		t.Fatal(err)
	}
	var rows []TrialSeedRow
	st.DB.Where("trial_id = ?", c.Trial.ID).Order("id").Find(&rows)
	if len(rows) != 3 {
		t.Fatalf("%d per-seed rows, want 3", len(rows))
	}
	for i, r := range rows {
		if r.Seed != int64(42+i) || !strings.Contains(r.Metrics, fmt.Sprintf(`"completed":%d`, i+1)) {
			t.Errorf("row %d: seed %d metrics %s", i, r.Seed, r.Metrics)
		}
	}
	if err := st.Complete(c.Trial, Outcome{Score: 1, Seeds: []int64{42}}); err == nil {
		t.Error("seeds and per-seed results of different lengths were accepted")
	}
}

// A database failure in Complete is reported as such (not as a lost
// lease, which the caller would shrug off), and nothing is half-written.
func TestCompleteReportsDatabaseErrors(t *testing.T) {
	st := openTemp(t)
	row := newStudy(t, st, 1)
	c, _ := st.ClaimTrial(row, "w", time.Minute, nil)
	if err := st.DB.Exec(`CREATE TRIGGER full BEFORE INSERT ON trial_seed_rows BEGIN SELECT RAISE(ABORT, 'disk full'); END`).Error; err != nil {
		t.Fatal(err)
	}
	err := st.Complete(c.Trial, Outcome{Score: 1, Seeds: []int64{42}, PerSeed: []metrics.Summary{{}}})
	if err == nil || errors.Is(err, ErrLeaseLost) || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err = %v, want the database's error", err)
	}
	trials, _ := st.Trials(row.ID)
	if trials[0].State != TrialRunning {
		t.Fatalf("trial is %s after a failed Complete, want running", trials[0].State)
	}
}

// A worker polling while every remaining trial runs under a live lease,
// or after the study is done, only reads: it gets its answer while
// another connection holds SQLite's write lock.
func TestIdleClaimTakesNoWriteLock(t *testing.T) {
	st := openTemp(t)
	row := newStudy(t, st, 1)
	c, _ := st.ClaimTrial(row, "w", time.Minute, nil)
	other, err := Open(st.Label)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	hold := func(check func()) {
		t.Helper()
		tx := other.DB.Begin() // BEGIN IMMEDIATE: the write lock
		if tx.Error != nil {
			t.Fatal(tx.Error)
		}
		defer tx.Rollback()
		began := time.Now()
		check()
		if took := time.Since(began); took > 2*time.Second {
			t.Errorf("idle claim waited %v for the write lock", took)
		}
	}
	hold(func() {
		if c, err := st.ClaimTrial(row, "idle", time.Minute, nil); err != nil || c.Trial != nil || c.Done {
			t.Errorf("nothing claimable: got %+v, %v", c, err)
		}
	})
	if err := st.Complete(c.Trial, Outcome{Score: 1}); err != nil {
		t.Fatal(err)
	}
	hold(func() {
		if c, err := st.ClaimTrial(row, "idle", time.Minute, nil); err != nil || !c.Done {
			t.Errorf("study done: got %+v, %v", c, err)
		}
	})
}

// studyRowV1 is the study table as older versions created it.
type studyRowV1 struct {
	StudyRow
	Definition string `gorm:"type:text;not null"`
}

func (studyRowV1) TableName() string { return "study_rows" }

// A database from before the study definition column was retired (NOT
// NULL, no default) takes new studies after Migrate.
func TestMigrateDropsRetiredDefinitionColumn(t *testing.T) {
	st, err := Open(filepath.Join(t.TempDir(), "old.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.DB.AutoMigrate(&studyRowV1{}); err != nil {
		t.Fatal(err)
	}
	if err := st.DB.Create(&studyRowV1{StudyRow: StudyRow{Name: "old", Seeds: "[42]"}, Definition: "{}"}).Error; err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(); err != nil {
		t.Fatal(err)
	}
	newStudy(t, st, 1)
	if old, err := st.StudyByName("old"); err != nil || old.Seeds != "[42]" {
		t.Fatalf("the old study after Migrate: %+v, %v", old, err)
	}
}

// The float-array columns decode as encoding/json would, null as NaN, and
// anything else is an error rather than a silent zero.
func TestDecodeFloats(t *testing.T) {
	got, err := DecodeFloats(" [1.5, null,-2e-3,0] ")
	if err != nil || len(got) != 4 || got[0] != 1.5 || !math.IsNaN(got[1]) || got[2] != -0.002 || got[3] != 0 {
		t.Fatalf("DecodeFloats = %v, %v", got, err)
	}
	if got, err := DecodeFloats("[]"); err != nil || len(got) != 0 {
		t.Fatalf("empty array: %v, %v", got, err)
	}
	for _, bad := range []string{"", "1,2", "[1,,2]", "[1,x]", "[[1,2]]", `["1"]`} {
		if _, err := DecodeFloats(bad); err == nil {
			t.Errorf("DecodeFloats(%q) accepted", bad)
		}
	}
	for _, v := range [][]float64{{1, math.NaN(), 3.25}, {}} {
		back, err := DecodeParams([]byte(EncodeParams(v)))
		if err != nil || len(back) != len(v) {
			t.Fatalf("round trip of %v: %v, %v", v, back, err)
		}
	}
}

// A NaN objective, violation or metric is stored as null, never lost: the
// trial reads back with its NaN objective and the total violation it was
// given (a missing value is a full shortfall), and its metrics are there.
func TestCompleteStoresNaNAsNull(t *testing.T) {
	st := openTemp(t)
	row := newStudy(t, st, 1)
	c, _ := st.ClaimTrial(row, "w", time.Minute, nil)
	if err := st.SetProposal(c.Trial, 1, []float64{0.5, math.NaN()}); err != nil {
		t.Fatal(err)
	}
	mean := metrics.Summary{Completed: 7, SLOGap: math.NaN()}
	out := Outcome{Score: 1010, Objectives: []float64{math.NaN(), 2}, Violations: []float64{0, math.NaN()}, Violation: 2,
		Ranges: [][2]float64{{math.NaN(), math.NaN()}, {1, 3}}, Mean: mean, Seeds: []int64{42}, PerSeed: []metrics.Summary{mean}}
	if err := st.Complete(c.Trial, out); err != nil {
		t.Fatal(err)
	}
	trials, err := st.ReportTrials(row.ID)
	if err != nil || len(trials) != 1 {
		t.Fatalf("%d trials, %v", len(trials), err)
	}
	got := trials[0]
	if !got.Judged || got.Violation != 2 || !math.IsNaN(got.Objectives[0]) || got.Objectives[1] != 2 ||
		got.Violations[0] != 0 || !math.IsNaN(got.Violations[1]) || got.SeedRanges[1] != [2]float64{1, 3} || !math.IsNaN(got.SeedRanges[0][0]) {
		t.Fatalf("read back %+v", got)
	}
	js, err := st.TrialMetrics(got.ID)
	if err != nil || !strings.Contains(js, `"completed":7`) || !strings.Contains(js, `"slo_gap":null`) {
		t.Fatalf("metrics %q, %v", js, err)
	}
}
