// Package server is `optimize serve`: a JSON API over the study storage
// whose bodies are exactly the CLI's `--output json` for the same
// question, and the web dashboard that draws from it, embedded in the
// binary. Studies created or resumed through the API run in the server's
// own worker pool; `worker` processes on the same storage contribute as
// they do to any study.
package server

import (
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"optimize/studies"
)

// MaxBody bounds a request body; a larger one is refused with 413.
const MaxBody = 1 << 20

//go:embed web
var web embed.FS

// Config is what a server needs.
type Config struct {
	Addr  string // host:port to listen on
	Token string // required for writes when set; required to bind beyond loopback
	Env   *studies.Env
	Log   io.Writer // one line per request that fails, and per run that starts or ends
}

// Server serves the API and the dashboard.
type Server struct {
	cfg      Config
	mux      *http.ServeMux
	runs     *runs
	reports  *reports
	creating sync.Mutex
}

// New checks the configuration: a non-loopback address needs a token.
func New(cfg Config) (*Server, error) {
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("--addr: %q is not host:port (e.g. 127.0.0.1:8080)", cfg.Addr)
	}
	if !Loopback(host) && cfg.Token == "" {
		return nil, fmt.Errorf("--addr: %s is not a loopback address: give --token (or $OPTIMIZE_TOKEN) so that writes need it", cfg.Addr)
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	// Tables are made once, here, not by concurrent creates.
	if err := cfg.Env.Migrate(); err != nil {
		return nil, err
	}
	if err := cfg.Env.Store.MigrateEvidence(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, mux: http.NewServeMux(), runs: newRuns(cfg.Env, cfg.Log), reports: newReports(cfg.Env)}
	s.routes()
	return s, nil
}

// Loopback reports whether host names this machine only.
func Loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Handler is the server's HTTP handler (for tests and for Serve).
func (s *Server) Handler() http.Handler { return s.secure(s.mux) }

// Serve answers on ln until ctx ends, then shuts down cleanly: no new
// requests, requests in flight answered, and studies running here stop
// claiming trials while the trials in flight finish and are recorded (a
// trial that cannot finish is rescued by any worker once its lease
// expires), so nothing is lost.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		s.runs.stopAll()
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := srv.Shutdown(shutdown)
	s.runs.stopAll()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// secure adds the headers every answer carries and guards writes. The
// dashboard loads nothing from elsewhere, and the policy says so to the
// browser. Without a token the server is reachable from this machine only,
// but a web page open in a browser here could still send it requests: a
// Host that is not a loopback name (DNS rebinding) is refused, and a write
// must come from the server's own pages (no foreign Origin) as JSON (a
// cross-site form cannot send that type without asking first). With a
// token, every write must carry it.
func (s *Server) secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'")
		if s.cfg.Token == "" && !Loopback(hostOnly(r.Host)) {
			writeError(w, http.StatusMisdirectedRequest, fmt.Errorf("host %q: this server answers loopback names only (give --token to serve beyond loopback)", r.Host))
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if s.cfg.Token != "" && !s.authorized(r) {
				writeError(w, http.StatusUnauthorized, errors.New("writes need the header Authorization: Bearer TOKEN"))
				return
			}
			if o := r.Header.Get("Origin"); o != "" && o != "null" && hostOnly(strings.TrimPrefix(strings.TrimPrefix(o, "http://"), "https://")) != hostOnly(r.Host) {
				writeError(w, http.StatusForbidden, fmt.Errorf("origin %q: writes come from this server's own pages or from tools without an Origin", o))
				return
			}
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				writeError(w, http.StatusUnsupportedMediaType, fmt.Errorf("content type %q: writes send application/json", ct))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// hostOnly strips a port from host:port (and brackets from an IPv6 host).
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

func (s *Server) authorized(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.Token)) == 1
}

func (s *Server) routes() {
	api := []struct {
		pattern string
		handle  func(w http.ResponseWriter, r *http.Request) error
	}{
		{"GET /api/healthz", s.healthz},
		{"GET /api/studies", s.listStudies},
		{"POST /api/studies", s.createStudy},
		{"GET /api/studies/{name}", s.showStudy},
		{"GET /api/studies/{name}/trials", s.trials},
		{"GET /api/studies/{name}/trials/{n}", s.trial},
		{"GET /api/studies/{name}/pareto", s.pareto},
		{"GET /api/studies/{name}/history", s.history},
		{"GET /api/studies/{name}/validation", s.evidence("validation")},
		{"GET /api/studies/{name}/ablation", s.evidence("ablation")},
		{"POST /api/studies/{name}/resume", s.resumeStudy},
		{"GET /api/templates", s.listTemplates},
		{"GET /api/templates/{name}", s.showTemplate},
		{"GET /api/glossary", s.glossary},
	}
	for _, route := range api {
		s.mux.HandleFunc(route.pattern, func(w http.ResponseWriter, r *http.Request) {
			if err := route.handle(w, r); err != nil {
				status := statusOf(err)
				if status >= 500 {
					fmt.Fprintf(s.cfg.Log, "%s %s: %v\n", r.Method, r.URL.Path, err)
				}
				writeError(w, status, err)
			}
		})
	}
	s.mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Errorf("no API route %s %s", r.Method, r.URL.Path))
	})
	s.pages()
	assets, _ := fs.Sub(web, "web")
	files := http.FileServerFS(assets)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			writeError(w, http.StatusMethodNotAllowed, fmt.Errorf("%s %s: the dashboard is read-only", r.Method, r.URL.Path))
			return
		}
		files.ServeHTTP(w, r)
	})
}

// runs tracks the studies this server is running.
type runs struct {
	env    *studies.Env
	log    io.Writer
	mu     sync.Mutex
	by     map[string]*run
	wg     sync.WaitGroup
	closed bool // the server is stopping: no new run starts
}

type run struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func newRuns(env *studies.Env, log io.Writer) *runs {
	return &runs{env: env, log: log, by: map[string]*run{}}
}

// active reports whether the study is running in this server.
func (rs *runs) active(name string) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	_, ok := rs.by[name]
	return ok
}

// start runs the study in the background until it is complete or the
// server stops; false when it is running here already.
func (rs *runs) start(name string) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if _, ok := rs.by[name]; ok || rs.closed {
		return false
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &run{cancel: cancel, done: make(chan struct{})}
	rs.by[name] = r
	rs.wg.Add(1)
	go func() {
		defer rs.wg.Done()
		defer close(r.done)
		defer func() {
			rs.mu.Lock()
			delete(rs.by, name)
			rs.mu.Unlock()
		}()
		env := *rs.env
		env.Progress = io.Discard // no progress bars from a server
		row, err := env.Store.StudyByName(name)
		if err == nil {
			fmt.Fprintf(rs.log, "study %s: running\n", name)
			err = env.Run(ctx, row)
		}
		switch {
		case errors.Is(err, context.Canceled):
			fmt.Fprintf(rs.log, "study %s: stopped with the server (resume it to continue)\n", name)
		case err != nil:
			fmt.Fprintf(rs.log, "study %s: %v\n", name, err)
		default:
			fmt.Fprintf(rs.log, "study %s: complete\n", name)
		}
	}()
	return true
}

// stopAll stops every run (trials in flight finish and are recorded) and
// waits for them.
func (rs *runs) stopAll() {
	rs.mu.Lock()
	rs.closed = true
	for _, r := range rs.by {
		r.cancel()
	}
	rs.mu.Unlock()
	rs.wg.Wait()
}
