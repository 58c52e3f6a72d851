package studies

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"

	"optimize/search"
	"optimize/simcore/cluster"
	"optimize/simcore/errtext"
	"optimize/simcore/metrics"
	"optimize/storage"
	"optimize/strategies"
	"optimize/strategies/production"
	"optimize/strategies/workloads"
	"optimize/studies/report"
)

// ValidateOptions are `study validate`'s arguments.
type ValidateOptions struct {
	Trial  int     // a complete trial's number; -1 for the best
	Pareto bool    // every Pareto trial instead
	Seeds  []int64 // held-out seeds; nil for ten disjoint from the study's, from 100 up
	// Windows are a trace study's held-out windows, by number (nil: every
	// window of the trace's second half); such a study takes no Seeds.
	Windows []int64
	Regimes []string
	// Worlds are other worlds to validate in, at the study's operating
	// point, instead of the study's own (exclusive with Regimes).
	Worlds []WorldChange
}

// validationRequest is what a validation ran, as stored with the study.
type validationRequest struct {
	Seeds []int64 `json:"seeds"`
	// Windows says Seeds are the numbers of held-out windows of the
	// study's trace (each run's seed is its window's number).
	Windows bool     `json:"windows,omitempty"`
	Trials  []int    `json:"trials"`
	Regimes []string `json:"regimes"`
	Pareto  bool     `json:"pareto,omitempty"`
	// Worlds are the other worlds the request compared in.
	Worlds []WorldChange `json:"worlds,omitempty"`
}

// kind is which of the validations the request is: in other worlds, of
// the Pareto front (also with regimes), with regimes, or plain.
func (q validationRequest) kind() report.EvidenceKind {
	switch {
	case len(q.Worlds) > 0:
		return report.KindWorlds
	// Requests stored before Pareto was say so by their several trials.
	case q.Pareto || len(q.Trials) > 1:
		return report.KindPareto
	case len(q.Regimes) > 0:
		return report.KindRegimes
	}
	return report.KindPlain
}

// heldOutSeeds checks the held-out seeds a request gives (nil: the
// default ones): at least two, for an interval, and none of the study's.
func heldOutSeeds(r *report.Report, seeds []int64) ([]int64, error) {
	if seeds == nil {
		seeds = DefaultHeldOutSeeds(r.Seeds)
	}
	if len(seeds) < 2 {
		return nil, errtext.Usage("--seeds: give at least 2 held-out seeds (a confidence interval needs them)")
	}
	for _, s := range seeds {
		if slices.Contains(r.Seeds, s) {
			return nil, errtext.Usage("--seeds: seed %d is one of the study's own seeds %v; held-out seeds must be new", s, r.Seeds)
		}
	}
	return seeds, nil
}

// DefaultHeldOutSeeds are ten seeds from 100 up that the study did not use.
func DefaultHeldOutSeeds(study []int64) []int64 {
	var out []int64
	for s := int64(100); len(out) < 10; s++ {
		if !slices.Contains(study, s) {
			out = append(out, s)
		}
	}
	return out
}

// Validate re-runs trials and the baseline on held-out seeds (and at
// regimes), storing every run as it finishes; running it again after an
// interruption computes only what is missing.
func (e *Env) Validate(ctx context.Context, name string, o ValidateOptions) (*report.Validation, error) {
	r, err := report.Load(e.Store, e.Registry, name)
	if err != nil {
		return nil, err
	}
	req, err := requestFor(r, o)
	if err != nil {
		return nil, err
	}
	if len(o.Worlds) == 0 && len(o.Regimes) == 0 {
		o.Worlds = robustWorlds(r.Study)
	}
	if err := e.checkWorlds(r, o); err != nil {
		return nil, err
	}
	req.Worlds = o.Worlds
	plan, err := e.validationPlan(r, req)
	if err != nil {
		return nil, err
	}
	if err := e.Store.MigrateEvidence(); err != nil {
		return nil, err
	}
	if err := e.runJobs(ctx, r.Study, "validate "+name, plan.jobs); err != nil {
		return nil, err
	}
	// Recorded once every run is stored, so that an interrupted request
	// (its runs are kept for the next try) never hides the last finished
	// one of its kind, and "ran" is when it finished.
	if err := e.saveRequest(r.Study.ID, req); err != nil {
		return nil, err
	}
	stored, err := e.storedRuns(r.Study, "validate|")
	if err != nil {
		return nil, err
	}
	return validationReport(r, req, plan, stored), nil
}

