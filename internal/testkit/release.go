package testkit

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/c-bata/goptuna"
)

// The release databases were written by the release before trial
// violations were stored (commit 49ace42): `study create joint-slo
// --trials 8 --name old --workers 1 --sampler-seed 1 --workload
// orthogonal-slo@sustained-overload`, on SQLite and on PostgreSQL
// (pg_dump --inserts, without its SET lines). Its first six trials miss
// the tokens/s constraint, the last two meet it; that release's history
// line rose from 1,614 ms (trial 1, infeasible) to 4,056 ms (trial 6, the
// first feasible trial).
var (
	//go:embed testdata/release-49ace42.sqlite.gz
	releaseSQLite []byte
	//go:embed testdata/release-49ace42.pg.sql.gz
	releasePostgres []byte
)

// ReleaseFeasible is which of the release study's trials meet every
// constraint.
var ReleaseFeasible = []bool{false, false, false, false, false, false, true, true}

// ReleaseSQLite writes the release's SQLite database into the test's
// temporary folder and returns its path.
func ReleaseSQLite(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "release.db")
	if err := os.WriteFile(path, gunzip(t, releaseSQLite), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// ReleasePostgres is the release's PostgreSQL dump: SQL statements, each
// ending in ";\n", with pg_dump's comment lines.
func ReleasePostgres(t testing.TB) []byte { return gunzip(t, releasePostgres) }

func gunzip(t testing.TB, gz []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// SamplerStates counts the trials of goptuna study id in st by state.
func SamplerStates(t testing.TB, st goptuna.Storage, id int) map[goptuna.TrialState]int {
	t.Helper()
	trials, err := st.GetAllTrials(id)
	if err != nil {
		t.Fatal(err)
	}
	n := map[goptuna.TrialState]int{}
	for _, tr := range trials {
		n[tr.State]++
	}
	return n
}
