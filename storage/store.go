// Package storage keeps studies in a relational database through gorm:
// SQLite (a file, the default) for one machine, PostgreSQL for many.
// goptuna's rdb.v2 tables hold the sampler's view of each study; our own
// tables beside them hold what goptuna cannot: the study's configuration,
// its baseline, trial leases, every trial's result and constraint
// violations, per-seed metrics, and the stored evidence.
//
// It hands out decoded values (domain.go: Study, Trial, SeedRun, metric
// summaries), never its rows or its connection. Its files: store.go (open,
// migrate, count statements), retry.go (a lost PostgreSQL connection is
// retried for a bounded window), trials.go (reading studies and trials),
// claim.go (leases and rescue), results.go (proposal, result and release,
// each also inside the sampler's transaction: one ledger), columns.go and
// encode.go (the JSON columns), evidence.go, and goptuna_history.go and
// goptuna_writes.go (goptuna's storage, cached and batched).
package storage

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/c-bata/goptuna"
	rdb "github.com/c-bata/goptuna/rdb.v2"
	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, pure Go

	"optimize/simcore/errtext"
)

// DefaultPath is the SQLite file used when no storage is given.
const DefaultPath = "optimize.db"

// EnvVar names the environment variable that supplies a default DSN.
const EnvVar = "OPTIMIZE_STORAGE"

// Store is an open database.
type Store struct {
	db       *gorm.DB
	Postgres bool
	Label    string // the DSN with any password hidden, for messages

	colsMu sync.Mutex
	cols   *laterColumns // nil until asked (columns)

	samplerOnce sync.Once
	sampler     *samplerStorage

	// retryFor bounds how long a lost PostgreSQL connection is retried
	// (retry.go); outage reports it.
	retryFor time.Duration
	outage   outage

	statements atomic.Int64 // sent so far (Statements)
}

// Statements is how many SQL statements the store has sent since it was
// opened (each query, write and raw statement once; a retried one again):
// what a study's storage work per trial is measured in.
func (s *Store) Statements() int64 { return s.statements.Load() }

// countStatements registers the counter behind Statements.
func (s *Store) countStatements() error {
	count := func(d *gorm.DB) {
		if !d.DryRun { // a subquery is built in a dry run: it is part of its statement
			s.statements.Add(1)
		}
	}
	cb := s.db.Callback()
	for _, err := range []error{
		cb.Query().After("gorm:query").Register("optimize:count", count),
		cb.Create().After("gorm:create").Register("optimize:count", count),
		cb.Update().After("gorm:update").Register("optimize:count", count),
		cb.Delete().After("gorm:delete").Register("optimize:count", count),
		cb.Row().After("gorm:row").Register("optimize:count", count),
		cb.Raw().After("gorm:raw").Register("optimize:count", count),
	} {
		if err != nil {
			return err
		}
	}
	return nil
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

// ErrBadDSN matches the errors of a --storage value (or
// $OPTIMIZE_CONNECT_TIMEOUT) that cannot work: usage errors, nothing was
// tried.
var ErrBadDSN = errors.New("bad storage setting")

type badSetting string

func (e badSetting) Error() string        { return string(e) }
func (e badSetting) Is(target error) bool { return target == ErrBadDSN }

func bad(format string, args ...any) error { return badSetting(fmt.Sprintf(format, args...)) }

// ConnectTimeoutVar names the environment variable that bounds how long
// Open keeps retrying an unreachable PostgreSQL server (a Go duration;
// default 10s, 0 for a single attempt).
const ConnectTimeoutVar = "OPTIMIZE_CONNECT_TIMEOUT"

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
// "postgres://user:pass@host:port/db". Failures to reach the server are
// retried with backoff for $OPTIMIZE_CONNECT_TIMEOUT (default 10 s) before
// giving up with one clear line; the server's own refusals (no such
// database, authentication) are reported at once. Once open, a PostgreSQL
// connection lost later is retried for $OPTIMIZE_STORAGE_RETRY (default
// DefaultRetryWindow; see retry.go).
func Open(dsn string) (*Store, error) {
	window, err := connectWindow()
	if err != nil {
		return nil, err
	}
	retryFor, err := retryWindow()
	if err != nil {
		return nil, err
	}
	dialector, st, err := dialect(dsn)
	if err != nil {
		return nil, err
	}
	if st.Postgres {
		dialector = postgres.Open(withConnectTimeout(dsn, window))
	}
	// On PostgreSQL a single write is sent without a transaction around
	// it, so that retryingPool can send it again after a lost connection.
	cfg := &gorm.Config{Logger: logger.Discard, SkipDefaultTransaction: st.Postgres}
	var db *gorm.DB
	delay := 200 * time.Millisecond
	start := time.Now()
	deadline := start.Add(window)
	attempts := 0
	for {
		attempts++
		db, err = gorm.Open(dialector, cfg)
		if err == nil {
			err = ping(db)
		}
		if err == nil || !st.Postgres || refused(err) || time.Now().Add(delay).After(deadline) {
			break
		}
		closeQuietly(db)
		time.Sleep(delay)
		delay = min(2*delay, 2*time.Second)
	}
	if err != nil {
		closeQuietly(db)
		tried := ""
		if attempts > 1 {
			tried = fmt.Sprintf(" (%d attempts in %s; $%s sets how long to retry)",
				attempts, time.Since(start).Round(100*time.Millisecond), ConnectTimeoutVar)
		}
		return nil, fmt.Errorf("storage %s: cannot connect: %s%s", st.Label, scrub(oneLine(err), dsn), tried)
	}
	st.db, st.retryFor = db, retryFor
	if err := st.countStatements(); err != nil {
		closeQuietly(db)
		return nil, fmt.Errorf("storage %s: %s", st.Label, oneLine(err))
	}
	if st.Postgres {
		sqlDB, err := db.DB()
		if err != nil {
			closeQuietly(db)
			return nil, fmt.Errorf("storage %s: %s", st.Label, oneLine(err))
		}
		pool := &retryingPool{db: sqlDB, store: st}
		db.ConnPool, db.Statement.ConnPool = pool, pool
	}
	if !st.Postgres {
		if err := db.Exec("PRAGMA foreign_keys = ON").Error; err != nil {
			return nil, fmt.Errorf("storage %s: %s", st.Label, oneLine(err))
		}
	}
	return st, nil
}

func connectWindow() (time.Duration, error) {
	v := os.Getenv(ConnectTimeoutVar)
	if v == "" {
		return 10 * time.Second, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, bad("$%s: want a duration such as 10s, got %q", ConnectTimeoutVar, v)
	}
	return d, nil
}

// refused reports whether a failed connection was the server's answer,
// which it will give again: "no such database", "authentication failed".
// Anything else (no answer at all, a server starting up or full) may go
// away by itself.
func refused(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && !lostConnection(err)
}

// withConnectTimeout bounds each connection attempt (the OS would wait
// minutes on a host that drops packets) unless the DSN sets its own.
func withConnectTimeout(dsn string, window time.Duration) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Query().Has("connect_timeout") {
		return dsn
	}
	q := u.Query()
	q.Set("connect_timeout", strconv.Itoa(max(1, int(window.Round(time.Second)/time.Second))))
	u.RawQuery = q.Encode()
	return u.String()
}