// requestFor checks the options against study r.
func requestFor(r *report.Report, o ValidateOptions) (validationRequest, error) {
	req := validationRequest{Seeds: o.Seeds, Regimes: o.Regimes}
	switch {
	case r.Best < 0:
		return req, errtext.Usage("study %s has no complete trial to validate", r.Study.Name)
	case o.Pareto && len(r.Pareto) == 0:
		return req, errtext.Usage("--pareto: study %s has no trial within its constraints, so its Pareto front is empty", r.Study.Name)
	case o.Pareto:
		req.Pareto = true
		for _, i := range r.Pareto {
			req.Trials = append(req.Trials, r.Complete[i].Number)
		}
	case o.Trial >= 0:
		if r.ByNumber(o.Trial) == nil {
			return req, errtext.Usage("--trial: study %s has no complete trial %d", r.Study.Name, o.Trial)
		}
		req.Trials = []int{o.Trial}
	default:
		req.Trials = []int{r.Complete[r.Best].Number}
	}
	studyWL, err := workloads.Resolve(r.Study.Workload)
	if err != nil {
		return req, err
	}
	if split, ok := studyWL.Split(); ok {
		return req, heldOutWindows(r, split, o, &req)
	}
	if o.Windows != nil {
		return req, errtext.Usage("--windows: study %s does not replay a trace cut into windows; its held-out data are seeds (--seeds)", r.Study.Name)
	}
	if req.Seeds, err = heldOutSeeds(r, req.Seeds); err != nil {
		return req, err
	}
	for _, name := range req.Regimes {
		if _, err := workloads.LookupRegime(name); err != nil {
			return req, errtext.Usage("--regime: %v", err)
		}
	}
	return req, nil
}

// heldOutWindows sets req to the held-out windows of a trace study: those
// of o (by default every window of the trace's second half), at least 2.
func heldOutWindows(r *report.Report, split workloads.TraceSplit, o ValidateOptions, req *validationRequest) error {
	held := split.HeldOut()
	if o.Seeds != nil {
		return errtext.Usage("--seeds: study %s replays a trace, held out in time: give held-out windows with --windows (default %s, the trace's second half)", r.Study.Name, report.SeedList(held))
	}
	req.Windows, req.Seeds = true, held
	if o.Windows != nil {
		req.Seeds = o.Windows
	}
	if len(req.Seeds) < 2 {
		return errtext.Usage("--windows: give at least 2 held-out windows (a confidence interval needs them)")
	}
	if err := split.CheckHeldOut(req.Seeds); err != nil {
		return errtext.Usage("--windows: %v", err)
	}
	return nil
}

// configs returns trial's configuration and the baseline's at workload wl,
// in the study's world moved by world (nil: the study's own).
func (e *Env) configs(r *report.Report, wl *workloads.Workload, params []search.Value, world WorldChange) (cand, base cluster.Config, err error) {
	tpl := r.Template
	start, err := e.baseOf(r.Study)
	if err != nil {
		return
	}
	if cand, err = tpl.Config(start, params); err != nil {
		return
	}
	if err = world.apply(&cand); err != nil {
		return
	}
	wl.ApplyConfig(&cand)
	if r.Study.Deployable {
		// Its trials ran as their exported files carry them: so does
		// the evidence.
		if cand, err = production.AsDeployed(start, cand); err != nil {
			return
		}
	}
	study, err := tpl.Config(start, tpl.Defaults())
	if err != nil {
		return
	}
	if err = world.apply(&study); err != nil {
		return
	}
	wl.ApplyConfig(&study)
	base, err = baselineConfig(e.Registry, study, start, r.Study.BaselineFrom)
	return
}

// plan is the list of simulations of one evidence request and the key of
// each configuration, by what it is.
type plan struct {
	jobs []job
	keys map[string]string // "regime|trial=N" or "regime|baseline" → run key
	// windowSpans are the held-out windows' parts of the trace, for a
	// trace study's validation.
	windowSpans []string
	// worlds are, by point label, the world the baseline runs in at each
	// other world and whether it is the study's own.
	worlds map[string]report.WorldEvidence
}

