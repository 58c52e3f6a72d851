package studies

import (
	"math"
	"slices"
	"sync"

	"optimize/search"
	"optimize/storage"
)

// A pruner stops a robust study's trial between two scenarios once the
// scenarios it has run prove it cannot beat the study's best trial
// (strategies.Robust.Prune): adaptive capping, as ParamILS and SMAC cap
// a run at the incumbent's cost, with scenarios in place of instances.
//
// It is exact. A trial's stored score is
//
//	min(aggregate primary ratio, RatioCap) + DefaultViolationWeight × violation
//
// and every scenario added can only raise it: the worst ratio is a
// maximum, a mean over all scenarios a sum of ratios ≥ 0 (a negative
// ratio, which Score counts as RatioCap, never prunes), each constraint's
// shortfall a maximum. So the score over the scenarios run (evaluator.
// combine with the missing ones left out) is a lower bound, and a bound
// at or above the best complete trial's score means the trial can never
// be the best: it is stored TrialPruned with that bound and the
// scenarios it ran. Pruned trials are not on the Pareto front either:
// their other objectives were not measured everywhere.
//
// The sampler learns a pruned trial by its bound, which it ranks with a
// softer violation weight (search.SamplerScore). A bound whose shortfall
// is tiny but whose ratio is far below the binding scenario's would
// rank, softened, among the best, and TPE would keep drawing a mechanism
// it has only seen half of (measured: 52 of 72 trials on one scheduler
// whose bounds read 0.3 and whose whole scores read 0.9). So a trial is
// pruned only when its bound is no better than the best trial's under
// that softer ranking as well.
//
// The order decides how much is saved: the scenario that most often held
// a trial's largest score (the one that binds) runs first, the study's
// order breaking ties, so a trial that cannot win usually stops after
// one scenario. Counts are kept per process; with one worker the order,
// and so the study, is deterministic.
type pruner struct {
	best func() (*storage.Trial, error) // the best complete trial, or nil

	mu    sync.Mutex
	binds []int // per scenario: trials whose largest score was there
}

// newPruner is a pruner of n scenarios against the best trial of study
// row in store.
func newPruner(store *storage.Store, row *storage.Study, n int) *pruner {
	return &pruner{binds: make([]int, n), best: func() (*storage.Trial, error) { return store.BestTrial(row.ID) }}
}

// order is the order to run n scenarios in: the study's without a pruner.
func (p *pruner) order(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	if p == nil {
		return out
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	slices.SortStableFunc(out, func(a, b int) int { return p.binds[b] - p.binds[a] })
	return out
}

// beaten reports whether bound, the aggregate over the scenarios run so
// far, proves the trial cannot beat the best complete trial, under the
// stored score and under the sampler's.
func (p *pruner) beaten(bound search.Evaluation) (bool, error) {
	if p == nil || bound.Ratios[bound.Primary] < 0 {
		return false, nil
	}
	best, err := p.best()
	if err != nil || best == nil || !best.Judged {
		return false, err
	}
	score, violation := bound.Score(search.DefaultViolationWeight), bound.Violation()
	return score >= best.Score && search.SamplerScore(score, violation) >= search.SamplerScore(best.Score, best.Violation), nil
}

// record counts the scenario where a trial's score was largest among
// those it ran (judged, nil where not run).
func (p *pruner) record(judged []*search.Evaluation) {
	if p == nil {
		return
	}
	at, largest := -1, math.Inf(-1)
	for i, j := range judged {
		if j == nil {
			continue
		}
		if s := j.Score(search.DefaultViolationWeight); s > largest {
			at, largest = i, s
		}
	}
	if at < 0 {
		return
	}
	p.mu.Lock()
	p.binds[at]++
	p.mu.Unlock()
}
