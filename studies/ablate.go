package studies

import (
	"context"
	"fmt"
	"slices"

	"optimize/simcore/cluster"
	"optimize/simcore/errtext"
	"optimize/simcore/metrics"
	"optimize/strategies"
	"optimize/strategies/settings"
	"optimize/strategies/workloads"
	"optimize/studies/report"
)

// ablationRequest is what an ablation ran, as stored with the study.
type ablationRequest struct {
	Trial int `json:"trial"`
}

// notAblated are components that are not the strategy: the baseline runs
// on the study's cluster and CPU tier already, and targets and the run's
// horizon measure rather than act.
var notAblated = []string{settings.CompCluster, settings.CompKVOffload, settings.CompSLOTargets, settings.CompRun}

// component is one group of settings that differ between the candidate
// and the baseline.
type component struct {
	name     string
	settings []*settings.Setting
}

// components groups the settings in which cand differs from base (and
// that act in one of them) by component, in table order.
func components(cand, base *cluster.Config) []component {
	var out []component
	for _, name := range settings.Components() {
		if slices.Contains(notAblated, name) {
			continue
		}
		c := component{name: name}
		for _, s := range settings.All() {
			if s.Component == name && !s.Same(cand, base) && (s.Active.Holds(cand) || s.Active.Holds(base)) {
				c.settings = append(c.settings, s)
			}
		}
		if len(c.settings) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// with returns to with c's settings copied from from.
func (c component) with(to, from cluster.Config) cluster.Config {
	for _, s := range c.settings {
		s.Restore(&to, &from)
	}
	return to
}

// Ablate runs the leave-one-out and add-one variants of a trial (the best
// for trial −1) on the study's seeds, storing every run as it finishes.
func (e *Env) Ablate(ctx context.Context, name string, trial int) (*report.Ablation, error) {
	r, err := report.Load(e.Store, e.Registry, name)
	if err != nil {
		return nil, err
	}
	req := ablationRequest{Trial: trial}
	switch {
	case r.Best < 0:
		return nil, errtext.Usage("study %s has no complete trial to ablate", name)
	case trial < 0:
		req.Trial = r.Complete[r.Best].Number
	case r.ByNumber(trial) == nil:
		return nil, errtext.Usage("--trial: study %s has no complete trial %d", name, trial)
	}
	p, comps, err := e.ablationPlan(r, req)
	if err != nil {
		return nil, err
	}
	if err := e.Store.MigrateEvidence(); err != nil {
		return nil, err
	}
	if err := e.runJobs(ctx, r.Study, "ablate "+name, p.jobs); err != nil {
		return nil, err
	}
	// Recorded once every run is stored (see Validate).
	if err := e.saveRequest(r.Study.ID, req); err != nil {
		return nil, err
	}
	stored, err := e.storedRuns(r.Study, "ablate|")
	if err != nil {
		return nil, err
	}
	return ablationReport(r, req, p, comps, stored), nil
}

// storedAblation rebuilds a stored ablation request of study r from the
// stored runs, without simulating.
func (e *Env) storedAblation(r *report.Report, js string, stored runs) (*report.Ablation, error) {
	req, err := decodeRequest[ablationRequest](js)
	if err != nil || r.ByNumber(req.Trial) == nil {
		return nil, fmt.Errorf("study %s: stored ablation of trial %d cannot be read (%v)", r.Study.Name, req.Trial, err)
	}
	p, comps, err := e.ablationPlan(r, req)
	if err != nil {
		return nil, err
	}
	return ablationReport(r, req, p, comps, stored), nil
}

// ablationVariant is one ablated configuration.
type ablationVariant struct {
	comp     component
	loo, add cluster.Config
}

func (e *Env) ablationPlan(r *report.Report, req ablationRequest) (*plan, []ablationVariant, error) {
	wl, err := workloads.Resolve(r.Study.Workload)
	if err != nil {
		return nil, nil, err
	}
	wl = wl.OnSeeds(r.Seeds) // a split trace: the study's own windows
	cand, base, err := e.configs(r, wl, r.ByNumber(req.Trial).Params, nil)
	if err != nil {
		return nil, nil, err
	}
	p := &plan{keys: map[string]string{}}
	var variants []ablationVariant
	for _, c := range components(&cand, &base) {
		v := ablationVariant{comp: c, loo: c.with(cand, base), add: c.with(base, cand)}
		for _, cfg := range []*cluster.Config{&v.loo, &v.add} {
			if err := settings.CheckConfig(cfg); err != nil {
				return nil, nil, fmt.Errorf("ablation of component %s: %v", c.name, err)
			}
		}
		p.add(fmt.Sprintf("ablate|trial=%d|loo=%s", req.Trial, c.name), v.loo, wl, r.Seeds)
		p.add(fmt.Sprintf("ablate|trial=%d|add=%s", req.Trial, c.name), v.add, wl, r.Seeds)
		variants = append(variants, v)
	}
	return p, variants, nil
}

// ablationReport builds the report of request req from the stored runs.
func ablationReport(r *report.Report, req ablationRequest, p *plan, variants []ablationVariant, stored runs) *report.Ablation {
	trial := r.ByNumber(req.Trial)
	baseObj, _ := r.BaselineObjectives()
	a := &report.Ablation{Trial: req.Trial, Seeds: r.Seeds, Components: []report.ComponentEvidence{}, Full: map[string]report.Num{}, Interaction: map[string]report.Num{}}
	deltas := func(key string) (map[string]report.Num, bool) {
		runs, ok := stored.seeds(key, r.Seeds)
		if !ok {
			a.Missing++
			return nil, false
		}
		mean := metrics.Mean(runs)
		out := map[string]report.Num{}
		for k, o := range r.Template.Objectives {
			v, _ := strategies.Metric(&mean, o.Metric)
			out[o.Name] = report.Num(report.Delta(v, baseObj[k]))
		}
		return out, true
	}
	addSum := map[string]float64{}
	for k, o := range r.Template.Objectives {
		a.Full[o.Name] = report.Num(report.Delta(trial.Objectives[k], baseObj[k]))
	}
	for _, v := range variants {
		ce := report.ComponentEvidence{Name: v.comp.name, Settings: map[string]string{}, Contribution: map[string]report.Num{}}
		for _, s := range v.comp.settings {
			if s.Active.Holds(&v.loo) {
				ce.Settings[s.Key] = s.Value(&v.loo)
			}
		}
		loo, ok1 := deltas(p.keys[fmt.Sprintf("ablate|trial=%d|loo=%s", req.Trial, v.comp.name)])
		add, ok2 := deltas(p.keys[fmt.Sprintf("ablate|trial=%d|add=%s", req.Trial, v.comp.name)])
		ce.LeaveOneOut, ce.AddOne = loo, add
		for _, o := range r.Template.Objectives {
			if ok1 {
				ce.Contribution[o.Name] = a.Full[o.Name] - loo[o.Name]
			}
			if ok2 {
				addSum[o.Name] += float64(add[o.Name])
			}
		}
		a.Components = append(a.Components, ce)
	}
	if a.Missing == 0 {
		for _, o := range r.Template.Objectives {
			a.Interaction[o.Name] = a.Full[o.Name] - report.Num(addSum[o.Name])
		}
	}
	return a
}
