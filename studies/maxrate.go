package studies

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"optimize/simcore/cluster"
	"optimize/simcore/errtext"
	"optimize/simcore/metrics"
	"optimize/simcore/workload"
	"optimize/storage"
	"optimize/strategies"
	"optimize/strategies/workloads"
	"optimize/studies/report"
)

// DefaultMaxRateTolerance is the bisection's default relative width: the
// rate found is within 2 % below the threshold.
const DefaultMaxRateTolerance = 0.02

// DefaultAttainment are the targets a max-rate search meets when neither
// the template nor the request states any, for the classes the workload
// has: 99 % of critical requests and 95 % of the others get their first
// token within their class's TTFT target. Every class is held to a target
// so that a strategy cannot buy critical's attainment by starving the
// rest: with priority, critical alone fits up to several times the
// cluster's capacity.
var DefaultAttainment = []report.AttainmentTarget{
	{Metric: "per_slo.critical.ttft_attainment", Min: 0.99},
	{Metric: "per_slo.standard.ttft_attainment", Min: 0.95},
	{Metric: "per_slo.sheddable.ttft_attainment", Min: 0.95},
}

// minProbeSeconds is the shortest span of arrivals a probe simulates: at a
// rate r it runs the workload with r × max(its own span, this) requests,
// so that a rate above the cluster's capacity builds a queue that misses
// the targets rather than a burst short enough to drain in time (the
// orthogonal workload's 1000 requests arrive within half a second).
const minProbeSeconds = 5

// MaxRateOptions are `study validate --max-rate`'s arguments.
type MaxRateOptions struct {
	Trial int     // a complete trial's number; -1 for the best
	Seeds []int64 // nil: DefaultHeldOutSeeds
	// Windows are a split trace's held-out windows (nil: its second
	// half), as study validate takes them.
	Windows []int64
	// Targets are the attainment targets (nil: the template's attainment
	// constraints, else DefaultAttainment).
	Targets   []report.AttainmentTarget
	Tolerance float64 // relative; 0: DefaultMaxRateTolerance
}

// maxRateRequest is what a max-rate search ran, as stored with the study.
type maxRateRequest struct {
	Trial int     `json:"trial"`
	Seeds []int64 `json:"seeds"`
	// Windows: the study replays a trace cut into windows, and Seeds are
	// the held-out windows' numbers; the rate searched is a multiple of
	// the trace's own.
	Windows   bool                      `json:"windows,omitempty"`
	Targets   []report.AttainmentTarget `json:"targets"`
	Tolerance float64                   `json:"tolerance"`
}

// ParseAttainment reads --attainment: comma-separated CLASS=MIN (the
// class's TTFT attainment, per_slo.CLASS.ttft_attainment) or METRIC=MIN
// for any attainment metric (per_slo.CLASS.attainment: every target of
// the class), MIN in (0, 1].
func ParseAttainment(s string) ([]report.AttainmentTarget, error) {
	var out []report.AttainmentTarget
	for _, part := range strings.Split(s, ",") {
		key, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		min, err := strconv.ParseFloat(val, 64)
		if !ok || err != nil || !(min > 0 && min <= 1) {
			return nil, errtext.Usage("--attainment: %q is not CLASS=MIN or METRIC=MIN with MIN in (0, 1] (e.g. critical=0.99, per_slo.standard.attainment=0.95)", part)
		}
		metric := key
		if !strings.Contains(key, ".") {
			metric = "per_slo." + key + ".ttft_attainment"
		}
		if err := checkAttainmentMetric(metric); err != nil {
			return nil, errtext.Usage("--attainment: %v", err)
		}
		out = append(out, report.AttainmentTarget{Metric: metric, Min: min})
	}
	return out, nil
}

// checkAttainmentMetric accepts a metric that names an attainment (a
// fraction of requests meeting targets).
func checkAttainmentMetric(metric string) error {
	if err := strategies.ValidMetric(metric); err != nil {
		return err
	}
	if !strings.HasSuffix(metric, "attainment") {
		return fmt.Errorf("metric %s is not an attainment (want per_slo.<class>.ttft_attainment or per_slo.<class>.attainment)", metric)
	}
	return nil
}

