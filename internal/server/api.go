package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"optimize/simcore/errtext"
	"optimize/storage"
	"optimize/strategies"
	"optimize/studies"
	"optimize/studies/report"
)

// statusError carries an HTTP status.
type statusError struct {
	status int
	err    error
}

func (e statusError) Error() string { return e.err.Error() }
func (e statusError) Unwrap() error { return e.err }

func withStatus(status int, format string, args ...any) error {
	return statusError{status, fmt.Errorf(format, args...)}
}

// statusOf maps an error to its HTTP status: the user's mistake is 400,
// an unknown study or template 404, a clash with what exists 409.
func statusOf(err error) int {
	var se statusError
	var ue errtext.UsageError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &se):
		return se.status
	case errors.As(err, &mbe):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, storage.ErrStudyNotFound), errors.Is(err, storage.ErrNoDatabase):
		return http.StatusNotFound
	case errors.As(err, &ue):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// errorBody is every error's JSON.
type errorBody struct {
	Error string `json:"error"`
}

// maxErrorText bounds an error's text: every message quotes input only
// clipped (errtext.Quote), and this catches any that would not.
const maxErrorText = 4 << 10

func writeError(w http.ResponseWriter, status int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = report.WriteJSON(w, errorBody{Error: errtext.Clip(err.Error(), maxErrorText)})
}

// writeBody sends what fill writes, as JSON, once it has all been written
// (a failure half-way is an error response, not half a document).
func writeBody(w http.ResponseWriter, status int, fill func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := fill(&buf); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, err := w.Write(buf.Bytes())
	return err
}

func writeValue(w http.ResponseWriter, status int, v any) error {
	return writeBody(w, status, func(b io.Writer) error { return report.WriteJSON(b, v) })
}

// healthBody is GET /api/healthz's answer.
type healthBody struct {
	Status  string `json:"status"`  // "ok"
	Storage string `json:"storage"` // the storage's label (a DSN's password hidden)
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) error {
	return writeValue(w, http.StatusOK, healthBody{Status: "ok", Storage: s.cfg.Env.Store.Label})
}

// listStudies is `study list --output json`.
func (s *Server) listStudies(w http.ResponseWriter, _ *http.Request) error {
	list, err := report.Summaries(s.cfg.Env.Store, s.cfg.Env.Registry)
	if err != nil && !missingTables(err) {
		return err
	}
	if list == nil {
		list = []report.StudySummary{}
	}
	return writeValue(w, http.StatusOK, list)
}

// missingTables recognises storage where no study was ever created.
func missingTables(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "no such table") || strings.Contains(msg, "does not exist")
}

// report is the study named in the path, with its stored evidence.
func (s *Server) report(r *http.Request) (*report.Report, error) {
	return s.reports.get(r.PathValue("name"))
}

// showStudy is `study show NAME --output json`.
func (s *Server) showStudy(w http.ResponseWriter, r *http.Request) error {
	rep, err := s.report(r)
	if err != nil {
		return err
	}
	return writeBody(w, http.StatusOK, checked(rep, func(b io.Writer) error { return report.WriteJSON(b, rep.JSON()) }))
}

// trials is `study export NAME --format json`.
func (s *Server) trials(w http.ResponseWriter, r *http.Request) error {
	rep, err := s.report(r)
	if err != nil {
		return err
	}
	return writeBody(w, http.StatusOK, checked(rep, func(b io.Writer) error { return rep.Export(b, "json", false) }))
}

// trial is `study show NAME --trial N --output json`.
func (s *Server) trial(w http.ResponseWriter, r *http.Request) error {
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil {
		return withStatus(http.StatusBadRequest, "trial: %s is not a trial number", errtext.Quote(r.PathValue("n")))
	}
	rep, err := s.report(r)
	if err != nil {
		return err
	}
	d, ok := rep.Trial(n)
	if !ok {
		return withStatus(http.StatusNotFound, "study %s has no complete trial %d", rep.Study.Name, n)
	}
	return writeBody(w, http.StatusOK, checked(rep, func(b io.Writer) error { return report.WriteJSON(b, d) }))
}

// pareto is `study export NAME --pareto --format json`.
func (s *Server) pareto(w http.ResponseWriter, r *http.Request) error {
	rep, err := s.report(r)
	if err != nil {
		return err
	}
	return writeBody(w, http.StatusOK, checked(rep, func(b io.Writer) error { return rep.Export(b, "json", true) }))
}

