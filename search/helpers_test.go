package search

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/c-bata/goptuna"

	"optimize/storage"
)

// openStorage returns goptuna's rdb.v2 storage on a fresh SQLite file.
func openStorage(t testing.TB) goptuna.Storage {
	t.Helper()
	return openStorageAt(t, filepath.Join(t.TempDir(), "study.db"), true)
}

// openStorageAt opens path the way the CLI does, through storage.Open (the
// pure-Go SQLite driver and the production DSN); only the process that owns
// a fresh file should migrate: gorm's AutoMigrate checks for each table and
// then creates it, so concurrent migrations of a fresh file race and one
// fails.
func openStorageAt(t testing.TB, path string, migrate bool) goptuna.Storage {
	t.Helper()
	st, err := storage.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if migrate {
		if err := st.Migrate(); err != nil {
			t.Fatal(err)
		}
	}
	return st.Goptuna()
}

func newTestSampler(t testing.TB, storage goptuna.Storage, name string, space []Param, method Method, seed int64, opts Options) *Sampler {
	t.Helper()
	s, err := NewSampler(storage, name, space, method, seed, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// vector is xs as Values of space (categoricals by index, NaN inactive).
func vector(space Space, xs ...float64) []Value { return space.values(xs) }

// mixedSpace has one axis of every kind.
func mixedSpace() []Param {
	return []Param{
		{Name: "w", Kind: Float, Low: -2, High: 3},
		{Name: "n", Kind: Int, Low: 1, High: 4},
		{Name: "lr", Kind: LogFloat, Low: 1e-3, High: 10},
		{Name: "mode", Kind: Categorical, Choices: []string{"a", "b", "c"}},
	}
}

// mixedObjective is deterministic, with its optimum at w=1, n=3, lr=0.1, mode=b.
func mixedObjective(v []float64) float64 {
	lr := math.Log10(v[2]) + 1
	mode := 0.0
	if v[3] != 1 {
		mode = 1
	}
	return (v[0]-1)*(v[0]-1) + (v[1]-3)*(v[1]-3) + lr*lr + mode
}

// runStudy asks and tells trials numbers from..to-1 sequentially.
func runStudy(t testing.TB, s *Sampler, from, to int, objective func([]float64) float64) [][]float64 {
	t.Helper()
	var proposals [][]float64
	for number := from; number < to; number++ {
		id, values, err := s.Ask(number)
		if err != nil {
			t.Fatal(err)
		}
		x := s.space.Encode(values)
		if err := s.Tell(id, objective(x)); err != nil {
			t.Fatal(err)
		}
		proposals = append(proposals, x)
	}
	return proposals
}