func closeQuietly(db *gorm.DB) {
	if db == nil {
		return
	}
	if sqlDB, err := db.DB(); err == nil {
		sqlDB.Close()
	}
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
		st := &Store{Postgres: true, Label: hidePassword(dsn)}
		// Reject a malformed DSN before any retry, in our words: the
		// parsers' messages quote the DSN with its password.
		if _, err := url.Parse(dsn); err != nil {
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return nil, nil, bad("--storage: invalid PostgreSQL DSN %s: %s", st.Label, scrub(err.Error(), dsn))
		}
		if _, err := pgconn.ParseConfig(dsn); err != nil {
			return nil, nil, bad("--storage: invalid PostgreSQL DSN %s: %s", st.Label, scrub(oneLine(err), dsn))
		}
		return postgres.Open(dsn), st, nil
	case strings.HasPrefix(dsn, "sqlite:///"):
		dsn = strings.TrimPrefix(dsn, "sqlite:///")
	case strings.Contains(dsn, "://"):
		return nil, nil, bad("--storage: unsupported DSN %q (allowed: sqlite:///PATH, a file path, postgres://user:pass@host:port/db)", hidePassword(dsn))
	}
	if dsn == "" {
		return nil, nil, bad("--storage: empty SQLite path")
	}
	// WAL lets readers run beside the writer; immediate transactions take
	// the write lock up front, so several writers queue on the busy timeout
	// instead of failing with "database is locked" on a lock upgrade.
	// synchronous=NORMAL syncs the WAL at checkpoints, not at every
	// commit: in WAL mode the file stays consistent through a crash of the
	// process or of the machine, and a power loss can only roll back the
	// last commits, whose trials the rescue then re-runs (the study still
	// ends at exactly its total, each number complete once). A sync per
	// commit cost 15 % of a 1,000-trial study's wall on this machine.
	q := "_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	return sqlite.New(sqlite.Config{DriverName: pureGoSQLite, DSN: "file:" + dsn + "?" + q}), &Store{Label: dsn}, nil
}

// pureGoSQLite is modernc.org/sqlite's driver name. gorm's SQLite dialect
// runs on it instead of its default, mattn/go-sqlite3, which needs cgo: a
// machine with Go and no C compiler must run studies.
const pureGoSQLite = "sqlite"