// attainmentTargets are tpl's attainment constraints with a lower bound,
// else DefaultAttainment for the classes spec has.
func attainmentTargets(tpl *strategies.Template, spec *workload.Spec) []report.AttainmentTarget {
	var out []report.AttainmentTarget
	for _, c := range tpl.Constraints {
		if c.HasMin && checkAttainmentMetric(c.Metric) == nil {
			out = append(out, report.AttainmentTarget{Metric: c.Metric, Min: c.Min})
		}
	}
	if len(out) > 0 {
		return out
	}
	return defaultTargets(spec)
}

// defaultTargets are DefaultAttainment's targets of the classes spec has.
func defaultTargets(spec *workload.Spec) []report.AttainmentTarget {
	if spec == nil { // a trace: its classes are known only once replayed
		return DefaultAttainment
	}
	var out []report.AttainmentTarget
	for _, t := range DefaultAttainment {
		if slices.ContainsFunc(spec.Clients, func(c workload.Client) bool { return strings.Contains(t.Metric, "."+c.SLOClass+".") }) {
			out = append(out, t)
		}
	}
	return out
}

// meetsTargets reports whether run meets every target.
func meetsTargets(run *metrics.Summary, targets []report.AttainmentTarget) (bool, error) {
	for _, t := range targets {
		v, err := strategies.Metric(run, t.Metric)
		if err != nil {
			return false, err
		}
		if v < t.Min {
			return false, nil
		}
	}
	return true, nil
}

// atRate is the workload at an absolute aggregate rate; its name carries
// the rate, so each probe is its own run.
func atRate(wl *workloads.Workload, rate float64) *workloads.Workload {
	if wl.Spec == nil { // a trace: its times scaled by 1/rate
		return wl.At(workloads.Regime{Name: "rate=" + strconv.FormatFloat(rate, 'g', -1, 64), RateScale: rate})
	}
	span := max(float64(wl.Spec.NumRequests)/wl.Spec.AggregateRate, minProbeSeconds)
	return wl.At(workloads.Regime{Name: "rate=" + strconv.FormatFloat(rate, 'g', -1, 64), Rate: rate,
		Requests: max(1, int64(math.Round(rate*span)))})
}

// probeKey is a probe's stored key: what ran, at which rate ("rate=…",
// the last regime of the workload's name), and configKey's digest.
func probeKey(name string, cfg cluster.Config, wl *workloads.Workload) string {
	return configKey(name+"|"+wl.Name[strings.LastIndex(wl.Name, "@")+1:], cfg, wl)
}

// probeFunc runs (or looks up) cfg on wl with one seed; name says what the
// run is, for its stored key.
type probeFunc func(name string, cfg cluster.Config, wl *workloads.Workload, seed int64) (metrics.Summary, error)

// sustainable is the search for the highest rate at which cfg meets the
// targets on wl with one seed, starting from wl's own rate.
func sustainable(name string, cfg cluster.Config, wl *workloads.Workload, seed int64, targets []report.AttainmentTarget, tol float64, probe probeFunc) (rateSearch, error) {
	return maxRate(startRate(wl), tol, func(rate float64) (bool, error) {
		m, err := probe(name, cfg, atRate(wl, rate), seed)
		if err != nil {
			return false, err
		}
		return meetsTargets(&m, targets)
	})
}

// errNotStored ends a search rebuilt from stored runs at a run that is
// not stored.
var errNotStored = errors.New("run not stored")

