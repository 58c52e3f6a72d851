// Package report reads a study from storage and says what it found: the
// Report of its complete trials (Load; Rank picks the best trial and the
// Pareto front of the feasible ones and its hypervolume), the hypervolume
// history and the best-feasible-so-far line, `study show` as text and JSON
// (and one trial's detail), `study export` as CSV and JSON and as Optuna's
// JournalStorage log, the history document, `study list`'s summaries, the
// evidence result types (Validation, Ablation) with their text, JSON and
// CSV, and the output helpers the CLI and the server share (WriteJSON,
// Percent, Num). A mistake in a request is an errtext.UsageError. It
// simulates nothing: running a study or its evidence is package studies,
// which builds on this one.
package report

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"optimize/search"
	"optimize/simcore/cluster"
	"optimize/simcore/metrics"
	"optimize/storage"
	"optimize/strategies"
	"optimize/strategies/settings"
)

// Report is a study's state and results.
type Report struct {
	Study     *storage.Study
	Template  *strategies.Template
	Baseline  metrics.Summary
	Seeds     []int64           // the study's seeds
	BaseSeeds []metrics.Summary // the baseline on each seed, in Seeds order
	Complete  []Result          // complete trials in number order
	// Pruned are a robust study's trials stopped early (storage.
	// TrialPruned), in number order: their objectives are bounds, so
	// they are never Best nor on the front.
	Pruned      []Result
	Running     int
	Failed      int
	Best        int   // index into Complete of the lowest score, -1 if none
	Pareto      []int // indices into Complete
	Hypervolume float64
	// World is the world the study's baseline runs in (and every trial,
	// unless the template tunes the world: TrialWorld), as the study
	// recorded it; WorldAssumed says that the study was stored before
	// studies recorded their world, which is then the seeds' world
	// (strategies.Template.SeedsWorld) — the only world there was.
	World        cluster.World
	WorldAssumed bool
	feasible     int // complete trials that meet every constraint (pareto counts them)
	// Validation and Ablation are the latest stored evidence
	// (LoadEvidence), or nil; Validations the latest validation of each
	// kind (ValidationKinds order); EvidenceRuns every stored request,
	// oldest first.
	Validation   *Validation
	Ablation     *Ablation
	Validations  []*Validation
	EvidenceRuns []EvidenceRun
	// MaxRate is the latest stored `validate --max-rate`, or nil.
	MaxRate *MaxRate
	// EvidenceError says why stored evidence could not be rebuilt, or "".
	EvidenceError string
	// backfill holds the violations computed for trials stored without
	// them (an older release's rows), for studies' Migrate to store.
	backfill []storage.Judgement
	// pins are the template's parameters the study's world file pins
	// ("key=value"): the template above is pinned so.
	pins []string
}

// Result is one complete trial. A loaded study's results read their full
// metrics from storage only when asked (Summary, Seeds), so that listing
// thousands of trials decodes only their objectives; a Result built in
// memory carries them in Metrics and PerSeed.
type Result struct {
	Number     int
	Params     []search.Value // aligned with Template.Params
	Objectives []float64
	// Violations is each constraint's shortfall and Violation their total,
	// as stored with the trial: search.Feasible(Violation) decides whether
	// the trial meets every constraint.
	Violations []float64
	Violation  float64
	Score      float64
	Metrics    metrics.Summary   // mean over the seeds (in-memory results)
	PerSeed    []metrics.Summary // on each seed, in Report.Seeds order (in-memory results)

	ranges [][2]float64 // each objective's range over the seeds, when stored
	stored *storedTrial // nil for an in-memory result
}

// storedTrial reads a trial's metrics from storage on first use. Load
// has checked that every seed has its row; a read that fails (the storage
// went away, a row cannot be decoded) is not kept: the next use tries
// again, and meanwhile the trial reads as zero metrics with the error
// recorded for Report.DetailErr.
type storedTrial struct {
	mu      sync.Mutex
	loaded  bool
	err     error
	store   *storage.Store
	id      uint
	number  int
	seeds   []int64
	metrics metrics.Summary
	perSeed []metrics.Summary
}

func (t *storedTrial) load() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.loaded {
		return
	}
	m, err := t.store.TrialMetrics(t.id)
	if err != nil {
		t.err = fmt.Errorf("trial %d: %v", t.number, err)
		return
	}
	runs, err := t.store.SeedMetrics(t.id)
	if err != nil {
		t.err = fmt.Errorf("trial %d: %v", t.number, err)
		return
	}
	perSeed := make([]metrics.Summary, len(t.seeds))
	found := 0
	for _, run := range runs {
		if i := slices.Index(t.seeds, run.Seed); i >= 0 {
			perSeed[i] = run.Metrics
			found++
		}
	}
	if found != len(t.seeds) {
		t.err = fmt.Errorf("trial %d: metrics for %d of %d seeds", t.number, found, len(t.seeds))
		return
	}
	t.metrics, t.perSeed, t.loaded, t.err = m, perSeed, true, nil
}

