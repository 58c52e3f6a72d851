package storage

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"
)

// A PostgreSQL server may go away under a running study (a restart, a
// failover, a network cut). The store then waits for it and retries, for
// at most the retry window, so that workers, `study create/resume` and
// `serve` carry on where they were: a statement outside a transaction is
// sent again (ours are reads and idempotent writes), a transaction is run
// again whole from its first statement. Only errors that say the
// connection was lost are retried; the server's own refusals
// (authentication, no such database, no such table or column) and every
// other error end the operation at once. SQLite has no connection to lose
// (its "database is locked" is the busy timeout's); it is never retried.

// RetryWindowVar names the environment variable that bounds how long the
// store keeps retrying a PostgreSQL server it lost (a Go duration; 0 for
// no retry).
const RetryWindowVar = "OPTIMIZE_STORAGE_RETRY"

// DefaultRetryWindow is the retry window when $OPTIMIZE_STORAGE_RETRY is
// unset: a server restart or a managed database's failover takes seconds
// to a minute.
const DefaultRetryWindow = 2 * time.Minute

// Retries wait firstRetryDelay, then twice as long each time, at most
// maxRetryDelay: an operation asks again 0.1, 0.3, 0.7, 1.5, 2.5, 3.5, ...
// seconds after its first failure, so a server back after a restart is
// seen within a second of it.
const (
	firstRetryDelay = 100 * time.Millisecond
	maxRetryDelay   = time.Second
)

func retryWindow() (time.Duration, error) {
	v := os.Getenv(RetryWindowVar)
	if v == "" {
		return DefaultRetryWindow, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, bad("$%s: want a duration such as 2m, got %q", RetryWindowVar, v)
	}
	return d, nil
}

// lostConnection reports whether err says the connection to the server
// was lost or could not be made: waiting may cure it. False for the
// server's own answers to a request (constraint, syntax, schema,
// authentication, no such database), which would come back the same.
func lostConnection(err error) bool {
	if err == nil {
		return false
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch pg.Code {
		case "57P01", // admin_shutdown: the server is stopping (pg_ctl stop -m fast)
			"57P02", // crash_shutdown: another backend crashed
			"57P03", // cannot_connect_now: starting up or shutting down
			"53300", // too_many_connections
			"40001", // serialization_failure: the transaction may be run again
			"40P01": // deadlock_detected: idem
			return true
		}
		return strings.HasPrefix(pg.Code, "08") // connection_exception
	}
	var retryable interface{ SafeToRetry() bool }
	if errors.As(err, &retryable) && retryable.SafeToRetry() {
		return true // pgconn: nothing was sent on a dead connection
	}
	var netErr net.Error
	return errors.As(err, &netErr) || pgconn.Timeout(err) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNABORTED)
}

// retryStartKey carries, in a context, when the outermost retrying
// operation began, so that a retried statement inside a retried
// transaction shares its window instead of starting one of its own.
type retryStartKey struct{}

// retry runs fn, and again while it fails with a lost connection, for at
// most the store's retry window counted from the outermost retry's start
// (or ctx's end). The error after the window says so.
func (s *Store) retry(ctx context.Context, fn func() error) error {
	err := fn()
	if err == nil || !s.Postgres || s.retryFor <= 0 || !lostConnection(err) {
		return err
	}
	start, _ := ctx.Value(retryStartKey{}).(time.Time)
	if start.IsZero() {
		start = time.Now()
	}
	s.outage.lost(s.Label, err, s.retryFor)
	for delay := firstRetryDelay; ; delay = min(2*delay, maxRetryDelay) {
		if time.Since(start)+delay > s.retryFor {
			return fmt.Errorf("%w (database unreachable for %s; $%s sets how long to wait)",
				err, time.Since(start).Round(100*time.Millisecond), RetryWindowVar)
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
		if err = fn(); !lostConnection(err) {
			s.outage.back(s.Label)
			return err
		}
	}
}

// transaction runs fn in a transaction, and runs it again whole in a new
// transaction while the connection is lost (see retry): fn must leave
// nothing behind outside the database that a second run would double.
func (s *Store) transaction(fn func(tx *gorm.DB) error) error {
	ctx := context.WithValue(context.Background(), retryStartKey{}, time.Now())
	return s.retry(ctx, func() error { return s.DB.WithContext(ctx).Transaction(fn) })
}

// outage reports a lost connection once when it is lost and once when it
// is back, however many operations wait on it meanwhile.
type outage struct {
	mu    sync.Mutex
	w     io.Writer
	since time.Time // zero while connected
}

func (o *outage) lost(label string, err error, window time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.since.IsZero() {
		return
	}
	o.since = time.Now()
	if o.w != nil {
		fmt.Fprintf(o.w, "storage %s: connection lost (%s); retrying for up to %s ($%s)\n", label, oneLine(err), window, RetryWindowVar)
	}
}

func (o *outage) back(label string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.since.IsZero() {
		return
	}
	if o.w != nil {
		fmt.Fprintf(o.w, "storage %s: connection back after %s\n", label, time.Since(o.since).Round(100*time.Millisecond))
	}
	o.since = time.Time{}
}

// ReportOutages makes the store write one line to w when it loses the
// database's connection and one when it has it back.
func (s *Store) ReportOutages(w io.Writer) {
	s.outage.mu.Lock()
	s.outage.w = w
	s.outage.mu.Unlock()
}

// retryingPool is gorm's connection pool for PostgreSQL: database/sql's
// pool with every statement sent outside a transaction, and every
// transaction's BEGIN, retried while the connection is lost. Statements
// inside a transaction go to the transaction's connection, not here: the
// transaction is retried whole (Store.transaction). Single writes run
// outside a transaction (gorm's SkipDefaultTransaction), so that they are
// retried here too; each is one statement, atomic without one.
type retryingPool struct {
	db    *sql.DB
	store *Store
}

func (p *retryingPool) PrepareContext(ctx context.Context, query string) (stmt *sql.Stmt, err error) {
	err = p.store.retry(ctx, func() error { stmt, err = p.db.PrepareContext(ctx, query); return err })
	return stmt, err
}

func (p *retryingPool) ExecContext(ctx context.Context, query string, args ...any) (res sql.Result, err error) {
	err = p.store.retry(ctx, func() error { res, err = p.db.ExecContext(ctx, query, args...); return err })
	return res, err
}

func (p *retryingPool) QueryContext(ctx context.Context, query string, args ...any) (rows *sql.Rows, err error) {
	err = p.store.retry(ctx, func() error { rows, err = p.db.QueryContext(ctx, query, args...); return err })
	return rows, err
}

func (p *retryingPool) QueryRowContext(ctx context.Context, query string, args ...any) (row *sql.Row) {
	_ = p.store.retry(ctx, func() error { row = p.db.QueryRowContext(ctx, query, args...); return row.Err() })
	return row // its error, if any, comes with Scan
}

func (p *retryingPool) BeginTx(ctx context.Context, opts *sql.TxOptions) (tx *sql.Tx, err error) {
	err = p.store.retry(ctx, func() error { tx, err = p.db.BeginTx(ctx, opts); return err })
	return tx, err
}

// GetDBConn lets gorm's DB() find the pool (Close, Ping).
func (p *retryingPool) GetDBConn() (*sql.DB, error) { return p.db, nil }
