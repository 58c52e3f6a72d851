// Package server is `optimize serve`: a JSON API over the study storage
// whose bodies are exactly the CLI's `--output json` for the same
// question, and the web dashboard that draws from it, embedded in the
// binary. Studies created or resumed through the API run in the server's
// own worker pool; `worker` processes on the same storage contribute as
// they do to any study.
package server

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"sync"
	"time"

	"optimize/strategies"
	"optimize/studies"
	"optimize/studies/report"
)

// MaxBody bounds a request body; a larger one is refused with 413.
const MaxBody = 1 << 20

//go:embed web
var web embed.FS

// Config is what a server needs.
type Config struct {
	Addr  string // host:port to listen on
	Token string // when set, every request needs it (see access.go); required to bind beyond loopback
	// PublicRead lets GET and HEAD through without the token (writes
	// still need it); only with a token.
	PublicRead bool
	// DataDir is the one directory whose files a request may name as a
	// workload (datadir.go); "" = none, requests name built-ins only.
	DataDir string
	// SessionKey signs the browsers' session cookies; nil draws a new one
	// at start, so a restart signs every browser out (login.go).
	SessionKey []byte
	// LoginBackoff is the first wait after too many wrong tokens from one
	// client, doubling from there (0: 2 s).
	LoginBackoff time.Duration
	Env          *studies.Env // its Limits bound every request's work and the studies running at once
	Log          io.Writer    // one line per request that fails, and per run that starts or ends
}

