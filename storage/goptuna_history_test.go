package storage

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/c-bata/goptuna"
	rdb "github.com/c-bata/goptuna/rdb.v2"
)

func migratedStore(t *testing.T) *Store {
	t.Helper()
	return openMigrated(t, filepath.Join(t.TempDir(), "g.db"))
}

// The incremental GetAllTrials returns exactly what goptuna's own returns,
// call after call, while trials of two studies are created, written,
// completed and failed in between; and CreateNewTrial numbers trials as
// goptuna does (0, 1, 2, ... per study).
func TestSamplerStorageMatchesGoptuna(t *testing.T) {
	st := migratedStore(t)
	ours, theirs := st.Goptuna(), rdb.NewStorage(st.db)
	a, err := ours.CreateNewStudy("a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := ours.CreateNewStudy("b")
	if err != nil {
		t.Fatal(err)
	}
	dist := goptuna.IntUniformDistribution{Low: 0, High: 10}
	check := func(step string) {
		t.Helper()
		for _, study := range []int{a, b} {
			got, err := ours.GetAllTrials(study)
			if err != nil {
				t.Fatal(err)
			}
			want, err := theirs.GetAllTrials(study)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%s: study %d: %d trials, goptuna reads %d", step, study, len(got), len(want))
			}
			for i := range want {
				g, w := got[i], want[i]
				// Times go through the driver the same way; compare them
				// as instants.
				if !g.DatetimeStart.Equal(w.DatetimeStart) || !g.DatetimeComplete.Equal(w.DatetimeComplete) {
					t.Fatalf("%s: trial %d: times %v/%v, goptuna %v/%v", step, w.ID, g.DatetimeStart, g.DatetimeComplete, w.DatetimeStart, w.DatetimeComplete)
				}
				g.DatetimeStart, g.DatetimeComplete = w.DatetimeStart, w.DatetimeComplete
				if !reflect.DeepEqual(g, w) {
					t.Fatalf("%s: trial %d:\n got %+v\nwant %+v", step, w.ID, g, w)
				}
			}
		}
	}
	var ids []int
	for i := 0; i < 6; i++ {
		study := a
		if i%3 == 2 {
			study = b
		}
		id, err := ours.CreateNewTrial(study)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		check("created")
		if err := ours.SetTrialParam(id, "x", float64(i), dist); err != nil {
			t.Fatal(err)
		}
		if err := ours.SetTrialSystemAttr(id, "k", "v"); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if err := ours.SetTrialUserAttr(id, "note", "even"); err != nil {
				t.Fatal(err)
			}
			if err := ours.SetTrialIntermediateValue(id, 3, 0.25); err != nil {
				t.Fatal(err)
			}
		}
	}
	check("params written")
	// Complete some out of creation order, fail one, leave two running.
	for _, k := range []int{3, 0} {
		if err := ours.SetTrialValue(ids[k], float64(k)+0.5); err != nil {
			t.Fatal(err)
		}
		if err := ours.SetTrialState(ids[k], goptuna.TrialStateComplete); err != nil {
			t.Fatal(err)
		}
		check("completed")
	}
	if err := ours.SetTrialState(ids[2], goptuna.TrialStateFail); err != nil {
		t.Fatal(err)
	}
	check("failed")
	for _, study := range []int{a, b} {
		trials, _ := theirs.GetAllTrials(study)
		for n, tr := range trials {
			if tr.Number != n {
				t.Fatalf("study %d: trial %d numbered %d, want %d", study, tr.ID, tr.Number, n)
			}
		}
	}
}

// Writes in one Transaction land together: parameters readable as goptuna
// reads them, a system attribute set twice holding its last value, and
// nothing at all when the transaction fails.
func TestSamplerStorageTransaction(t *testing.T) {
	st := migratedStore(t)
	s := st.Goptuna().(*samplerStorage)
	study, _ := s.CreateNewStudy("t")
	id, err := s.CreateNewTrial(study)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Transaction(func(tx goptuna.Storage) error {
		for _, name := range []string{"a", "b"} {
			if err := tx.SetTrialParam(id, name, 3, goptuna.IntUniformDistribution{Low: 0, High: 5}); err != nil {
				return err
			}
		}
		if err := tx.SetTrialSystemAttr(id, "k", "first"); err != nil {
			return err
		}
		return tx.SetTrialSystemAttr(id, "other", "x")
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Transaction(func(tx goptuna.Storage) error { return tx.SetTrialSystemAttr(id, "k", "second") }); err != nil {
		t.Fatal(err)
	}
	got, err := rdb.NewStorage(st.db).GetTrial(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.InternalParams) != 2 || got.InternalParams["b"] != 3 || got.SystemAttrs["k"] != "second" || got.SystemAttrs["other"] != "x" {
		t.Fatalf("after the transactions: params %v, attrs %v", got.InternalParams, got.SystemAttrs)
	}
	err = s.Transaction(func(tx goptuna.Storage) error {
		if err := tx.SetTrialParam(id, "c", 1, goptuna.IntUniformDistribution{Low: 0, High: 5}); err != nil {
			return err
		}
		return tx.SetTrialParam(id, "a", 1, goptuna.IntUniformDistribution{Low: 0, High: 5}) // already set: the insert fails
	})
	if err == nil {
		t.Fatal("setting a parameter twice succeeded")
	}
	if got, _ := rdb.NewStorage(st.db).GetTrial(id); len(got.InternalParams) != 2 {
		t.Fatalf("a failed transaction left params %v", got.InternalParams)
	}
}