// history is `study export NAME --history --format json`.
func (s *Server) history(w http.ResponseWriter, r *http.Request) error {
	rep, err := s.report(r)
	if err != nil {
		return err
	}
	return writeValue(w, http.StatusOK, rep.History())
}

// evidence is `study export NAME --validation|--ablation --format json`.
func (s *Server) evidence(kind report.Evidence) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		rep, err := s.report(r)
		if err != nil {
			return err
		}
		err = writeBody(w, http.StatusOK, func(b io.Writer) error { return rep.ExportEvidence(b, kind, "json") })
		if errors.Is(err, report.ErrNoEvidence) {
			return statusError{http.StatusNotFound, err}
		}
		return err
	}
}

// createRequest is POST /api/studies: `study create`'s arguments.
type createRequest struct {
	Template    string  `json:"template"`
	Name        string  `json:"name"`
	Trials      *int    `json:"trials"`
	Seeds       []int64 `json:"seeds"`
	Workload    string  `json:"workload"`
	Sampler     string  `json:"sampler"`
	SamplerSeed *int64  `json:"sampler_seed"`
	From        string  `json:"from"`
	// Deployable is study create --deployable.
	Deployable bool `json:"deployable"`
}

// createStudy creates the study (its baseline runs before the answer) and
// runs its trials in the background; 202 with the study's list row.
func (s *Server) createStudy(w http.ResponseWriter, r *http.Request) error {
	o, err := s.createOptions(w, r)
	if err != nil {
		return err
	}
	// One create at a time: two requests for one name would otherwise race
	// past the existence check.
	s.creating.Lock()
	defer s.creating.Unlock()
	if _, err := s.cfg.Env.Store.StudyByName(o.Name); err == nil {
		return withStatus(http.StatusConflict, "study %q already exists (resume it, or delete it first)", o.Name)
	}
	// Refused before the baseline runs: a study that could not start
	// would be left behind.
	if err := s.runs.room(); err != nil {
		return s.cannotRun("", err)
	}
	env := *s.cfg.Env
	env.Progress = io.Discard
	row, err := env.Create(r.Context(), o)
	if err != nil {
		return byField[createRequest](err)
	}
	if err := s.runs.start(row.Name); err != nil {
		return s.cannotRun(row.Name, err)
	}
	return s.studyRow(w, http.StatusAccepted, row.Name)
}

// createOptions reads and checks a create request: the same checks and
// limits as `study create`, and a workload that names a built-in or a
// file under the data directory (datadir.go). Nothing is written.
func (s *Server) createOptions(w http.ResponseWriter, r *http.Request) (studies.CreateOptions, error) {
	var req createRequest
	if err := decode(w, r, &req, jsonFields[createRequest]()); err != nil {
		return studies.CreateOptions{}, err
	}
	o := studies.Defaults()
	o.Template, o.Name, o.Sampler, o.From, o.Deployable = req.Template, req.Name, req.Sampler, req.From, req.Deployable
	if req.Trials != nil {
		o.Trials = *req.Trials
	}
	if req.Seeds != nil {
		o.Seeds = req.Seeds
	}
	if req.SamplerSeed != nil {
		o.SamplerSeed = *req.SamplerSeed
	}
	if o.Template == "" {
		return o, withStatus(http.StatusBadRequest, "template: required (GET /api/templates lists them)")
	}
	if _, err := s.cfg.Env.Registry.Get(o.Template); err != nil {
		return o, withStatus(http.StatusBadRequest, "template: %v", err)
	}
	// A request's workload is checked; the template's own (when it names
	// none) is the operator's, who installed the template.
	if req.Workload != "" {
		var err error
		if o.Workload, err = s.data.workload(req.Workload); err != nil {
			return o, err
		}
	}
	if err := studies.Validate(s.cfg.Env.Registry, &o, s.cfg.Env.Limits); err != nil {
		return o, byField[createRequest](err)
	}
	return o, nil
}

// cannotRun is the answer when a study cannot start here: 409 when it
// runs here already, 429 past the limit of studies running at once, 503
// when the server is stopping. created names a study just made.
func (s *Server) cannotRun(created string, err error) error {
	status := http.StatusTooManyRequests
	switch {
	case errors.Is(err, errRunningHere):
		status = http.StatusConflict
	case errors.Is(err, errStopping):
		status = http.StatusServiceUnavailable
	}
	if created != "" {
		return withStatus(status, "study %s created, but it cannot start: %v: resume it later", created, err)
	}
	return withStatus(status, "%v", err)
}

// resumeStudy runs a stopped study on to its total; 409 when it is
// running here already or complete.
func (s *Server) resumeStudy(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	row, err := s.cfg.Env.Store.StudyByName(name)
	if err != nil {
		return err
	}
	complete, _, err := s.cfg.Env.Store.Counts(row.ID)
	if err != nil {
		return err
	}
	if int(complete) >= row.TrialsTotal {
		return withStatus(http.StatusConflict, "study %s is complete (%d/%d trials)", name, complete, row.TrialsTotal)
	}
	if err := s.runs.start(name); err != nil {
		return withStatus(statusOf(s.cannotRun("", err)), "study %s: %v", name, err)
	}
	return s.studyRow(w, http.StatusAccepted, name)
}

// stopWait is how long DELETE /api/studies/NAME/run waits for the trials
// in flight before it answers 202 (stopping) instead of 200 (stopped).
const stopWait = 20 * time.Second

// stopStudy stops a study running in this server: it claims no more
// trials, the trials in flight finish and are recorded, and resume runs
// it on to its total later. 200 with the list row once it has stopped,
// 202 while trials in flight still finish, 409 when it is not running
// here.
func (s *Server) stopStudy(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	if _, err := s.cfg.Env.Store.StudyByName(name); err != nil {
		return err
	}
	done, ok := s.runs.stop(name)
	if !ok {
		return withStatus(http.StatusConflict, "study %s is not running in this server (workers elsewhere stop with their own process)", name)
	}
	select {
	case <-done:
		return s.studyRow(w, http.StatusOK, name)
	case <-time.After(stopWait):
	case <-r.Context().Done():
	}
	return s.studyRow(w, http.StatusAccepted, name)
}

// studyRow answers with the study's list row.
func (s *Server) studyRow(w http.ResponseWriter, status int, name string) error {
	list, err := report.Summaries(s.cfg.Env.Store, s.cfg.Env.Registry)
	if err != nil {
		return err
	}
	for _, row := range list {
		if row.Name == name {
			return writeValue(w, status, row)
		}
	}
	return fmt.Errorf("study %s vanished", name)
}

// listTemplates is `template list --output json`.
func (s *Server) listTemplates(w http.ResponseWriter, _ *http.Request) error {
	list := []strategies.TemplateSummary{}
	for _, t := range s.cfg.Env.Registry.Templates() {
		list = append(list, t.Summary())
	}
	return writeValue(w, http.StatusOK, list)
}

// showTemplate is `template show NAME --output json`.
func (s *Server) showTemplate(w http.ResponseWriter, r *http.Request) error {
	t, err := s.cfg.Env.Registry.Get(r.PathValue("name"))
	if err != nil {
		return statusError{http.StatusNotFound, err}
	}
	return writeValue(w, http.StatusOK, t.JSON())
}

// glossary is `study show --explain --output json`: the dashboard's help
// panel and units read it, so that the page holds no copy of the text.
func (s *Server) glossary(w http.ResponseWriter, _ *http.Request) error {
	return writeValue(w, http.StatusOK, report.Glossary())
}

// decode reads a size-limited JSON body strictly: unknown fields and
// trailing data are errors naming what is wrong; a value of the wrong
// type is an error naming its field.
func decode(w http.ResponseWriter, r *http.Request, v any, fields []string) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		var ute *json.UnmarshalTypeError
		switch {
		case errors.As(err, &mbe):
			return fmt.Errorf("body: larger than %d bytes: %w", MaxBody, err)
		case errors.As(err, &ute) && ute.Field != "":
			return withStatus(http.StatusBadRequest, "%s: a JSON %s is not %s", ute.Field, ute.Value, jsonKind(ute.Type))
		}
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return withStatus(http.StatusBadRequest, "%s: not a field of this request (fields: %s)", errtext.Clip(strings.Trim(name, `"`), errtext.EchoLimit), strings.Join(fields, ", "))
		}
		return withStatus(http.StatusBadRequest, "body: malformed JSON: %v", err)
	}
	if dec.More() {
		return withStatus(http.StatusBadRequest, "body: one JSON object expected, found more")
	}
	return nil
}

// checked fails a document built from a trial whose metrics could not be
// read (it would show zeros).
func checked(rep *report.Report, fill func(io.Writer) error) func(io.Writer) error {
	return func(w io.Writer) error {
		if err := fill(w); err != nil {
			return err
		}
		return rep.DetailErr()
	}
}