// Server serves the API and the dashboard.
type Server struct {
	cfg      Config
	access   access
	data     dataDir
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
		return nil, fmt.Errorf("--addr: %s is not a loopback address: give --token (or $OPTIMIZE_TOKEN) so that every request needs it", cfg.Addr)
	}
	if cfg.PublicRead && cfg.Token == "" {
		return nil, errors.New("--public-read: only with --token (without a token nothing needs one)")
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if len(cfg.SessionKey) > 0 && len(cfg.SessionKey) < SessionKeyBytes {
		return nil, fmt.Errorf("session key: %d bytes, need at least %d", len(cfg.SessionKey), SessionKeyBytes)
	}
	data, err := newDataDir(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	// Tables are made once, here, not by concurrent creates.
	if err := cfg.Env.Migrate(); err != nil {
		return nil, err
	}
	if err := cfg.Env.Store.MigrateEvidence(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, access: newAccess(cfg), data: data, mux: http.NewServeMux(), runs: newRuns(cfg.Env, cfg.Log), reports: newReports(cfg.Env)}
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

// apiRoute is one route of the JSON API: its pattern, its handler, and
// what its bodies are, which the OpenAPI document (openapi.go) is
// generated from.
type apiRoute struct {
	pattern string
	handle  func(w http.ResponseWriter, r *http.Request) error
	summary string
	request any // a value of the request body's type, nil for none
	answer  any // a value of the success body's type
}

// exportRows is the answer of the export routes: one object per trial
// whose keys are the template's parameters and objectives (as
// `study export --format json` writes them), so no Go type fixes them.
type exportRows []map[string]any

// apiRoutes are the API's routes.
func (s *Server) apiRoutes() []apiRoute {
	return []apiRoute{
		{"GET /api/healthz", s.healthz, "the server is up, and on which storage", nil, healthBody{}},
		{"GET /api/studies", s.listStudies, "study list --output json", nil, []report.StudySummary{}},
		{"POST /api/studies", s.createStudy, "study create: the baseline runs before the answer (202, the study's list row); the trials run in the server", createRequest{}, report.StudySummary{}},
		{"GET /api/studies/{name}", s.showStudy, "study show NAME --output json", nil, report.ShowJSON{}},
		{"GET /api/studies/{name}/trials", s.trials, "study export NAME --format json", nil, exportRows{}},
		{"GET /api/studies/{name}/trials/{n}", s.trial, "study show NAME --trial N --output json", nil, report.TrialDetail{}},
		{"GET /api/studies/{name}/pareto", s.pareto, "study export NAME --pareto --format json", nil, exportRows{}},
		{"GET /api/studies/{name}/history", s.history, "study export NAME --history --format json", nil, report.HistoryJSON{}},
		{"GET /api/studies/{name}/validation", s.evidence(report.EvidenceValidation), "study export NAME --validation --format json", nil, report.Validation{}},
		{"GET /api/studies/{name}/ablation", s.evidence(report.EvidenceAblation), "study export NAME --ablation --format json", nil, report.Ablation{}},
		{"POST /api/studies/{name}/resume", s.resumeStudy, "study resume NAME: runs on to its total in the server (202)", nil, report.StudySummary{}},
		{"POST /api/studies/{name}/enqueue", s.enqueueTrial, "study enqueue NAME: the vector runs as the study's next trial, one of its total (grown by one when none is left); resume runs it unless the study runs here (202)", enqueueRequest{}, enqueueAnswer{}},
		{"DELETE /api/studies/{name}/run", s.stopStudy, "stops a study running in the server: no more trials are claimed, those in flight are recorded (200 stopped, 202 stopping)", nil, report.StudySummary{}},
		{"GET /api/templates", s.listTemplates, "template list --output json", nil, []strategies.TemplateSummary{}},
		{"GET /api/templates/{name}", s.showTemplate, "template show NAME --output json", nil, strategies.TemplateJSON{}},
		{"GET /api/glossary", s.glossary, "study show --explain --output json", nil, report.GlossaryDoc{}},
		{"GET /api/openapi.json", s.openAPI, "this document", nil, map[string]any{}},
	}
}

func (s *Server) routes() {
	for _, route := range s.apiRoutes() {
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
	// An API path no route matches is a JSON 404, per method so that it
	// does not clash with the dashboard's "GET /".
	for _, m := range probeMethods {
		if m != http.MethodHead { // GET patterns answer HEAD too
			s.mux.HandleFunc(m+" "+apiFallback, noRoute)
		}
	}
	s.pages()
	assets, _ := fs.Sub(web, "web")
	files := http.FileServerFS(assets)
	s.mux.Handle("GET /", files)
	if s.access.token != "" {
		s.mux.HandleFunc("GET "+loginPath, func(w http.ResponseWriter, r *http.Request) {
			s.loginPage(w, http.StatusOK, r.URL.Query().Get("next"), false)
		})
		s.mux.HandleFunc("POST "+loginPath, s.login)
	}
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

// Why a run cannot start.
var (
	errRunningHere = errors.New("running in this server already")
	errStopping    = errors.New("the server is stopping")
)

// start runs the study in the background until it is complete, it is
// stopped or the server stops. It refuses a study running here already
// and, past the limit of studies running at once, any other.
func (rs *runs) start(name string) error {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if _, ok := rs.by[name]; ok {
		return errRunningHere
	}
	if err := rs.roomLocked(); err != nil {
		return err
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
			fmt.Fprintf(rs.log, "study %s: stopped (trials in flight were recorded; resume it to continue)\n", name)
		case err != nil:
			fmt.Fprintf(rs.log, "study %s: %v\n", name, err)
		default:
			fmt.Fprintf(rs.log, "study %s: complete\n", name)
		}
	}()
	return nil
}

// room reports whether one more study may start: the server is not
// stopping and runs fewer than its limit.
func (rs *runs) room() error {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.roomLocked()
}

// roomLocked is room with rs.mu held.
func (rs *runs) roomLocked() error {
	if rs.closed {
		return errStopping
	}
	return rs.env.Limits.Check(studies.LimitRunning, "studies running", int64(len(rs.by)+1))
}

// stop stops the study's run here: it claims no more trials, and the
// trials in flight finish and are recorded. The channel closes when the
// run has ended; false when the study is not running here.
func (rs *runs) stop(name string) (<-chan struct{}, bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	r, ok := rs.by[name]
	if !ok {
		return nil, false
	}
	r.cancel()
	return r.done, true
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
