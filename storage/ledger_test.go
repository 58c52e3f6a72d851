package storage

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/c-bata/goptuna"
	"gorm.io/gorm"

	"optimize/internal/testkit"
	"optimize/search"
	"optimize/simcore/metrics"
)

// ledger is a study in both ledgers: our study row and a sampler over
// goptuna's tables of the same SQLite database.
func ledger(t *testing.T) (*Store, *Study, *search.Sampler) {
	t.Helper()
	st := openTemp(t)
	row := newStudy(t, st, 3)
	smp, err := search.NewSampler(st.Goptuna(), "s", []search.Param{{Name: "x", Kind: search.Float, High: 1}},
		search.MethodRandom, 1, search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st, row, smp
}

// trigger makes the database refuse a write (SQLite), as a full disk or a
// lost connection would, after the step's other writes went through.
func trigger(t *testing.T, st *Store, sql string) {
	t.Helper()
	if err := st.db.Exec(sql).Error; err != nil {
		t.Fatal(err)
	}
}

// samplerTrials is goptuna's trials of the study by state.
func samplerTrials(t *testing.T, st *Store, smp *search.Sampler) map[goptuna.TrialState]int {
	return testkit.SamplerStates(t, st.Goptuna(), smp.StudyID())
}

func readTrialRow(t *testing.T, st *Store, id uint) trialRow {
	t.Helper()
	var r trialRow
	if err := st.db.First(&r, id).Error; err != nil {
		t.Fatal(err)
	}
	return r
}

func propose(st *Store, tr *Trial) search.Record {
	return func(g goptuna.Storage, gid int, values []float64) error { return st.ProposalIn(g, tr, gid, values) }
}

// Asking: our row takes the proposal, then goptuna's attributes are
// written; when that second write fails, our row is as it was and no
// sampler trial is left.
func TestAskIsOneTransaction(t *testing.T) {
	st, row, smp := ledger(t)
	c, err := st.ClaimTrial(row, "w", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	trigger(t, st, `CREATE TRIGGER no_attrs BEFORE INSERT ON trial_system_attributes BEGIN SELECT RAISE(ABORT, 'disk full'); END`)
	if _, _, err := smp.AskWith(c.Trial.Number, propose(st, c.Trial)); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("AskWith = %v, want the database's error", err)
	}
	if r := readTrialRow(t, st, c.Trial.ID); r.GoptunaID != 0 || r.Params != "" || r.State != TrialRunning {
		t.Errorf("our row after the failed ask: goptuna id %d, params %q, %s; want it unchanged", r.GoptunaID, r.Params, r.State)
	}
	if n := samplerTrials(t, st, smp); len(n) != 0 {
		t.Errorf("sampler trials %v after the failed ask, want none", n)
	}

	trigger(t, st, `DROP TRIGGER no_attrs`)
	gid, values, err := smp.AskWith(c.Trial.Number, propose(st, c.Trial))
	if err != nil {
		t.Fatal(err)
	}
	if r := readTrialRow(t, st, c.Trial.ID); r.GoptunaID != gid || r.Params != EncodeParams(smp.Space().Encode(values)) {
		t.Errorf("our row after the ask: goptuna id %d, params %q; want %d, %q", r.GoptunaID, r.Params, gid, EncodeParams(smp.Space().Encode(values)))
	}
}

// Completing: our row and per-seed rows are written, then goptuna's value
// and state; when that second write fails, neither ledger has the result
// and the trial is running in both.
func TestCompleteIsOneTransaction(t *testing.T) {
	st, row, smp := ledger(t)
	c, _ := st.ClaimTrial(row, "w", time.Minute, nil)
	gid, _, err := smp.AskWith(c.Trial.Number, propose(st, c.Trial))
	if err != nil {
		t.Fatal(err)
	}
	half := search.Evaluation{Objectives: []float64{0.5}, Ratios: []float64{0.5}} // score 0.5
	complete := func(g goptuna.Storage, _ int, _ []float64) error {
		return st.CompleteIn(g, c.Trial, Outcome{Score: 0.5, Objectives: []float64{1}, Ranges: [][2]float64{{1, 1}}, Seeds: []int64{42}, PerSeed: []metrics.Summary{{}}})
	}
	trigger(t, st, `CREATE TRIGGER no_tell BEFORE UPDATE OF state ON trials WHEN NEW.state = 'COMPLETE' BEGIN SELECT RAISE(ABORT, 'disk full'); END`)
	if err := smp.TellObjectivesWith(gid, half, complete); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("TellObjectivesWith = %v, want the database's error", err)
	}
	seeds, err := st.SeedMetrics(c.Trial.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r := readTrialRow(t, st, c.Trial.ID); r.State != TrialRunning || r.Objectives != "" || len(seeds) != 0 {
		t.Errorf("our row after the failed tell: %s, objectives %q, %d seed rows; want running, none", r.State, r.Objectives, len(seeds))
	}
	if n := samplerTrials(t, st, smp); n[goptuna.TrialStateRunning] != 1 || len(n) != 1 {
		t.Errorf("sampler trials %v after the failed tell, want the one running", n)
	}

	trigger(t, st, `DROP TRIGGER no_tell`)
	if err := smp.TellObjectivesWith(gid, half, complete); err != nil {
		t.Fatal(err)
	}
	if n := samplerTrials(t, st, smp); n[goptuna.TrialStateComplete] != 1 || len(n) != 1 {
		t.Errorf("sampler trials %v, want the one complete", n)
	}
	// Told again (an earlier run of the step committed unseen): the
	// result is not recorded twice.
	if err := smp.TellObjectivesWith(gid, half, complete); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("a second tell = %v, want ErrLeaseLost", err)
	}
}