// detailErr is the last failure to read the trial's metrics, or nil.
func (t *storedTrial) detailErr() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// Summary is the trial's metrics, means over the seeds.
func (c *Result) Summary() metrics.Summary {
	if c.stored == nil {
		return c.Metrics
	}
	c.stored.load()
	return c.stored.metrics
}

// Seeds is the trial's metrics on each seed, in the study's seed order
// (zero metrics if they could not be read: see Report.DetailErr).
func (c *Result) Seeds() []metrics.Summary {
	if c.stored == nil {
		return c.PerSeed
	}
	c.stored.load()
	if c.stored.perSeed == nil {
		return make([]metrics.Summary, len(c.stored.seeds))
	}
	return c.stored.perSeed
}

// DetailErr reports a trial whose metrics were asked for and could not be
// read: what was built from them is then zeros, and callers report this
// error instead of showing it.
func (r *Report) DetailErr() error {
	for i := range r.Complete {
		if s := r.Complete[i].stored; s != nil {
			if err := s.detailErr(); err != nil {
				return err
			}
		}
	}
	return nil
}

// objectiveRange is objective k's range over the seeds: stored with the
// trial, or computed from its per-seed metrics.
func (c *Result) objectiveRange(k int, metric string) SeedRange {
	if k < len(c.ranges) {
		return SeedRange{Min: c.ranges[k][0], Max: c.ranges[k][1]}
	}
	return Spread(c.Seeds(), metric)
}

// ByNumber finds a complete trial by number; nil when there is none.
func (r *Report) ByNumber(number int) *Result {
	for i := range r.Complete {
		if r.Complete[i].Number == number {
			return &r.Complete[i]
		}
	}
	return nil
}

// State is "complete", "running", "failed" (its last run stopped on an
// error: Study.Failure says which) or "incomplete" (stopped before its
// total).
func (r *Report) State() string {
	return stateOf(len(r.Complete)+len(r.Pruned), r.Study.TrialsTotal, r.Running, r.Study.Failure)
}

// HypervolumeReference is the reference point on every normalised axis:
// twice as bad as the baseline.
const HypervolumeReference = 2.0

// Load builds the report of study name from store, with its template
// from reg.
func Load(store *storage.Store, reg *strategies.Registry, name string) (*Report, error) {
	row, err := store.StudyByName(name)
	if err != nil {
		return nil, err
	}
	tpl, err := reg.Get(row.Template)
	if err != nil {
		return nil, err
	}
	var pins []string
	if len(row.BaseFrom) > 0 || row.Deployable {
		// The study searched its template with the parameters its world
		// file gives pinned, restricted to what production carries when
		// it is deployable: its trials are stored in that space.
		std, err := settings.Standard()
		if err != nil {
			return nil, err
		}
		if tpl, pins, err = StudyTemplate(tpl, std, row.BaseFrom, row.Deployable); err != nil {
			return nil, fmt.Errorf("study %s: %v", row.Name, err)
		}
	}
	r := &Report{Study: row, Template: tpl, pins: pins, Best: -1, Baseline: row.Baseline, Seeds: row.Seeds, BaseSeeds: row.BaselineSeeds}
	if err := r.loadWorld(); err != nil {
		return nil, err
	}
	trials, err := store.ReportTrials(row.ID)
	if err != nil {
		return nil, err
	}
	space := tpl.Space()
	for _, t := range trials {
		switch t.State {
		case storage.TrialRunning:
			r.Running++
			continue
		case storage.TrialFailed:
			r.Failed++
			continue
		}
		params, err := space.Decode(t.Params)
		if err != nil {
			return nil, fmt.Errorf("trial %d: params: %v", t.Number, err)
		}
		res := Result{Number: t.Number, Score: t.Score, Params: params, Objectives: t.Objectives,
			Violations: t.Violations, Violation: t.Violation,
			ranges: t.SeedRanges, // nil: computed from the seeds instead
			stored: &storedTrial{store: store, id: t.ID, number: t.Number, seeds: r.Seeds}}
		if t.State == storage.TrialPruned {
			r.Pruned = append(r.Pruned, res)
			continue
		}
		if !t.Judged {
			if err := r.judgeStored(store, &res, t.ID); err != nil {
				return nil, err
			}
		}
		r.Complete = append(r.Complete, res)
	}
	r.Rank()
	return r, nil
}

// Rank computes what the complete trials decide: the Pareto front of the
// feasible trials with its hypervolume, and Best, the lowest score — of
// equal scores a trial on the front (the score weighs the primary
// objective, so equals differ in the others), else the first in number
// order. Load calls it; a report built in memory calls it once its trials
// are in.
func (r *Report) Rank() {
	r.pareto()
	r.Best = -1
	for i := range r.Complete {
		switch {
		case r.Best < 0 || r.Complete[i].Score < r.Complete[r.Best].Score:
			r.Best = i
		case r.Complete[i].Score == r.Complete[r.Best].Score && slices.Contains(r.Pareto, i) && !slices.Contains(r.Pareto, r.Best):
			r.Best = i
		}
	}
}