// MaxRate finds, seed by seed, the highest rate at which a trial (the
// best by default) and the baseline meet the attainment targets, each
// probe a full simulation stored as it finishes (an interrupted search
// resumes from the stored probes), and stores the request with the study.
func (e *Env) MaxRate(ctx context.Context, name string, o MaxRateOptions) (*report.MaxRate, error) {
	r, err := report.Load(e.Store, e.Registry, name)
	if err != nil {
		return nil, err
	}
	req, err := maxRateRequestFor(r, o)
	if err != nil {
		return nil, err
	}
	if err := e.Store.MigrateEvidence(); err != nil {
		return nil, err
	}
	stored, err := e.storedRuns(r.Study, "maxrate|")
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	probe := func(name string, cfg cluster.Config, wl *workloads.Workload, seed int64) (metrics.Summary, error) {
		key := storage.RunKey{Key: probeKey(name, cfg, wl), Seed: seed}
		mu.Lock()
		m, ok := stored[key]
		mu.Unlock()
		if ok {
			return m, nil
		}
		if err := ctx.Err(); err != nil {
			return m, err
		}
		m, err := simulate(cfg, wl, seed)
		if err == nil {
			err = e.Store.PutEvidenceRun(r.Study.ID, key.Key, seed, m)
		}
		if err != nil {
			return m, fmt.Errorf("%s, seed %d: %v", key.Key, seed, err)
		}
		mu.Lock()
		stored[key] = m
		mu.Unlock()
		return m, nil
	}
	fmt.Fprintf(e.Progress, "validate --max-rate %s: bisecting trial %d and the baseline on %d seeds\n", name, req.Trial, len(req.Seeds))
	out, err := e.maxRateReport(r, req, probe, max(1, e.Workers))
	if err != nil {
		return nil, err
	}
	if err := e.saveRequest(r.Study.ID, req); err != nil {
		return nil, err
	}
	return out, nil
}

// maxRateRequestFor checks the options against study r.
func maxRateRequestFor(r *report.Report, o MaxRateOptions) (maxRateRequest, error) {
	req := maxRateRequest{Trial: o.Trial, Seeds: o.Seeds, Targets: o.Targets, Tolerance: o.Tolerance}
	switch {
	case r.Best < 0:
		return req, errtext.Usage("study %s has no complete trial to validate", r.Study.Name)
	case o.Trial < 0:
		req.Trial = r.Complete[r.Best].Number
	case r.ByNumber(o.Trial) == nil:
		return req, errtext.Usage("--trial: study %s has no complete trial %d", r.Study.Name, o.Trial)
	}
	wl, err := workloads.Resolve(r.Study.Workload)
	if err != nil {
		return req, err
	}
	switch split, ok := wl.Split(); {
	case wl.Spec == nil && !ok:
		return req, errtext.Usage("--max-rate: study %s replays a trace without held-out windows; the search scales a generated workload's rate or a split trace's", r.Study.Name)
	case wl.Spec == nil:
		var v validationRequest
		if err := heldOutWindows(r, split, ValidateOptions{Seeds: o.Seeds, Windows: o.Windows}, &v); err != nil {
			return req, err
		}
		req.Seeds, req.Windows = v.Seeds, true
	default:
		if o.Windows != nil {
			return req, errtext.Usage("--windows: study %s does not replay a trace cut into windows; its held-out data are seeds (--seeds)", r.Study.Name)
		}
		if req.Seeds, err = heldOutSeeds(r, req.Seeds); err != nil {
			return req, err
		}
	}
	if req.Targets == nil {
		req.Targets = attainmentTargets(r.Template, wl.Spec)
	}
	if len(req.Targets) == 0 {
		return req, errtext.Usage("--attainment: study %s's workload has none of the classes of the default targets and the template states none: give some (e.g. per_slo.default.ttft_attainment=0.99)", r.Study.Name)
	}
	if req.Tolerance == 0 {
		req.Tolerance = DefaultMaxRateTolerance
	}
	if !(req.Tolerance > 0 && req.Tolerance < 1) {
		return req, errtext.Usage("--tolerance: %g is not a relative width in (0, 1) (e.g. 0.02 for 2 %%)", req.Tolerance)
	}
	return req, nil
}

