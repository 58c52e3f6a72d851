// Package storage keeps studies in a relational database through gorm:
// SQLite (a file, the default) for one machine, PostgreSQL for many.
// goptuna's rdb.v2 tables hold the sampler's view of each study; our own
// tables beside them hold what goptuna cannot: the study's configuration,
// its baseline, trial leases, and every trial's per-seed metrics.
package storage

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/c-bata/goptuna"
	rdb "github.com/c-bata/goptuna/rdb.v2"
	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// DefaultPath is the SQLite file used when no storage is given.
const DefaultPath = "optimize.db"

// EnvVar names the environment variable that supplies a default DSN.
const EnvVar = "OPTIMIZE_STORAGE"

// Store is an open database.
type Store struct {
	DB       *gorm.DB
	Postgres bool
	Label    string // the DSN with any password hidden, for messages
}

// Resolve picks the DSN: the flag if given, else $OPTIMIZE_STORAGE, else
// ./optimize.db.
func Resolve(flag string) string {
	if flag != "" {
		return flag
	}
	if env := os.Getenv(EnvVar); env != "" {
		return env
	}
	return DefaultPath
}

// ErrNoDatabase is OpenExisting's answer for a SQLite file that does not exist.
var ErrNoDatabase = errors.New("no database")

// OpenExisting is Open for commands that only read or continue studies: a
// missing SQLite file is ErrNoDatabase instead of a new empty database.
func OpenExisting(dsn string) (*Store, error) {
	if _, st, err := dialect(dsn); err == nil && !st.Postgres {
		if _, err := os.Stat(st.Label); errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w at %s", ErrNoDatabase, st.Label)
		}
	}
	return Open(dsn)
}

// Open connects to dsn: "sqlite:///PATH", a bare file path, or
// "postgres://user:pass@host:port/db". Connection failures are retried with
// backoff for up to about 10 s before giving up with one clear line.
func Open(dsn string) (*Store, error) {
	dialector, st, err := dialect(dsn)
	if err != nil {
		return nil, err
	}
	cfg := &gorm.Config{Logger: logger.Discard}
	var db *gorm.DB
	delay := 200 * time.Millisecond
	deadline := time.Now().Add(10 * time.Second)
	for {
		db, err = gorm.Open(dialector, cfg)
		if err == nil {
			err = ping(db)
		}
		if err == nil || !st.Postgres || time.Now().After(deadline) {
			break
		}
		time.Sleep(delay)
		delay = min(2*delay, 2*time.Second)
	}
	if err != nil {
		return nil, fmt.Errorf("storage %s: cannot connect: %s", st.Label, oneLine(err))
	}
	st.DB = db
	if !st.Postgres {
		if err := db.Exec("PRAGMA foreign_keys = ON").Error; err != nil {
			return nil, fmt.Errorf("storage %s: %s", st.Label, oneLine(err))
		}
	}
	return st, nil
}

func ping(db *gorm.DB) error {
	sqlDB, err := db.DB()
	if err != nil {
		return err
	}
	return sqlDB.Ping()
}

func dialect(dsn string) (gorm.Dialector, *Store, error) {
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return postgres.Open(dsn), &Store{Postgres: true, Label: hidePassword(dsn)}, nil
	case strings.HasPrefix(dsn, "sqlite:///"):
		dsn = strings.TrimPrefix(dsn, "sqlite:///")
	case strings.Contains(dsn, "://"):
		return nil, nil, fmt.Errorf("--storage: unsupported DSN %q (allowed: sqlite:///PATH, a file path, postgres://user:pass@host:port/db)", hidePassword(dsn))
	}
	if dsn == "" {
		return nil, nil, errors.New("--storage: empty SQLite path")
	}
	// WAL lets readers run beside the writer; immediate transactions take
	// the write lock up front, so several writers queue on the busy timeout
	// instead of failing with "database is locked" on a lock upgrade.
	q := "_journal_mode=WAL&_busy_timeout=10000&_txlock=immediate&_foreign_keys=on"
	return sqlite.Open("file:" + dsn + "?" + q), &Store{Label: dsn}, nil
}

func hidePassword(dsn string) string {
	at := strings.LastIndex(dsn, "@")
	scheme := strings.Index(dsn, "://")
	if at < 0 || scheme < 0 {
		return dsn
	}
	cred := dsn[scheme+3 : at]
	if user, _, ok := strings.Cut(cred, ":"); ok {
		return dsn[:scheme+3] + user + ":***" + dsn[at:]
	}
	return dsn
}

// Migrate creates goptuna's tables and ours. Only `study create` calls it:
// concurrent migrations race (harness-anchors §3.7).
func (s *Store) Migrate() error {
	if err := rdb.RunAutoMigrate(s.DB); err != nil {
		return fmt.Errorf("storage %s: migrate goptuna tables: %s", s.Label, oneLine(err))
	}
	if err := s.DB.AutoMigrate(&StudyRow{}, &TrialRow{}, &TrialSeedRow{}); err != nil {
		return fmt.Errorf("storage %s: migrate: %s", s.Label, oneLine(err))
	}
	return nil
}

// Goptuna returns goptuna's storage over the same database.
func (s *Store) Goptuna() goptuna.Storage { return rdb.NewStorage(s.DB) }

// Close releases the connection pool.
func (s *Store) Close() error {
	sqlDB, err := s.DB.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }
