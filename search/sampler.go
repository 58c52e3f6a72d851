package search

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/c-bata/goptuna"

	"optimize/simcore/errtext"
)

// Method selects how parameter vectors are proposed.
type Method string

const (
	// MethodTPE: the startup trials (startup.go), then TPE (tpe.go) with
	// pending trials lied about.
	MethodTPE Method = "tpe"
	// MethodRandom: uniform draws (integer upper bounds reachable).
	MethodRandom Method = "random"
	// MethodGrid: the number-th point of the full grid (see grid).
	MethodGrid Method = "grid"
	// MethodGP: the startup trials (startup.go), then the expected
	// improvement of a Gaussian process (gpsampler.go). The default.
	MethodGP Method = "gp"
)

// DefaultMethod is what a study samples with when neither the request nor
// its template names a method (studies.DefaultSampler says why).
const DefaultMethod = MethodGP

// Methods is every method with a line on what it does, in the order
// ParseMethod's error and the CLI's help name them.
var Methods = []struct {
	Method Method
	Doc    string
}{
	{MethodGP, "a Gaussian process's expected improvement on the primary objective plus constraint penalties"},
	{MethodTPE, "TPE on the primary objective plus constraint penalties"},
	{MethodParEGO, "aims at the Pareto front with random weights over the objectives per trial"},
	{MethodRandom, "uniform draws"},
	{MethodGrid, "the grid of every parameter's values"},
}

// methodNames is Methods' names, comma-separated.
func methodNames() string {
	names := make([]string, len(Methods))
	for i, m := range Methods {
		names[i] = string(m.Method)
	}
	return strings.Join(names, ", ")
}

// ParseMethod accepts a name from Methods; empty means tpe, the default
// before gp (a study names its sampler when it is created: DefaultMethod
// unless asked). The error names no field: callers prefix theirs.
func ParseMethod(name string) (Method, error) {
	if name == "" {
		return MethodTPE, nil
	}
	for _, m := range Methods {
		if string(m.Method) == name {
			return m.Method, nil
		}
	}
	return "", fmt.Errorf("unknown sampler %s (allowed: %s)", errtext.Quote(name), methodNames())
}

// Options tune a Sampler; zero values mean the defaults.
type Options struct {
	// StartupTrials: trial numbers below this are startup trials
	// (startup.go: Start, then a Latin hypercube; default 10).
	// Counted by trial number, not by finished trials, so parallel workers
	// do not stretch the random phase.
	StartupTrials int
	// GridPoints per float axis for MethodGrid, bounds included (default 5, min 2).
	GridPoints int
	// Warm: the history holds an earlier study's trials (a warm start), so
	// TPE proposes from the first trial on instead of drawing StartupTrials
	// uniform points, and ranks each study's trials by quantile within
	// their own study (toQuantiles).
	Warm bool
	// NoLiar leaves pending trials invisible to TPE (goptuna's own
	// behaviour) instead of lying about them (see liar.go); for comparisons.
	NoLiar bool
	// History is how many of the newest complete trials TPE models besides
	// the best 25 (see history.go): 0 means the default, 150; negative,
	// every trial. For comparisons.
	History int
	// KnownRatio gives a point's primary ratio to the baseline when its
	// configuration alone decides it, before it runs (ok false
	// otherwise). The studies package sets it for a primary objective of
	// cost per hour: instances × TP × the GPU's price. With it, the
	// model-based samplers redraw a proposal that cannot beat the best
	// feasible trial: its score is at least its known ratio (see
	// bound.go).
	KnownRatio func(values []Value) (ratio float64, ok bool)
	// Start is the first trial of a cold study of a model-based sampler
	// (the template's own configuration; see startup.go). nil: none.
	Start []Value
}

const (
	defaultStartupTrials = 10
	defaultGridPoints    = 5
	// minModelTrials: TPE needs a few real observations before it is better
	// than a uniform draw; below this it falls back to uniform.
	minModelTrials = 2
)

func (o Options) withDefaults() (Options, error) {
	if o.StartupTrials < 0 {
		return o, fmt.Errorf("options.StartupTrials: must be >= 0, got %d", o.StartupTrials)
	}
	if o.StartupTrials == 0 {
		o.StartupTrials = defaultStartupTrials
	}
	if o.GridPoints < 0 || o.GridPoints == 1 {
		return o, fmt.Errorf("options.GridPoints: must be >= 2, got %d", o.GridPoints)
	}
	if o.GridPoints == 0 {
		o.GridPoints = defaultGridPoints
	}
	return o, nil
}

// Trial system attributes written by the Sampler (strings, goptuna-visible).
const (
	// AttrNumber holds our study-wide trial number (goptuna numbers its
	// trials itself, and the two differ once trials fail or are rescued).
	AttrNumber = "optimize_number"
	// AttrSource says where the vector came from: startup, tpe, random,
	// grid, start (the template's configuration, trial 0), gp or fixed.
	AttrSource = "optimize_source"
)

// Sampler proposes parameter vectors for one study stored in goptuna's
// tables (direction minimise). It is safe for concurrent use; TPE proposals
// of all Samplers in the process are serialised (see globalrand.go).
type Sampler struct {
	storage   goptuna.Storage
	studyName string
	studyID   int
	space     Space
	method    Method
	seed      int64
	opts      Options
	grid      *grid
	// mu serialises this sampler's model-based proposals from Ask until
	// the params are written, so that the next proposal in the process
	// already sees the previous one as pending.
	mu      sync.Mutex
	records []parsedRecord // parsed AttrObjectives of complete trials, by position in the history
}

// NewSampler creates the goptuna study (direction minimise) or loads it if
// it exists. Creation is idempotent and tolerates several processes racing
// on a fresh database: UNIQUE/"already exists"/locked errors are retried as
// a load. The caller must have run rdb.RunAutoMigrate once beforehand:
// gorm's AutoMigrate checks for each table and then creates it, so
// concurrent migrations of a fresh database race and one fails.
func NewSampler(storage goptuna.Storage, studyName string, space Space, method Method, seed int64, opts Options) (*Sampler, error) {
	if storage == nil {
		return nil, errors.New("storage: nil")
	}
	if strings.TrimSpace(studyName) == "" {
		return nil, errors.New("study name: empty")
	}
	method, err := ParseMethod(string(method))
	if err != nil {
		return nil, fmt.Errorf("method: %w", err)
	}
	if err := space.Validate(); err != nil {
		return nil, err
	}
	if opts, err = opts.withDefaults(); err != nil {
		return nil, err
	}
	s := &Sampler{
		storage:   storage,
		studyName: studyName,
		space:     slices.Clone(space),
		method:    method,
		seed:      seed,
		opts:      opts,
	}
	if method == MethodGrid {
		if s.grid, err = newGrid(s.space, opts.GridPoints); err != nil {
			return nil, err
		}
	}
	if s.studyID, err = createOrLoadStudy(storage, studyName); err != nil {
		return nil, err
	}
	return s, nil
}

const (
	studyOpenAttempts = 8
	studyOpenBackoff  = 50 * time.Millisecond
)

func createOrLoadStudy(storage goptuna.Storage, name string) (int, error) {
	var lastErr error
	for attempt := 0; attempt < studyOpenAttempts; attempt++ {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * studyOpenBackoff)
		}
		if id, err := storage.GetStudyIDFromName(name); err == nil {
			return id, checkMinimize(storage, id, name)
		}
		id, err := storage.CreateNewStudy(name)
		if err == nil {
			// rdb.v2 already creates minimise studies; set it anyway for
			// other storages.
			return id, storage.SetStudyDirection(id, goptuna.StudyDirectionMinimize)
		}
		if !isStartupRace(err) {
			return 0, fmt.Errorf("study %q: create: %w", name, err)
		}
		lastErr = err
	}
	return 0, fmt.Errorf("study %q: create or load failed after %d attempts: %w", name, studyOpenAttempts, lastErr)
}

func checkMinimize(storage goptuna.Storage, id int, name string) error {
	direction, err := storage.GetStudyDirection(id)
	if err != nil {
		return fmt.Errorf("study %q: direction: %w", name, err)
	}
	if direction != goptuna.StudyDirectionMinimize {
		return fmt.Errorf("study %q: direction is %s, search only minimises", name, direction)
	}
	return nil
}

// isStartupRace recognises another process creating the same study (or
// holding the write lock) at the same moment, across SQLite and PostgreSQL.
func isStartupRace(err error) bool {
	msg := strings.ToLower(err.Error())
	for _, s := range []string{"unique", "already exists", "duplicate", "locked", "busy"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// Space returns a copy of the search space.
func (s *Sampler) Space() Space { return slices.Clone(s.space) }

// StudyID is goptuna's id of the study.
func (s *Sampler) StudyID() int { return s.studyID }

// Ask creates a RUNNING trial and proposes its parameter vector. number is
// the study-wide trial number (unique, increasing); the proposal depends
// only on (seed, number, completed and pending history), so a sequential
// study is repeatable and two processes asking different numbers do not
// collide by accident. On error no RUNNING trial is left behind.
func (s *Sampler) Ask(number int) (trialID int, values []Value, err error) {
	return s.AskWith(number, nil)
}

// Record is the caller's own record of a sampler step, written in the
// step's transaction: st is the transaction's storage (on a Transactional
// storage, the one its Transaction hands out, on which the caller writes
// its rows too), trialID the step's trial and stored its parameter vector
// as stored (Space.Encode: categoricals by index, NaN where inactive; nil
// for Tell and Fail). Its error undoes the sampler's writes of the step as
// well: the sampler's rows and the caller's change together or not at
// all.
type Record func(st goptuna.Storage, trialID int, stored []float64) error

// AskWith is Ask with the caller's record of the proposal (nil: none)
// written in the same transaction, after the sampler's.
func (s *Sampler) AskWith(number int, rec Record) (trialID int, values []Value, err error) {
	if number < 0 {
		return 0, nil, fmt.Errorf("number: must be >= 0, got %d", number)
	}
	if s.modelBased() {
		// Held until the trial is written, so that the next in-process
		// proposal already sees this one as pending.
		s.mu.Lock()
		defer s.mu.Unlock()
	}
	// Proposed before the trial exists: the history a proposal models
	// leaves out the asking trial (and any trial whose parameters are not
	// all written), so creating it first would change nothing but keep a
	// RUNNING trial without parameters while the model runs.
	stored, source, err := s.propose(number)
	if err != nil {
		return 0, nil, fmt.Errorf("ask trial %d: %w", number, err)
	}
	if trialID, err = s.write(number, source, stored, rec); err != nil {
		return 0, nil, fmt.Errorf("ask trial %d: %w", number, err)
	}
	return trialID, s.space.values(stored), nil
}

// AskFixed creates a RUNNING trial with the given vector (a rescued trial,
// the baseline point, an enqueued suggestion).
func (s *Sampler) AskFixed(number int, values []Value) (trialID int, err error) {
	return s.AskFixedWith(number, values, nil)
}

// AskFixedWith is AskFixed with the caller's record of the trial (nil:
// none) written in the same transaction, after the sampler's.
func (s *Sampler) AskFixedWith(number int, values []Value, rec Record) (trialID int, err error) {
	if number < 0 {
		return 0, fmt.Errorf("number: must be >= 0, got %d", number)
	}
	if err := s.space.validateValues(values); err != nil {
		return 0, err
	}
	if s.modelBased() {
		s.mu.Lock()
		defer s.mu.Unlock()
	}
	if trialID, err = s.write(number, "fixed", s.space.Encode(values), rec); err != nil {
		return 0, fmt.Errorf("ask fixed trial %d: %w", number, err)
	}
	return trialID, nil
}

// write creates the trial with its parameters and attributes, and rec's
// record, in one transaction. A storage without transactions may have
// created the trial before a later write failed: it is marked FAIL.
func (s *Sampler) write(number int, source string, values []float64, rec Record) (int, error) {
	trialID := -1
	err := s.transaction(func(st goptuna.Storage) error {
		id, err := st.CreateNewTrial(s.studyID)
		if err != nil {
			return fmt.Errorf("create: %w", err)
		}
		trialID = id
		if err := record(st, s.space, id, number, source, values); err != nil {
			return err
		}
		if rec != nil {
			return rec(st, id, values)
		}
		return nil
	})
	if err != nil {
		if _, ok := s.storage.(Transactional); !ok && trialID >= 0 {
			_ = s.storage.SetTrialState(trialID, goptuna.TrialStateFail) // best effort: the error says what failed
		}
		return 0, err
	}
	return trialID, nil
}

// Tell completes a trial with its score (minimised; must be finite —
// failed evaluations go to Fail).
func (s *Sampler) Tell(trialID int, score float64) error { return s.tellWith(trialID, score, "", nil) }

// tellWith completes a trial with its score, its objectives record (""
// for none) and the caller's record (nil: none) in one transaction. The
// caller's record is written first: its error (a trial no longer the
// caller's to complete) is the step's, whatever the sampler would say.
func (s *Sampler) tellWith(trialID int, score float64, objectives string, rec Record) error {
	if math.IsNaN(score) || math.IsInf(score, 0) {
		return fmt.Errorf("tell trial %d: score must be finite, got %g", trialID, score)
	}
	return s.transaction(func(st goptuna.Storage) error {
		if rec != nil {
			if err := rec(st, trialID, nil); err != nil {
				return err
			}
		}
		return tell(st, trialID, score, objectives)
	})
}

// tell completes a trial with its score and objectives record ("" for
// none).
func tell(st goptuna.Storage, trialID int, score float64, objectives string) error {
	if objectives != "" {
		if err := st.SetTrialSystemAttr(trialID, AttrObjectives, objectives); err != nil {
			return fmt.Errorf("tell trial %d: objectives: %w", trialID, err)
		}
	}
	if err := st.SetTrialValue(trialID, score); err != nil {
		return fmt.Errorf("tell trial %d: value: %w", trialID, err)
	}
	if err := st.SetTrialState(trialID, goptuna.TrialStateComplete); err != nil {
		return fmt.Errorf("tell trial %d: state: %w", trialID, err)
	}
	return nil
}

// Transactional is a goptuna.Storage that runs several writes as one
// database transaction; storage.Store's goptuna storage is one. A
// proposal's parameters and attributes, and a result's value and state,
// then cost one commit together instead of one each (on SQLite each commit
// is a WAL write under the file's write lock). Other storages write one by
// one.
type Transactional interface {
	goptuna.Storage
	Transaction(fn func(goptuna.Storage) error) error
}

// transaction runs fn on a transaction of the storage when it has them.
func (s *Sampler) transaction(fn func(goptuna.Storage) error) error {
	if tx, ok := s.storage.(Transactional); ok {
		return tx.Transaction(fn)
	}
	return fn(s.storage)
}

// Fail marks a trial FAIL; TPE ignores it. Failing a finished trial returns
// an error wrapping goptuna.ErrTrialCannotBeUpdated.
func (s *Sampler) Fail(trialID int) error { return s.FailWith(trialID, nil) }

// FailWith is Fail with the caller's record (nil: none) written in the
// same transaction.
func (s *Sampler) FailWith(trialID int, rec Record) error {
	return s.transaction(func(st goptuna.Storage) error {
		if rec != nil {
			if err := rec(st, trialID, nil); err != nil {
				return err
			}
		}
		if err := st.SetTrialState(trialID, goptuna.TrialStateFail); err != nil {
			return fmt.Errorf("fail trial %d: %w", trialID, err)
		}
		return nil
	})
}

// modelBased reports whether proposals read the history (TPE, and ParEGO
// on it), and so are serialised per sampler.
func (s *Sampler) modelBased() bool {
	return s.method == MethodTPE || s.method == MethodParEGO || s.method == MethodGP
}

func (s *Sampler) propose(number int) ([]float64, string, error) {
	switch s.method {
	case MethodGrid:
		return s.space.deactivate(s.grid.point(number)), "grid", nil
	case MethodRandom:
		return drawUniformVector(s.space, newTrialRand(s.seed, number, streamUniform)), "random", nil
	}
	return s.proposeTPE(number)
}

// proposeTPE runs with s.mu held. Under Options.KnownRatio a proposal
// whose known ratio cannot beat the best feasible trial is drawn again,
// from the same model with the next attempt's random streams, and so is
// a model proposal the study has already run (seen.go).
func (s *Sampler) proposeTPE(number int) ([]float64, string, error) {
	startup := number < s.opts.StartupTrials && !s.opts.Warm
	var trials []goptuna.FrozenTrial
	if !startup || s.opts.KnownRatio != nil {
		var err error
		if trials, err = s.storage.GetAllTrials(s.studyID); err != nil {
			return nil, "", fmt.Errorf("history: %w", err)
		}
	}
	var history []scored
	if !startup && countCompleted(trials) >= minModelTrials {
		history = s.history(trials, number)
	}
	best, bounded := s.bestFeasibleRatio(trials)
	for attempt := 0; ; attempt++ {
		// Past maxRedraws the model proposes nothing that could win:
		// uniform draws look for the rest of the space below the bound.
		uniformOnly := startup || history == nil || attempt >= maxRedraws
		values, source := s.drawTPE(number, attempt, uniformOnly, history)
		if uniformOnly && !startup && history != nil {
			source = "random" // a uniform redraw past the model, not the startup phase
		}
		canWin := !bounded || !s.cannotBeat(values, best)
		if attempt == 2*maxRedraws || canWin && (startup || !s.seenBefore(values, trials)) {
			return values, source, nil
		}
	}
}

// drawTPE draws one vector for trial number: uniform in the startup
// phase (or before TPE has minModelTrials to model), else from TPE's
// model of history. Attempt 0 uses the trial's own streams; a redraw
// (attempt > 0) its own.
func (s *Sampler) drawTPE(number, attempt int, uniformOnly bool, history []scored) ([]float64, string) {
	uniform := newTrialRand(s.seed, number, redrawStream(streamUniform, attempt))
	if uniformOnly {
		if number < s.opts.StartupTrials && !s.opts.Warm && attempt == 0 {
			return s.startupPoint(number, uniform)
		}
		return drawUniformVector(s.space, uniform), "startup"
	}
	if s.method == MethodGP {
		return s.proposeGP(number, attempt, history), "gp"
	}
	rng := newTrialRand(s.seed, number, redrawStream(streamTPE, attempt))
	values := make([]float64, len(s.space))
	for i, p := range s.space {
		if p.When != nil && !s.space[:i+1].Active(s.space.values(values[:i+1]))[i] {
			values[i] = math.NaN() // only earlier axes decide, and they are drawn
			continue
		}
		if p.single() {
			values[i], _ = p.bounds()
			continue
		}
		obs := observations(history, p.Name)
		switch {
		case len(obs) < minModelTrials:
			values[i] = p.drawUniform(uniform) // e.g. a parameter added on resume
		case p.Kind == Categorical:
			values[i] = proposeCategorical(obs, len(p.Choices), rng)
		default:
			lo, hi := p.internalBounds()
			values[i] = p.fromInternal(proposeNumeric(obs, lo, hi, rng))
		}
	}
	return values, "tpe"
}

// record writes the active params of values (categoricals by index) with
// goptuna distributions (so TPE and goptuna tooling read them) and our
// number/source as system attributes.
func record(st goptuna.Storage, space Space, trialID, number int, source string, values []float64) error {
	for i, p := range space {
		if math.IsNaN(values[i]) {
			continue // inactive: TPE models p only from trials where it was active
		}
		if err := st.SetTrialParam(trialID, p.Name, p.toInternal(values[i]), p.distribution()); err != nil {
			return fmt.Errorf("param %s: %w", p.Name, err)
		}
	}
	if err := st.SetTrialSystemAttr(trialID, AttrNumber, strconv.Itoa(number)); err != nil {
		return fmt.Errorf("attr %s: %w", AttrNumber, err)
	}
	if err := st.SetTrialSystemAttr(trialID, AttrSource, source); err != nil {
		return fmt.Errorf("attr %s: %w", AttrSource, err)
	}
	return nil
}