func (p *plan) add(name string, cfg cluster.Config, wl *workloads.Workload, seeds []int64) {
	if _, ok := p.keys[name]; ok {
		return // the same run for another candidate (the baseline)
	}
	key := configKey(name, cfg, wl)
	p.keys[name] = key
	for _, s := range seeds {
		p.jobs = append(p.jobs, job{key: key, seed: s, cfg: cfg, wl: wl})
	}
}

// configKey names a run by what it is and a digest of its configuration
// and workload, so that a changed template never reuses a stale run.
func configKey(name string, cfg cluster.Config, wl *workloads.Workload) string {
	cfg.Seed = 0
	js, _ := json.Marshal(struct {
		Config   cluster.Config
		Workload string
		Spec     any
	}{cfg, wl.Name, wl.Spec})
	sum := sha256.Sum256(js)
	return name + "|" + hex.EncodeToString(sum[:6])
}

// validationPlan lists every simulation a validation needs.
func (e *Env) validationPlan(r *report.Report, req validationRequest) (*plan, error) {
	studyWL, err := workloads.Resolve(r.Study.Workload)
	if err != nil {
		return nil, err
	}
	p := &plan{keys: map[string]string{}, worlds: map[string]report.WorldEvidence{}}
	if split, ok := studyWL.Split(); ok && req.Windows {
		for _, n := range req.Seeds {
			p.windowSpans = append(p.windowSpans, split.Window(n).String())
		}
	}
	for _, pt := range req.points() {
		wl, label := studyWL, pt.label
		if pt.regime != "" {
			rg, _ := workloads.LookupRegime(pt.regime)
			wl = studyWL.At(rg)
		}
		if req.Windows {
			wl = wl.OnWindows(req.Seeds)
		}
		if pt.world != nil {
			if err := e.placeWorld(r, wl, pt, p); err != nil {
				return nil, err
			}
		}
		for _, n := range req.Trials {
			cand, base, err := e.configs(r, wl, r.ByNumber(n).Params, pt.world)
			if err != nil {
				return nil, fmt.Errorf("trial %d at %s: %v", n, wl.Name, err)
			}
			at, err := atLoad(wl, base)
			if err != nil {
				return nil, err
			}
			p.add(fmt.Sprintf("%s|trial=%d", label, n), cand, at, req.Seeds)
			p.add(label+"|baseline", base, at, req.Seeds)
		}
	}
	return p, nil
}

// storedValidation rebuilds a stored validation request of study r from
// the stored runs, without simulating.
func (e *Env) storedValidation(r *report.Report, js string, stored runs) (*report.Validation, error) {
	req, err := decodeRequest[validationRequest](js)
	if err != nil {
		return nil, fmt.Errorf("study %s: stored validation: %v", r.Study.Name, err)
	}
	for _, n := range req.Trials {
		if r.ByNumber(n) == nil {
			return nil, fmt.Errorf("study %s: stored validation names trial %d, which is not complete", r.Study.Name, n)
		}
	}
	p, err := e.validationPlan(r, req)
	if err != nil {
		return nil, err
	}
	return validationReport(r, req, p, stored), nil
}

// validationReport builds the report of request req from the stored runs.
func validationReport(r *report.Report, req validationRequest, p *plan, stored runs) *report.Validation {
	v := &report.Validation{Seeds: req.Seeds, Windows: req.Windows, Candidates: []report.CandidateEvidence{}, Regimes: []report.RegimeEvidence{},
		Kind: req.kind()}
	v.Verdicts = report.VerdictRulesIn(r.Template.Objectives[r.Template.Primary].Name, len(req.Seeds), v.Unit())
	if req.Windows {
		v.WindowSpans = p.windowSpans
	}
	for _, j := range p.jobs {
		if _, ok := stored[storage.RunKey{Key: j.key, Seed: j.seed}]; !ok {
			v.Missing++
		}
	}
	for _, pt := range req.points() {
		label := pt.label
		// Graded as at a regime — nothing was fitted there — at a regime
		// and in a world other than the study's.
		elsewhere := pt.regime != "" || pt.world != nil && !p.worlds[label].StudyWorld
		var cands []report.CandidateEvidence
		for _, n := range req.Trials {
			cands = append(cands, compare(r, r.ByNumber(n), stored, p.keys[fmt.Sprintf("%s|trial=%d", label, n)], p.keys[label+"|baseline"], req.Seeds, elsewhere, v.Unit()))
		}
		switch {
		case pt.world != nil:
			v.Worlds = append(v.Worlds, worldEvidence(r, pt, p, cands))
		case pt.regime == "":
			v.Candidates = cands
		default:
			rg, _ := workloads.LookupRegime(pt.regime)
			v.Regimes = append(v.Regimes, report.RegimeEvidence{Name: pt.regime, Doc: rg.Doc, Candidates: cands})
		}
	}
	return v
}

