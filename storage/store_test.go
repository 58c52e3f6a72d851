package storage

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

// Bad DSNs are usage errors that never quote the password; an unreachable
// server is retried only for $OPTIMIZE_CONNECT_TIMEOUT.
func TestOpenErrorsOneLineNoPassword(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	t.Setenv(ConnectTimeoutVar, "700ms")
	for _, c := range []struct {
		dsn string
		bad bool
	}{
		{"mysql://u:s3cret@h/db", true},
		{"postgres://u:s3cret@h:port/db", true},
		{"postgres://u:s3cret@h/db?sslmode=nonsense", true},
		{"sqlite:///", true},
		{"postgres://u:s3cret@" + closed + "/db?sslmode=disable", false},
	} {
		began := time.Now()
		_, err := Open(c.dsn)
		if err == nil || errors.Is(err, ErrBadDSN) != c.bad || strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "\n") {
			t.Errorf("Open(%q) = %v (want one line, bad DSN %v, no password)", c.dsn, err, c.bad)
		}
		if took := time.Since(began); took > 2*time.Second {
			t.Errorf("Open(%q) took %v with a 700ms window", c.dsn, took)
		}
	}
	t.Setenv(ConnectTimeoutVar, "soon")
	if _, err := Open("postgres://u@" + closed + "/db"); !errors.Is(err, ErrBadDSN) || !strings.Contains(err.Error(), ConnectTimeoutVar) {
		t.Errorf("bad %s: %v", ConnectTimeoutVar, err)
	}
}

func TestWithConnectTimeout(t *testing.T) {
	if got := withConnectTimeout("postgres://u@h/db?sslmode=disable", 10*time.Second); !strings.Contains(got, "connect_timeout=10") || !strings.Contains(got, "sslmode=disable") {
		t.Errorf("got %q", got)
	}
	if got := withConnectTimeout("postgres://u@h/db?connect_timeout=3", time.Second); got != "postgres://u@h/db?connect_timeout=3" {
		t.Errorf("a DSN's own connect_timeout was replaced: %q", got)
	}
}

// scrub masks the password where the message quotes it and nothing else:
// a one-letter password once turned "dial tcp" into "dial tc***".
func TestScrubMasksOnlyThePassword(t *testing.T) {
	for _, c := range []struct{ msg, dsn, want string }{
		{"dial tcp 127.0.0.1:5: connect: connection refused", "postgres://u:p@h/db",
			"dial tcp 127.0.0.1:5: connect: connection refused"},
		{`parse "postgres://u:p@h:x/db": invalid port`, "postgres://u:p@h:x/db",
			`parse "postgres://u:***@h:x/db": invalid port`},
		{"user=u password=s3cret host=h failed", "postgres://u:s3cret@h/db", "user=u password=*** host=h failed"},
		{"server said: s3cret is wrong; s3crets stay", "postgres://u:s3cret@h/db", "server said: *** is wrong; s3crets stay"},
		{`bad "postgres://u:a%2Fb@h/db"`, "postgres://u:a%2Fb@h/db", `bad "postgres://u:***@h/db"`},
		{"no password here", "postgres://u@h/db", "no password here"},
	} {
		if got := scrub(c.msg, c.dsn); got != c.want {
			t.Errorf("scrub(%q, %q) = %q, want %q", c.msg, c.dsn, got, c.want)
		}
	}
}
