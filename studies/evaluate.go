package studies

import (
	"fmt"
	"sync"

	"optimize/search"
	"optimize/simcore"
	"optimize/simcore/cluster"
	"optimize/simcore/keys"
	"optimize/simcore/metrics"
	"optimize/simcore/workload"
	"optimize/storage"
	"optimize/strategies"
	"optimize/strategies/production"
	"optimize/strategies/settings"
	"optimize/strategies/workloads"
	"optimize/studies/report"
)

// evaluator runs one parameter vector of a template on every seed and
// turns the results into the template's objectives and a scalar score.
type evaluator struct {
	tpl      *strategies.Template
	base     cluster.Config // model profile and defaults, before the template
	wl       *workloads.Workload
	seeds    []int64
	baseline *metrics.Summary // nil while the baseline itself is evaluated
	// workloads is every seed's workload, drawn once for all the trials.
	workloads workloadCache
	// scenario is the regime and world of a robust study this evaluator
	// runs (its regime is in wl already); the zero Scenario for others.
	scenario strategies.Scenario
	// others are a robust study's evaluators of its other scenarios (ev is
	// its first, the reference), aggregated by aggregate; nil otherwise.
	others    []*evaluator
	aggregate string
	// pruner, in a robust study with Prune, stops a trial's scenarios
	// early (see pruner); nil runs every scenario in the study's order.
	pruner *pruner
	// deployable: every trial runs as its exported files carry it
	// (runConfig).
	deployable bool
}

// run simulates values on every seed in parallel; results keep seed order.
func (ev *evaluator) run(cfg cluster.Config) (metrics.Summary, []metrics.Summary, error) {
	runs := make([]metrics.Summary, len(ev.seeds))
	errs := make([]error, len(ev.seeds))
	var wg sync.WaitGroup
	for i, seed := range ev.seeds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runs[i], errs[i] = ev.simulate(cfg, seed)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return metrics.Summary{}, nil, err
		}
	}
	return metrics.Mean(runs), runs, nil
}

// simulate runs cfg on the study's workload with one seed, replaying the
// seed's cached draws.
func (ev *evaluator) simulate(cfg cluster.Config, seed int64) (metrics.Summary, error) {
	if ev.wl.Trace != nil {
		return simulateTrace(cfg, ev.wl.Trace, seed)
	}
	return simulateOn(cfg, ev.wl.Spec, seed, func(opt workload.Options) (simcore.Source, error) {
		return ev.workloads.source(ev.wl.Spec, seed, opt.BlockSize, opt.Horizon)
	})
}

// simulate runs cfg on the workload with one seed, generating it (or
// replaying the trace).
func simulate(cfg cluster.Config, wl *workloads.Workload, seed int64) (metrics.Summary, error) {
	if wl.Trace != nil {
		return simulateTrace(cfg, wl.Trace, seed)
	}
	spec := wl.Spec
	return simulateOn(cfg, spec, seed, func(opt workload.Options) (simcore.Source, error) {
		return workload.NewGenerator(spec, opt)
	})
}

// simulateOn runs cfg on spec with one seed, on the requests of the
// source that newSource makes for the run's workload options.
func simulateOn(cfg cluster.Config, spec *workload.Spec, seed int64, newSource func(workload.Options) (simcore.Source, error)) (metrics.Summary, error) {
	cfg.Seed = seed
	// The workload's latency targets fill the classes the template left
	// unset.
	spec.FillTargets(&cfg.SLOTTFT, &cfg.SLOITL, &cfg.SLOE2E)
	src, err := newSource(workload.Options{Seed: seed, BlockSize: int(cfg.BlockSize), Horizon: cfg.Horizon})
	if err != nil {
		return metrics.Summary{}, err
	}
	eng, err := cluster.New(cfg, src)
	if err != nil {
		return metrics.Summary{}, err
	}
	return eng.Run(), nil
}

// config builds the simulator configuration of a parameter vector, on the
// cluster of the study's workload regime.
func (ev *evaluator) config(values []search.Value) (cluster.Config, error) {
	c, err := ev.tpl.Config(ev.base, values)
	if err != nil {
		return c, err
	}
	ev.wl.ApplyConfig(&c)
	return c, ev.scenario.ApplyWorld(&c)
}

// runConfig is the configuration a trial of values runs with: config's,
// and in a deployable study that as its exported files carry it —
// production.AsDeployed on the study's base, in the trial's world — so
// that the trial measures what production gets.
func (ev *evaluator) runConfig(values []search.Value) (cluster.Config, error) {
	c, err := ev.config(values)
	if err != nil || !ev.deployable {
		return c, err
	}
	return production.AsDeployed(ev.base, c)
}

// knownRatio is search.Options.KnownRatio for this study: a primary
// objective the configuration decides before it runs (cost per hour), as
// a ratio to the baseline's; nil when the primary is measured, maximised,
// or the study is robust (its scenarios change the cluster, and the
// score is their worst ratio).
func (ev *evaluator) knownRatio() func([]search.Value) (float64, bool) {
	prim := ev.tpl.Objectives[ev.tpl.Primary]
	if !prim.Minimize || ev.baseline == nil || len(ev.others) > 0 {
		return nil
	}
	base, err := strategies.Metric(ev.baseline, prim.Metric)
	if err != nil || !(base > 0) {
		return nil
	}
	return func(values []search.Value) (float64, bool) {
		cfg, err := ev.runConfig(values)
		if err != nil {
			return 0, false // the run will say why
		}
		v, ok := strategies.ConfigMetric(&cfg, prim.Metric)
		return v / base, ok
	}
}