// scrub hides dsn's password where msg quotes it: in the DSN's
// user:PASSWORD@ (as written or URL-escaped), after password=, and as a
// word of its own; never inside another word (a password "p" once turned
// "dial tcp" into "dial tc***").
func scrub(msg, dsn string) string {
	pw := dsnPassword(dsn)
	if pw == "" {
		return msg
	}
	for _, form := range []string{pw, url.PathEscape(pw), url.QueryEscape(pw)} {
		msg = strings.ReplaceAll(msg, ":"+form+"@", ":***@")
		msg = strings.ReplaceAll(msg, "password="+form, "password=***")
	}
	var b strings.Builder
	for rest := msg; ; {
		i := strings.Index(rest, pw)
		if i < 0 {
			b.WriteString(rest)
			return b.String()
		}
		end := i + len(pw)
		if wordByte(rest, i-1) || wordByte(rest, end) {
			b.WriteString(rest[:end])
		} else {
			b.WriteString(rest[:i] + "***")
		}
		rest = rest[end:]
	}
}

// wordByte reports whether s[i] is a letter or digit (false outside s).
func wordByte(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return false
	}
	c := s[i]
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// dsnPassword is the password in a postgres:// DSN, "" if none.
func dsnPassword(dsn string) string {
	if u, err := url.Parse(dsn); err == nil {
		pw, _ := u.User.Password()
		return pw
	}
	if at, scheme := strings.LastIndex(dsn, "@"), strings.Index(dsn, "://"); at > scheme && scheme >= 0 {
		_, pw, _ := strings.Cut(dsn[scheme+3:at], ":")
		return pw
	}
	return ""
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

// Migrate creates goptuna's tables and ours. gorm's AutoMigrate checks
// for each table and then creates it, so two processes migrating a fresh
// database at once raced, and one failed ("index idx_study_rows_name
// already exists"): migrations run one at a time (migrating).
func (s *Store) Migrate() error {
	err := s.migrating(func(db *gorm.DB) error {
		if err := rdb.RunAutoMigrate(db); err != nil {
			return fmt.Errorf("storage %s: migrate goptuna tables: %s", s.Label, oneLine(err))
		}
		if err := db.Exec(trialsByStudy).Error; err != nil {
			return fmt.Errorf("storage %s: migrate goptuna tables: %s", s.Label, oneLine(err))
		}
		if err := db.AutoMigrate(&studyRow{}, &trialRow{}, &trialSeedRow{}, &enqueuedRow{}); err != nil {
			return fmt.Errorf("storage %s: migrate: %s", s.Label, oneLine(err))
		}
		m := db.Migrator()
		// Older databases have a study column "definition", NOT NULL without a
		// default, that nothing reads any more: new studies could not be added.
		if m.HasColumn(&studyRow{}, "definition") {
			if err := m.DropColumn(&studyRow{}, "definition"); err != nil {
				return fmt.Errorf("storage %s: migrate: drop study_rows.definition: %s", s.Label, oneLine(err))
			}
		}
		// idx_trial_report replaced idx_study_report when the violation columns
		// joined what a report reads per trial.
		if m.HasIndex(&trialRow{}, "idx_study_report") {
			if err := m.DropIndex(&trialRow{}, "idx_study_report"); err != nil {
				return fmt.Errorf("storage %s: migrate: drop idx_study_report: %s", s.Label, oneLine(err))
			}
		}
		// A study keeps every evidence request it was given; older databases
		// allowed one per kind.
		return s.dropOldEvidenceIndex(db)
	})
	s.colsMu.Lock()
	s.cols = nil // the columns may have changed: asked again
	s.colsMu.Unlock()
	return err
}

// migrateLock is the PostgreSQL advisory lock key migrations hold (any
// fixed number other programs on the database do not use: "optimize" in
// ASCII).
const migrateLock = 0x6f7074696d697a65

// migrating runs a migration in one transaction that no other process's
// migration runs beside: PostgreSQL takes migrateLock for the transaction,
// SQLite's immediate transactions (the DSN's _txlock) take the write lock
// at BEGIN, so a second migration waits and then finds the tables made.
func (s *Store) migrating(migrate func(db *gorm.DB) error) error {
	return s.db.Transaction(func(tx *gorm.DB) error {
		if s.Postgres {
			if err := tx.Exec("SELECT pg_advisory_xact_lock(?)", int64(migrateLock)).Error; err != nil {
				return fmt.Errorf("storage %s: migrate: lock: %s", s.Label, oneLine(err))
			}
		}
		return migrate(tx)
	})
}

// Goptuna returns goptuna's storage over the same database.
func (s *Store) Goptuna() goptuna.Storage {
	s.samplerOnce.Do(func() { s.sampler = newSamplerStorage(s) })
	return s.sampler
}

// Close releases the connection pool.
func (s *Store) Close() error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

func oneLine(err error) string { return errtext.OneLine(err.Error()) }