// maxRateReport runs (probe) every seed's search for the trial and the
// baseline, workers at a time, and builds the report; a search that
// stops at a run not stored counts as missing.
func (e *Env) maxRateReport(r *report.Report, req maxRateRequest, probe probeFunc, workers int) (*report.MaxRate, error) {
	wl, err := workloads.Resolve(r.Study.Workload)
	if err != nil {
		return nil, err
	}
	cand, base, err := e.configs(r, wl, r.ByNumber(req.Trial).Params, nil)
	if err != nil {
		return nil, fmt.Errorf("trial %d: %v", req.Trial, err)
	}
	if wl, err = atLoad(wl, base); err != nil {
		return nil, err
	}
	if req.Windows {
		wl = wl.OnWindows(req.Seeds)
	}
	out := &report.MaxRate{Trial: req.Trial, Seeds: req.Seeds, Windows: req.Windows, Targets: req.Targets, Tolerance: req.Tolerance,
		StartRate: startRate(wl), Unit: rateUnit(wl), PerSeed: make([]report.SeedMaxRate, len(req.Seeds))}
	type search struct {
		i      int
		winner bool
	}
	results := make(map[search]rateSearch)
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		errs  []error
		queue = make(chan search)
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range queue {
				name, cfg := "maxrate|baseline", base
				if s.winner {
					name, cfg = fmt.Sprintf("maxrate|trial=%d", req.Trial), cand
				}
				res, err := sustainable(name, cfg, wl, req.Seeds[s.i], req.Targets, req.Tolerance, probe)
				mu.Lock()
				if err != nil && !errors.Is(err, errNotStored) {
					errs = append(errs, err)
				} else if err == nil {
					results[s] = res
				}
				mu.Unlock()
			}
		}()
	}
	for i := range req.Seeds {
		queue <- search{i, true}
		queue <- search{i, false}
	}
	close(queue)
	wg.Wait()
	if len(errs) > 0 {
		return nil, errs[0]
	}
	var changes, winners, baselines []float64
	for i, seed := range req.Seeds {
		w, okW := results[search{i, true}]
		b, okB := results[search{i, false}]
		out.PerSeed[i] = report.SeedMaxRate{Seed: seed, Winner: bound(w), Baseline: bound(b)}
		if !okW || !okB {
			out.Missing++
			continue
		}
		winners, baselines = append(winners, w.Rate), append(baselines, b.Rate)
		if b.Rate > 0 {
			changes = append(changes, w.Rate/b.Rate-1)
		}
	}
	out.Winner, out.Baseline = report.Num(mean(winners)), report.Num(mean(baselines))
	ratio, lo, hi := pairedT(changes)
	out.Ratio, out.CI95 = report.Num(ratio), [2]report.Num{report.Num(lo), report.Num(hi)}
	return out, nil
}

// traceLoadUnit is the unit of a trace's searched rate: a multiple of
// the rate the trace's windows have as recorded (×1).
const traceLoadUnit = "× the trace's rate"

// startRate is where a search starts: a spec's aggregate rate, a trace's
// own rate (×1).
func startRate(wl *workloads.Workload) float64 {
	if wl.Spec == nil {
		return 1
	}
	return wl.Spec.AggregateRate
}

// rateUnit is the unit of the workload's rate: sessions per second when
// a client runs multi-turn sessions, a multiple of a trace's own rate,
// else requests per second.
func rateUnit(wl *workloads.Workload) string {
	if wl.Spec == nil {
		return traceLoadUnit
	}
	spec := wl.Spec
	for _, c := range spec.Clients {
		if c.Reasoning != nil && c.Reasoning.MultiTurn != nil && c.Reasoning.MultiTurn.MaxRounds > 1 {
			return "sessions/s"
		}
	}
	return "req/s"
}

// bound is a search's answer as the report gives it.
func bound(s rateSearch) report.RateBound {
	return report.RateBound{Rate: report.Num(s.Rate), FailsAt: report.Num(s.Above), Probes: s.Probes}
}

// mean is the mean of xs, NaN for none.
func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// storedMaxRate rebuilds a stored max-rate request of study r by repeating
// its searches over the stored runs, without simulating.
func (e *Env) storedMaxRate(r *report.Report, js string, stored runs) (*report.MaxRate, error) {
	req, err := decodeRequest[maxRateRequest](js)
	if err != nil {
		return nil, fmt.Errorf("study %s: stored max-rate request: %v", r.Study.Name, err)
	}
	if r.ByNumber(req.Trial) == nil {
		return nil, fmt.Errorf("study %s: stored max-rate request names trial %d, which is not complete", r.Study.Name, req.Trial)
	}
	probe := func(name string, cfg cluster.Config, wl *workloads.Workload, seed int64) (metrics.Summary, error) {
		if m, ok := stored[storage.RunKey{Key: probeKey(name, cfg, wl), Seed: seed}]; ok {
			return m, nil
		}
		return metrics.Summary{}, errNotStored
	}
	return e.maxRateReport(r, req, probe, 1)
}
