package studies

import (
	"math"

	"optimize/search"
)

// HistoryJSON is `study export NAME --history --format json` (and GET
// /api/studies/{name}/history): what an optimisation-history view draws,
// one small row per complete trial, without per-seed data, so that it
// stays cheap for thousands of trials.
type HistoryJSON struct {
	Primary    string         `json:"primary"`
	Minimize   bool           `json:"minimize"`
	Objectives []string       `json:"objectives"`
	Baseline   []num          `json:"baseline"` // the baseline's objectives, in Objectives order
	Trials     []HistoryPoint `json:"trials"`
	// Hypervolume is the hypervolume of the front of the first k trials
	// (objectives as ratios to the baseline), k = 1, 2, … in trial order.
	Hypervolume []num `json:"hypervolume"`
}

// HistoryPoint is one complete trial: its objectives, its score (what the
// sampler minimised), whether it met every constraint (an infeasible
// trial's score carries a penalty), and the primary objective of the best
// feasible trial so far (Report.BestFeasibleSoFar; null before the first
// feasible trial), also as a ratio to the baseline (smaller is better), so
// that studies of different baselines compare.
type HistoryPoint struct {
	Trial      int   `json:"trial"`
	Objectives []num `json:"objectives"`
	Score      num   `json:"score"`
	Best       num   `json:"best"`
	BestRatio  num   `json:"best_ratio"`
	Feasible   bool  `json:"feasible"`
	Pareto     bool  `json:"pareto"`
}

// History builds the history document.
func (r *Report) History() HistoryJSON {
	base, minimize := r.baselineObjectives()
	p := r.Template.Primary
	h := HistoryJSON{Primary: r.Template.Objectives[p].Name, Minimize: minimize[p], Trials: []HistoryPoint{}, Hypervolume: []num{}}
	for k, o := range r.Template.Objectives {
		h.Objectives = append(h.Objectives, o.Name)
		h.Baseline = append(h.Baseline, num(base[k]))
	}
	pareto := make(map[int]bool, len(r.Pareto))
	for _, i := range r.Pareto {
		pareto[i] = true
	}
	best := r.BestFeasibleSoFar()
	for i, c := range r.Complete {
		ratio := search.Normalize(best[i:i+1], base[p:p+1], minimize[p:p+1])[0]
		if math.IsNaN(best[i]) {
			ratio = math.NaN()
		}
		pt := HistoryPoint{Trial: c.Number, Score: num(c.Score), Best: num(best[i]), BestRatio: num(ratio), Pareto: pareto[i],
			Feasible: c.Feasible()}
		for _, v := range c.Objectives {
			pt.Objectives = append(pt.Objectives, num(v))
		}
		h.Trials = append(h.Trials, pt)
	}
	for _, v := range r.HypervolumeHistory() {
		h.Hypervolume = append(h.Hypervolume, num(v))
	}
	return h
}
