package storage

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"
)

// A lost connection is told from the server's refusals and from errors
// of the request itself.
func TestLostConnectionClassification(t *testing.T) {
	pg := func(code string) error { return fmt.Errorf("query: %w", &pgconn.PgError{Code: code}) }
	for _, c := range []struct {
		name string
		err  error
		lost bool
	}{
		{"server shutting down (pg_ctl stop -m fast)", pg("57P01"), true},
		{"server starting up", pg("57P03"), true},
		{"connection failure", pg("08006"), true},
		{"too many connections", pg("53300"), true},
		{"connection closed mid-reply", fmt.Errorf("failed to receive message: %w", io.ErrUnexpectedEOF), true},
		{"connection refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{"connection reset", fmt.Errorf("write: %w", syscall.ECONNRESET), true},
		{"wrong password", pg("28P01"), false},
		{"no such database", pg("3D000"), false},
		{"no such table", pg("42P01"), false},
		{"no such column", pg("42703"), false},
		{"unique violation", pg("23505"), false},
		{"lease lost", ErrLeaseLost, false},
		{"no row", gorm.ErrRecordNotFound, false},
		{"none", nil, false},
	} {
		if got := lostConnection(c.err); got != c.lost {
			t.Errorf("%s (%v): lost connection %v, want %v", c.name, c.err, got, c.lost)
		}
	}
}

// retry runs an operation again while the connection is lost, within the
// window; a refusal, an error of the request, or SQLite is answered at
// once; past the window the error says which setting bounds it.
func TestRetryIsBounded(t *testing.T) {
	pgStore := &Store{Postgres: true, Label: "pg", retryFor: time.Second}
	lost := fmt.Errorf("read: %w", io.ErrUnexpectedEOF)
	calls := 0
	err := pgStore.retry(t.Context(), func() error {
		calls++
		if calls < 3 {
			return lost
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Errorf("lost twice then back: %v after %d calls, want success after 3", err, calls)
	}

	for name, c := range map[string]struct {
		st  *Store
		err error
	}{
		"refusal": {pgStore, &pgconn.PgError{Code: "28P01"}},
		"request": {pgStore, ErrLeaseLost},
		"sqlite":  {&Store{Label: "s.db", retryFor: time.Second}, lost},
	} {
		calls = 0
		err := c.st.retry(t.Context(), func() error { calls++; return c.err })
		if !errors.Is(err, c.err) || calls != 1 {
			t.Errorf("%s: %v after %d calls, want its error after 1", name, err, calls)
		}
	}

	calls = 0
	began := time.Now()
	err = pgStore.retry(t.Context(), func() error { calls++; return lost })
	took := time.Since(began)
	if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), RetryWindowVar) || took > 1500*time.Millisecond || calls < 3 {
		t.Errorf("always lost: %v after %d calls in %v; want the error naming $%s within the 1 s window, after several calls",
			err, calls, took, RetryWindowVar)
	}
}
