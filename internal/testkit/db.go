// Package testkit holds what tests of several packages share and what
// any package's own tests may import. It imports, of this module, only
// strategies, strategies/settings, strategies/datasets and simcore/cluster
// (so the tests inside those packages cannot import it). It holds a second, raw
// connection to a test's database (DB), for the few tests that must read
// or change rows behind the store's back (to count rows, fill a study
// quickly, or break one on purpose) — the store itself hands out no
// connection, so nothing else goes around it — the built-in templates with
// the standard cluster (Builtins), and the shared test data the repository
// does not carry (SharedData: public traces, llm-d's samples, real
// measurements; a dataset cache filled from it, Datasets; a dataset mirror
// over it, DatasetMirror). What needs a study environment (an Env, a study
// run to its end, a synthetic report) is package testkit/studykit, which
// imports studies and so serves external test packages and the packages
// above studies.
package testkit

import (
	"strings"
	"testing"

	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver the store uses
)

// DB opens its own connection to the database at dsn (a SQLite path,
// sqlite:///PATH or a postgres:// DSN, as storage.Open takes them),
// closed when the test ends.
func DB(t testing.TB, dsn string) *gorm.DB {
	t.Helper()
	var dialector gorm.Dialector
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		dialector = postgres.Open(dsn)
	} else {
		path := strings.TrimPrefix(dsn, "sqlite:///")
		// modernc.org/sqlite's driver ("sqlite"), as the store uses it; the
		// busy timeout lets this connection wait for the store's writes.
		dialector = sqlite.New(sqlite.Config{DriverName: "sqlite", DSN: "file:" + path + "?_pragma=busy_timeout(10000)"})
	}
	db, err := gorm.Open(dialector, &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatalf("testkit: open %s: %v", dsn, err)
	}
	t.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			sqlDB.Close()
		}
	})
	return db
}