// compare pairs a trial of study r: its held-out runs with the baseline's,
// seed by seed, over the seeds where both are stored.
func compare(r *report.Report, c *report.Result, stored runs, candKey, baseKey string, seeds []int64, regime bool, unit string) report.CandidateEvidence {
	ce := report.CandidateEvidence{Trial: c.Number, Params: r.ParamMap(c.Params), Objectives: map[string]report.ObjectiveEvidence{}}
	var cand, base []metrics.Summary
	for _, s := range seeds {
		cm, ok1 := stored[storage.RunKey{Key: candKey, Seed: s}]
		bm, ok2 := stored[storage.RunKey{Key: baseKey, Seed: s}]
		if ok1 && ok2 {
			cand, base = append(cand, cm), append(base, bm)
		}
	}
	baseObj, _ := r.BaselineObjectives()
	for k, o := range r.Template.Objectives {
		oe := report.ObjectiveEvidence{InStudyDelta: report.Num(report.Delta(c.Objectives[k], baseObj[k])), Seeds: len(cand)}
		changes := make([]float64, len(cand))
		for i := range cand {
			v, _ := strategies.Metric(&cand[i], o.Metric)
			b, _ := strategies.Metric(&base[i], o.Metric)
			changes[i] = report.Delta(v, b)
			if o.Minimize && v < b || !o.Minimize && v > b {
				oe.BetterOnSeeds++
			}
		}
		mean, lo, hi := pairedT(changes)
		oe.HeldOutDelta, oe.CI95 = report.Num(mean), [2]report.Num{report.Num(lo), report.Num(hi)}
		ce.Objectives[o.Name] = oe
	}
	prim := r.Template.Objectives[r.Template.Primary]
	pe := ce.Objectives[prim.Name]
	// sign turns "lower" into "better" for a minimised objective.
	sign := 1.0
	if prim.Minimize {
		sign = -1
	}
	lo, hi, in := sign*float64(pe.CI95[0]), sign*float64(pe.CI95[1]), sign*float64(pe.InStudyDelta)
	if lo > hi {
		lo, hi = hi, lo
	}
	failed := ""
	if len(cand) > 0 {
		failed = r.FailedConstraint(metrics.Mean(cand), metrics.Mean(base))
	}
	ce.Verdict = report.Grade(lo, hi, in, pe.BetterOnSeeds, pe.Seeds, failed, regime)
	ce.Overfit, ce.Failed = ce.Verdict == report.VerdictOverfit, failed
	ce.Detail = fmt.Sprintf("%s %s held out, better on %d/%d %ss", prim.Name, pe.Interval(), pe.BetterOnSeeds, pe.Seeds, unit)
	if !regime {
		ce.Detail += "; in study " + report.Percent(float64(pe.InStudyDelta))
	}
	if failed != "" {
		ce.Detail += "; " + failed + " fails held out"
	}
	return ce
}

// pairedT is the mean of the per-seed changes and its 95 % Student-t
// interval, mean ± t(0.975, n−1)·s/√n; the interval is NaN below 2 seeds.
func pairedT(d []float64) (mean, lo, hi float64) {
	n := float64(len(d))
	if len(d) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	for _, x := range d {
		mean += x
	}
	mean /= n
	if len(d) < 2 {
		return mean, math.NaN(), math.NaN()
	}
	ss := 0.0
	for _, x := range d {
		ss += (x - mean) * (x - mean)
	}
	half := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Quantile(0.975) * math.Sqrt(ss/(n-1)) / math.Sqrt(n)
	return mean, mean - half, mean + half
}
