package report

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
	Baseline   []Num          `json:"baseline"` // the baseline's objectives, in Objectives order
	Trials     []HistoryPoint `json:"trials"`
	// LogScale says the primary objective's values span more than a
	// decade, all positive (Report.PrimaryLogScale): a history view draws
	// them on a log axis.
	LogScale bool `json:"log_scale"`
	// Hypervolume is the hypervolume of the front of the first k trials
	// (objectives as ratios to the baseline), k = 1, 2, … in trial order.
	Hypervolume []Num `json:"hypervolume"`
}

// HistoryPoint is one complete trial: its objectives, its score (what the
// sampler minimised), whether it met every constraint (an infeasible
// trial's score carries a penalty), and the primary objective of the best
// feasible trial so far (Report.BestFeasibleSoFar; null before the first
// feasible trial), also as a ratio to the baseline (smaller is better), so
// that studies of different baselines compare.
type HistoryPoint struct {
	Trial      int   `json:"trial"`
	Objectives []Num `json:"objectives"`
	Score      Num   `json:"score"`
	Best       Num   `json:"best_feasible"`
	BestRatio  Num   `json:"best_feasible_ratio"`
	Feasible   bool  `json:"feasible"`
	Pareto     bool  `json:"pareto"`
}

// History builds the history document.
func (r *Report) History() HistoryJSON {
	base, minimize := r.BaselineObjectives()
	p := r.Template.Primary
	h := HistoryJSON{Primary: r.Template.Objectives[p].Name, Minimize: minimize[p], Trials: []HistoryPoint{}, Hypervolume: []Num{},
		LogScale: r.PrimaryLogScale()}
	for k, o := range r.Template.Objectives {
		h.Objectives = append(h.Objectives, o.Name)
		h.Baseline = append(h.Baseline, Num(base[k]))
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
		pt := HistoryPoint{Trial: c.Number, Score: Num(c.Score), Best: Num(best[i]), BestRatio: Num(ratio), Pareto: pareto[i],
			Feasible: search.Feasible(c.Violation)}
		for _, v := range c.Objectives {
			pt.Objectives = append(pt.Objectives, Num(v))
		}
		h.Trials = append(h.Trials, pt)
	}
	for _, v := range r.HypervolumeHistory() {
		h.Hypervolume = append(h.Hypervolume, Num(v))
	}
	return h
}
