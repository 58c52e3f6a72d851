package pgtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Server is a PostgreSQL server of a test's own, in a temporary
// directory, listening on a free loopback port: a test may stop and
// restart it (DB's shared server serves other tests meanwhile).
type Server struct {
	t        testing.TB
	bin, dir string
	Port     int
}

// StartServer initialises and starts a server for t, stopped and removed
// when t ends. It skips t, saying so, where no PostgreSQL binaries are
// installed (Debian's postgresql package puts them under
// /usr/lib/postgresql/VERSION/bin, the newest of which is used; else
// pg_ctl and initdb on $PATH). initdb and postgres refuse to run as root:
// as root they run as the user postgres.
func StartServer(t testing.TB) *Server {
	t.Helper()
	bin := binDir()
	if bin == "" {
		t.Skip("PostgreSQL server tests skipped: no pg_ctl and initdb under /usr/lib/postgresql/*/bin or on $PATH")
	}
	dir, err := os.MkdirTemp("", "optimize-pgtest-")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{t: t, bin: bin, dir: dir}
	t.Cleanup(func() {
		_ = s.pgCtl("stop", "-m", "immediate") // a server already stopped says so; nothing to do
		os.RemoveAll(dir)
	})
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skipf("PostgreSQL server tests skipped: running as root and no user postgres to run the server as: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := s.run("initdb", "-D", s.data(), "-A", "trust", "-U", "postgres", "--no-sync"); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	s.Port = freePort(t)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	return s
}

// DSN is the DSN of database name on the server, as the user postgres.
func (s *Server) DSN(name string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.Port, name)
}

// Start starts the stopped server on its port and waits until it accepts
// connections.
func (s *Server) Start() error {
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c fsync=off", s.Port, s.dir)
	return s.pgCtl("start", "-l", filepath.Join(s.dir, "server.log"), "-t", "30", "-o", opts)
}

// Stop stops the server: mode "fast" ends every session (their
// transactions roll back), "immediate" kills the server at once (it
// recovers from its log on the next start).
func (s *Server) Stop(mode string) error { return s.pgCtl("stop", "-m", mode) }

// Log is the server's log so far, for a failing test's message.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
	return string(b)
}

func (s *Server) data() string { return filepath.Join(s.dir, "data") }

func (s *Server) pgCtl(action string, args ...string) error {
	out, err := s.run("pg_ctl", append([]string{"-D", s.data(), "-w", action}, args...)...)
	if err != nil {
		return fmt.Errorf("pg_ctl %s: %v: %s", action, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// run runs one of the server's programs, as the user postgres when root.
func (s *Server) run(program string, args ...string) ([]byte, error) {
	path := filepath.Join(s.bin, program)
	if os.Geteuid() == 0 {
		return exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...).CombinedOutput()
	}
	return exec.Command(path, args...).CombinedOutput()
}

// binDir finds the directory of pg_ctl and initdb, or "".
func binDir() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	// Newest major version first: "15" after "9" needs a numeric sort.
	version := func(d string) int { v, _ := strconv.Atoi(filepath.Base(filepath.Dir(d))); return v }
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	for _, d := range dirs {
		if executable(filepath.Join(d, "pg_ctl")) && executable(filepath.Join(d, "initdb")) {
			return d
		}
	}
	return ""
}

func executable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// freePort is a loopback TCP port nothing listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