// Backfill is the violations Load computed for trials stored without them
// (by a release before they were stored), for the store to keep.
func (r *Report) Backfill() []storage.Judgement { return r.backfill }

// judgeStored computes the violations of a trial stored without them and
// keeps them for Backfill.
func (r *Report) judgeStored(store *storage.Store, c *Result, id uint) error {
	judged, err := JudgeStored(store, r.Template, &r.Baseline, id)
	if err != nil {
		return fmt.Errorf("trial %d: constraints: %v", c.Number, err)
	}
	c.Violations, c.Violation = judged.Violations, judged.Violation()
	r.backfill = append(r.backfill, storage.Judgement{TrialID: id, Violations: c.Violations, Violation: c.Violation})
	return nil
}

// JudgeStored judges a trial stored without its violations (by a release
// before they were stored) from its stored mean metrics against the
// study's baseline, exactly as its score was computed then.
func JudgeStored(store *storage.Store, tpl *strategies.Template, baseline *metrics.Summary, trialID uint) (search.Evaluation, error) {
	mean, err := store.TrialMetrics(trialID)
	if err != nil {
		return search.Evaluation{}, err
	}
	return tpl.Judge(baseline, &mean)
}

// SeedRange is the lowest and highest value a metric took over the seeds.
type SeedRange struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// Spread returns the range of a metric (a strategies.Metric path) over
// runs (one per seed).
func Spread(runs []metrics.Summary, metric string) SeedRange {
	get := metricOf(metric)
	out := SeedRange{Min: math.Inf(1), Max: math.Inf(-1)}
	for i := range runs {
		v := get(&runs[i])
		out.Min, out.Max = min(out.Min, v), max(out.Max, v)
	}
	return out
}

// BetterOnSeeds counts the seeds on which c does better than the baseline
// on the same seed for objective o (a tie is not better).
func (r *Report) BetterOnSeeds(c *Result, o strategies.Objective) int {
	n := 0
	for i := range r.Seeds {
		v, _ := strategies.Metric(&c.Seeds()[i], o.Metric)
		b, _ := strategies.Metric(&r.BaseSeeds[i], o.Metric)
		if o.Minimize && v < b || !o.Minimize && v > b {
			n++
		}
	}
	return n
}

// pareto computes the front and its hypervolume over the template's
// objectives, each normalised to "ratio to the baseline, smaller is better".
// Only feasible trials can be on the front: a trial that violates a
// constraint is not a strategy the user may pick, however good its
// objectives look (shedding standard requests buys critical TTFT).
func (r *Report) pareto() {
	if len(r.Complete) == 0 {
		return
	}
	base, minimize := r.BaselineObjectives()
	points := make([][]float64, len(r.Complete))
	r.feasible = 0
	for i := range r.Complete {
		var ok bool
		if points[i], ok = r.frontPoint(&r.Complete[i], base, minimize); ok {
			r.feasible++
		}
	}
	r.Pareto = search.ParetoFront(points)
	front := make([][]float64, len(r.Pareto))
	ref := make([]float64, len(base))
	for i := range ref {
		ref[i] = HypervolumeReference
	}
	for i, idx := range r.Pareto {
		front[i] = points[idx]
	}
	r.Hypervolume = search.Hypervolume(front, ref)
}

// frontPoint is c's objectives as ratios to the baseline (smaller is
// better) and true, or all NaN and false when c violates a constraint: NaN
// points are never on a Pareto front and add no hypervolume.
func (r *Report) frontPoint(c *Result, base []float64, minimize []bool) ([]float64, bool) {
	if !search.Feasible(c.Violation) {
		p := make([]float64, len(base))
		for i := range p {
			p[i] = math.NaN()
		}
		return p, false
	}
	return search.Normalize(c.Objectives, base, minimize), true
}

// BaselineObjectives is the baseline's value of each of the template's
// objectives and whether it is minimised.
func (r *Report) BaselineObjectives() (values []float64, minimize []bool) {
	for _, o := range r.Template.Objectives {
		v, _ := strategies.Metric(&r.Baseline, o.Metric)
		values = append(values, v)
		minimize = append(minimize, o.Minimize)
	}
	return
}

// Delta is the relative change from b to v (−0.62 = 62% lower); NaN when
// the baseline is 0.
func Delta(v, b float64) float64 {
	if b == 0 {
		if v == 0 {
			return 0
		}
		return math.NaN()
	}
	return (v - b) / math.Abs(b)
}

// Evaluation is c judged against the baseline, from what is stored.
func (r *Report) Evaluation(c *Result) search.Evaluation {
	base, minimize := r.BaselineObjectives()
	return search.Judge(c.Objectives, base, minimize, c.Violations, r.Template.Primary)
}

// ParamMap names a trial's parameters: categoricals by their choice, nil
// when inactive under this trial's choices.
func (r *Report) ParamMap(values []search.Value) map[string]any {
	out := make(map[string]any, len(values))
	for i, p := range r.Template.Params {
		if i >= len(values) {
			break
		}
		out[p.Name] = values[i].Any()
	}
	return out
}
