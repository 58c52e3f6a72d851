package studies

import (
	"fmt"
	"sync"

	"optimize/simcore/cluster"
	"optimize/simcore/metrics"
	"optimize/storage"
	"optimize/strategies"
	"optimize/strategies/workloads"
)

// capacitySeeds are the seeds a world's capacity is measured on: fixed,
// so that a capacity-relative regime means the same rate in every study
// of the world and workload (workloads.CapacityDefinition).
var capacitySeeds = []int64{1, 2, 3}

// capacities caches measured capacities for the process, by configKey of
// the baseline's configuration and the workload: a simulation's result is
// deterministic, so a cached value is the one measuring again would give.
var capacities sync.Map // string → float64

// atLoad returns wl with its capacity-relative regime applied (wl itself
// when it has none): the rate LoadFraction × the capacity of baseline's
// world on wl, measured on first use.
func atLoad(wl *workloads.Workload, baseline cluster.Config) (*workloads.Workload, error) {
	if wl.LoadFraction() == 0 {
		return wl, nil
	}
	if wl.Spec == nil {
		return nil, fmt.Errorf("workload %s: a capacity-relative regime scales a generated workload's rate (a workload spec), not a trace", wl.Name)
	}
	c, err := capacity(wl, baseline)
	if err != nil {
		return nil, err
	}
	return wl.AtCapacity(c), nil
}

// capacity is the mean over capacitySeeds of baseline's maximum
// sustainable rate on wl at the default attainment targets.
func capacity(wl *workloads.Workload, baseline cluster.Config) (float64, error) {
	key := configKey("capacity", baseline, wl)
	if c, ok := capacities.Load(key); ok {
		return c.(float64), nil
	}
	targets := defaultTargets(wl.Spec)
	if len(targets) == 0 {
		return 0, fmt.Errorf("workload %s: a capacity-relative regime needs requests of a class with a default attainment target (critical, standard, sheddable)", wl.Name)
	}
	run := func(_ string, cfg cluster.Config, wl *workloads.Workload, seed int64) (metrics.Summary, error) {
		return simulate(cfg, wl, seed)
	}
	rates := make([]float64, len(capacitySeeds))
	errs := make([]error, len(capacitySeeds))
	var wg sync.WaitGroup
	for i, seed := range capacitySeeds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := sustainable("capacity", baseline, wl, seed, targets, DefaultMaxRateTolerance, run)
			rates[i], errs[i] = s.Rate, err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return 0, fmt.Errorf("capacity of %s: %v", wl.Name, err)
		}
	}
	c := mean(rates)
	if !(c > 0) {
		return 0, fmt.Errorf("capacity of %s: the baseline meets the default attainment targets at no rate tried", wl.Name)
	}
	capacities.Store(key, c)
	return c, nil
}

// studyLoad is the study's workload wl with its capacity-relative regime
// applied in the world of the study's baseline.
func (e *Env) studyLoad(tpl *strategies.Template, wl *workloads.Workload, row *storage.Study) (*workloads.Workload, error) {
	if wl.LoadFraction() == 0 {
		return wl, nil
	}
	start, err := e.baseOf(row)
	if err != nil {
		return nil, err
	}
	study, err := tpl.Config(start, tpl.Defaults())
	if err != nil {
		return nil, err
	}
	wl.ApplyConfig(&study)
	base, err := baselineConfig(e.Registry, study, start, row.BaselineFrom)
	if err != nil {
		return nil, err
	}
	return atLoad(wl, base)
}
