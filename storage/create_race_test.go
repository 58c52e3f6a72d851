package storage

import (
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"optimize/internal/pgtest"
	"optimize/simcore/metrics"
)

// Two processes creating one name at once both pass their existence
// check; the name's unique index lets one insert win, and the other must
// get ErrStudyExists (which `study create` words like a sequential
// duplicate), not the driver's constraint text.
func TestCreateStudyRaceLoserGetsErrStudyExists(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "race.db")
		raceCreate(t, func() *Store { return openMigrated(t, path) })
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.DB(t)
		raceCreate(t, func() *Store { return openMigrated(t, dsn) })
	})
}

func openMigrated(t *testing.T, dsn string) *Store {
	t.Helper()
	st, err := Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(); err != nil {
		t.Fatal(err)
	}
	return st
}

// raceCreate inserts study "dup" from two stores (two connections, as two
// processes have) at once: exactly one succeeds, the other is
// ErrStudyExists naming the study.
func raceCreate(t *testing.T, open func() *Store) {
	stores := []*Store{open(), open()}
	errs := make([]error, len(stores))
	var start, done sync.WaitGroup
	start.Add(1)
	for i, st := range stores {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			errs[i] = st.CreateStudy(&Study{Name: "dup", Template: "x", Workload: "w", Seeds: []int64{42}, Sampler: "tpe",
				TrialsTotal: 1, BaselineSeeds: []metrics.Summary{{}}})
		}()
	}
	start.Done()
	done.Wait()
	var won, lost int
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case errors.Is(err, ErrStudyExists):
			lost++
			if want := `study already exists: "dup"`; err.Error() != want {
				t.Errorf("loser's error %q, want %q", err, want)
			}
		default:
			t.Errorf("loser's error is not ErrStudyExists: %v", err)
		}
	}
	if won != 1 || lost != 1 {
		t.Errorf("%d created and %d refused as existing, want 1 and 1 (errors %v)", won, lost, errs)
	}
	list, err := stores[0].Studies()
	if err != nil || len(list) != 1 {
		t.Errorf("studies after the race: %d (%v), want 1", len(list), err)
	}
}
