package studies_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/c-bata/goptuna"

	"optimize/internal/testkit"
	"optimize/internal/testkit/studykit"
	"optimize/storage"
	"optimize/studies"
)

// failingStudy creates a small study, installs trigger (SQL run on the
// study's SQLite file) and runs the study with a deadline, so that a run
// that never ends fails the test instead of hanging it.
func failingStudy(t *testing.T, trials int, trigger string) (*studies.Env, *storage.Study, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f.db")
	env := studykit.Env(t, path, 1)
	row, err := env.Create(context.Background(), studies.CreateOptions{Template: "slo-cascade", Name: "f", Trials: trials,
		Seeds: []int64{42}, Sampler: "tpe", SamplerSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := testkit.DB(t, path).Exec(trigger).Error; err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return env, row, env.Run(ctx, row)
}

// samplerStates counts the study's goptuna trials by state.
func samplerStates(t *testing.T, env *studies.Env, row *storage.Study) map[goptuna.TrialState]int {
	t.Helper()
	gs := env.Store.Goptuna()
	id, err := gs.GetStudyIDFromName(studies.GoptunaName(row))
	if err != nil {
		t.Fatal(err)
	}
	return testkit.SamplerStates(t, gs, id)
}

// A database error while recording a finished trial stops the run with
// that error; it is not mistaken for a rescued trial and dropped. The
// result's step is one transaction: neither ledger records it, and the
// trial stays running in both (rescued once its lease expires).
func TestCompleteErrorStopsTheRun(t *testing.T) {
	env, row, err := failingStudy(t, 2,
		`CREATE TRIGGER full BEFORE INSERT ON trial_seed_rows BEGIN SELECT RAISE(ABORT, 'disk full'); END`)
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Run = %v, want the database's error", err)
	}
	if n := samplerStates(t, env, row); n[goptuna.TrialStateRunning] != 1 || len(n) != 1 {
		t.Errorf("sampler trials %v, want the one trial still running", n)
	}
	trials, _ := env.Store.Trials(row.ID)
	if len(trials) != 1 || trials[0].State != storage.TrialRunning || trials[0].Objectives != nil {
		t.Errorf("trial rows %+v, want the one trial still running without a result", trials)
	}
}

// A trial whose lease was lost (here: failed under it as soon as its
// proposal is written, as a rescuer would) is not an error: the run goes
// on, the rescue re-runs its parameters, and the study reaches its total.
func TestLostLeaseIsNotAnError(t *testing.T) {
	env, row, err := failingStudy(t, 2,
		`CREATE TRIGGER steal AFTER UPDATE OF params ON trial_rows WHEN NEW.number = 0
		 BEGIN UPDATE trial_rows SET state = 'failed' WHERE id = NEW.id; END`)
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	trials, _ := env.Store.Trials(row.ID)
	var states []string
	for _, tr := range trials {
		states = append(states, tr.State)
	}
	if strings.Join(states, " ") != "failed complete complete" || trials[1].RescueOf != 0 || storage.EncodeParams(trials[1].Params) != storage.EncodeParams(trials[0].Params) {
		t.Errorf("trials %v (trial 1 rescues %d), want trial 0 failed and re-run as trial 1", states, trials[1].RescueOf)
	}
}

// When the proposal cannot be recorded in our row, the sampler's trial
// is not kept either (one transaction: no pending point left for the
// liar) and the claim is released.
func TestSetProposalErrorLeavesNoSamplerTrial(t *testing.T) {
	env, row, err := failingStudy(t, 2,
		`CREATE TRIGGER ro BEFORE UPDATE OF params ON trial_rows BEGIN SELECT RAISE(ABORT, 'read-only'); END`)
	if err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("Run = %v, want the database's error", err)
	}
	if n := samplerStates(t, env, row); len(n) != 0 {
		t.Errorf("sampler trials %v, want none", n)
	}
	if trials, _ := env.Store.Trials(row.ID); len(trials) != 0 {
		t.Errorf("%d trial rows left, want the claim released", len(trials))
	}
}

// A study whose sampler cannot be created is not left behind half-made.
func TestCreateLeavesNothingWhenTheSamplerFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.db")
	env := studykit.Env(t, path, 1)
	if err := env.Store.Migrate(); err != nil {
		t.Fatal(err)
	}
	if err := testkit.DB(t, path).Exec("CREATE TRIGGER no_sampler BEFORE INSERT ON studies BEGIN SELECT RAISE(ABORT, 'disk full'); END").Error; err != nil {
		t.Fatal(err)
	}
	_, err := env.Create(context.Background(), studies.CreateOptions{Template: "slo-cascade", Name: "half", Trials: 2, Seeds: []int64{42}, Sampler: "tpe", SamplerSeed: 1})
	if err == nil {
		t.Fatal("create succeeded without a sampler")
	}
	if _, err := env.Store.StudyByName("half"); !errors.Is(err, storage.ErrStudyNotFound) {
		t.Fatalf("the study row outlived its failed creation: %v", err)
	}
}