// Claiming over a dead worker's trial fails it in both ledgers; when the
// sampler's write fails, our row is not failed either and nothing is
// claimed.
func TestClaimFailsBothLedgersInOneTransaction(t *testing.T) {
	st, row, smp := ledger(t)
	dead, _ := st.ClaimTrial(row, "dead", time.Minute, nil)
	if _, _, err := smp.AskWith(dead.Trial.Number, propose(st, dead.Trial)); err != nil {
		t.Fatal(err)
	}
	isAlive := func(owner string) bool { return owner != "dead" }
	trigger(t, st, `CREATE TRIGGER no_fail BEFORE UPDATE OF state ON trials WHEN NEW.state = 'FAIL' BEGIN SELECT RAISE(ABORT, 'disk full'); END`)
	if _, err := st.ClaimTrial(row, "w", time.Minute, isAlive); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("ClaimTrial = %v, want the database's error", err)
	}
	if rows, _ := st.Trials(row.ID); len(rows) != 1 || rows[0].State != TrialRunning {
		t.Errorf("our rows after the failed claim: %+v, want the dead worker's trial alone, still running", rows)
	}

	trigger(t, st, `DROP TRIGGER no_fail`)
	c, err := st.ClaimTrial(row, "w", time.Minute, isAlive)
	if err != nil {
		t.Fatal(err)
	}
	if c.Trial == nil || c.Trial.RescueOf != dead.Trial.Number || len(c.Failed) != 1 {
		t.Fatalf("claim %+v: want the dead trial failed and rescued", c)
	}
	if n := samplerTrials(t, st, smp); n[goptuna.TrialStateFail] != 1 || len(n) != 1 {
		t.Errorf("sampler trials %v, want the dead worker's failed", n)
	}
}

// Giving a trial back fails the sampler's trial with it, or neither.
func TestReleaseIsOneTransaction(t *testing.T) {
	st, row, smp := ledger(t)
	c, _ := st.ClaimTrial(row, "w", time.Minute, nil)
	gid, _, err := smp.AskWith(c.Trial.Number, propose(st, c.Trial))
	if err != nil {
		t.Fatal(err)
	}
	release := func(g goptuna.Storage, _ int, _ []float64) error { return st.ReleaseIn(g, c.Trial) }
	trigger(t, st, `CREATE TRIGGER no_fail BEFORE UPDATE OF state ON trials BEGIN SELECT RAISE(ABORT, 'disk full'); END`)
	if err := smp.FailWith(gid, release); err == nil {
		t.Fatal("FailWith succeeded through the trigger")
	}
	if rows, _ := st.Trials(row.ID); len(rows) != 1 {
		t.Errorf("%d rows after the failed release, want the trial still there", len(rows))
	}
	trigger(t, st, `DROP TRIGGER no_fail`)
	if err := smp.FailWith(gid, release); err != nil {
		t.Fatal(err)
	}
	if rows, _ := st.Trials(row.ID); len(rows) != 0 {
		t.Errorf("%d rows after the release, want none", len(rows))
	}
	if n := samplerTrials(t, st, smp); n[goptuna.TrialStateFail] != 1 || len(n) != 1 {
		t.Errorf("sampler trials %v, want the one failed", n)
	}
}

// Our half of a step outside a sampler's transaction is refused, not
// written alone.
func TestStepOutsideATransactionIsRefused(t *testing.T) {
	st, row, _ := ledger(t)
	c, _ := st.ClaimTrial(row, "w", time.Minute, nil)
	if err := st.ProposalIn(st.Goptuna(), c.Trial, 1, []float64{0.5}); err == nil {
		t.Fatal("ProposalIn outside a transaction succeeded")
	}
}

// A claim whose commit reached the database unseen runs again after the
// lost connection: the run again takes the trial the first run made (and
// the parameters it re-runs) instead of claiming a second one, which
// would stay running unheartbeated until its lease ran out and then be
// failed. A claim with another stamp claims a new trial as before.
func TestClaimRunAgainTakesItsTrial(t *testing.T) {
	st := openTemp(t)
	row := newStudy(t, st, 3)
	dead, err := st.ClaimTrial(row, "dead", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetProposal(dead.Trial, 1, []float64{0.25}); err != nil {
		t.Fatal(err)
	}
	isAlive := func(owner string) bool { return owner != "dead" }
	claim := func(stamp time.Time) Claim {
		t.Helper()
		var c Claim
		if err := st.db.Transaction(func(tx *gorm.DB) (err error) {
			c, err = st.claimIn(tx, row, "w", stamp, time.Minute, isAlive)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return c
	}
	stamp := claimStamp()
	first := claim(stamp)
	again := claim(stamp)
	if first.Trial == nil || again.Trial == nil || again.Trial.ID != first.Trial.ID || again.Trial.Number != first.Trial.Number {
		t.Fatalf("the claim run again got trial %+v, the first run %+v: want the same trial", again.Trial, first.Trial)
	}
	if first.Trial.RescueOf != dead.Trial.Number || len(again.Rescue) != 1 || again.Rescue[0] != 0.25 {
		t.Errorf("run again: rescue of %d with %v; want the dead trial %d's parameters [0.25]", again.Trial.RescueOf, again.Rescue, dead.Trial.Number)
	}
	var running int64
	st.db.Model(&trialRow{}).Where("study_id = ? AND state = ?", row.ID, TrialRunning).Count(&running)
	if running != 1 {
		t.Errorf("%d running trials after a claim ran twice, want 1", running)
	}
	if other := claim(claimStamp()); other.Trial == nil || other.Trial.ID == first.Trial.ID {
		t.Errorf("a claim with a new stamp got %+v, want a new trial", other.Trial)
	}
	if a, b := claimStamp(), claimStamp(); !b.After(a) {
		t.Errorf("claim stamps %v then %v: not increasing", a, b)
	}
}