// objectives reads the template's objectives from a mean summary.
func (ev *evaluator) objectives(s *metrics.Summary) ([]float64, error) {
	out := make([]float64, len(ev.tpl.Objectives))
	for i, o := range ev.tpl.Objectives {
		v, err := strategies.Metric(s, o.Metric)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// judge evaluates a run's mean summary against the baseline: the
// template's objectives, their ratios to the baseline's and each
// constraint's shortfall.
func (ev *evaluator) judge(s *metrics.Summary) (search.Evaluation, error) {
	return ev.tpl.Judge(ev.baseline, s)
}

// baselineConfig is the llm-d-parity baseline run in the study's
// environment: the baseline template's policies, but the study template's
// cluster (instances, KV capacity, model, GPU, TP, latency model, GPU
// prices), CPU KV tier and SLO targets — every setting of those three
// components — so that only the strategy differs between the two. The world is resolved
// again after the copy: the baseline template's was resolved for its own
// model and GPU, and a study on another GPU or latency model must price
// and time its baseline in the study's world.
//
// A study created from production configs (study create --baseline-epp,
// --baseline-vllm-args) runs its baseline with those instead: the
// configs read onto the standard configuration, then the study's world —
// the cluster's settings and every setting the production column calls
// the world (the host link, targets, horizon) — copied over them, as the
// template baseline's is.
func baselineConfig(reg *strategies.Registry, study cluster.Config, base cluster.Config, from []storage.ConfigFile) (cluster.Config, error) {
	if len(from) > 0 {
		return productionBaseline(study, base, from)
	}
	bt, err := reg.Get("baseline")
	if err != nil {
		return cluster.Config{}, err
	}
	cfg, err := bt.Config(base, bt.Defaults())
	if err != nil {
		return cluster.Config{}, fmt.Errorf("baseline template: %v", err)
	}
	for _, s := range settings.All() {
		// The SLO targets too: they define the SLOs both are judged by
		// (a template may set them in its mechanism).
		if s.Component == settings.CompCluster || s.Component == settings.CompKVOffload || s.Component == settings.CompSLOTargets {
			s.Restore(&cfg, &study)
		}
	}
	// The world came with the cluster settings: resolve it again (the
	// latency model, its coefficients, the architecture and the GPU).
	if err := settings.CheckConfig(&cfg); err != nil {
		return cluster.Config{}, fmt.Errorf("baseline in the study's world: %v", err)
	}
	return cfg, nil
}

// productionBaseline is the baseline of production configs (see
// baselineConfig).
func productionBaseline(study, base cluster.Config, from []storage.ConfigFile) (cluster.Config, error) {
	cfg := base
	for _, f := range from {
		if _, err := production.Apply(f.Kind, f.Path, []byte(f.Data), &cfg); err != nil {
			return cluster.Config{}, fmt.Errorf("baseline from production configs: %v", err)
		}
	}
	production.KeepWorld(&cfg, &study)
	if cfg.PD.Decider != cluster.PDNever && !cfg.PD.Enabled() {
		// The pools are the study's world: read onto a world without them,
		// the file's P/D profiles would silently route aggregated.
		return cluster.Config{}, fmt.Errorf("baseline from production configs: its P/D profiles (%s=%s) split requests between prefill and decode pools, and the study's world has none (%s, %s are 0): create the study on a template whose world sizes them",
			keys.PDDecider, cfg.PD.Decider, keys.PDPrefillInstances, keys.PDDecodeInstances)
	}
	if err := settings.CheckConfig(&cfg); err != nil {
		return cluster.Config{}, fmt.Errorf("baseline from production configs in the study's world: %v", err)
	}
	return cfg, nil
}

// describe puts a trial's primary objective against the baseline, e.g.
// "critical_ttft_p99 -69.7%", and says when the trial misses a
// constraint.
func (ev *evaluator) describe(t *storage.Trial) string {
	if ev.tpl.Primary >= len(t.Objectives) {
		return fmt.Sprintf("score %.3f", t.Score)
	}
	prim := ev.tpl.Objectives[ev.tpl.Primary]
	base, _ := strategies.Metric(ev.baseline, prim.Metric)
	out := fmt.Sprintf("%s %+.1f%%", prim.Name, 100*report.Delta(t.Objectives[ev.tpl.Primary], base))
	if t.Judged && !search.Feasible(t.Violation) {
		out += " (violates a constraint)"
	}
	return out
}

// simulateTrace replays the trace on cfg with one seed (it draws the SLO
// mix); the rows skipped as unservable are in the summary.
func simulateTrace(cfg cluster.Config, t *workloads.Trace, seed int64) (metrics.Summary, error) {
	cfg.Seed = seed
	src, err := t.Source(cfg)
	if err != nil {
		return metrics.Summary{}, err
	}
	defer src.Close()
	eng, err := cluster.New(cfg, src)
	if err != nil {
		return metrics.Summary{}, err
	}
	sum := eng.Run()
	if err := src.Err(); err != nil {
		return metrics.Summary{}, err
	}
	workloads.AddReplayCounts(&sum, src.Counts())
	return sum, nil
}
