package studies

import "optimize/search"

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
// sampler minimised), the best score so far, and whether it met every
// constraint (an infeasible trial's score carries a penalty).
type HistoryPoint struct {
	Trial      int   `json:"trial"`
	Objectives []num `json:"objectives"`
	Score      num   `json:"score"`
	Best       num   `json:"best"`
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
	best := 0.0
	for i, c := range r.Complete {
		if i == 0 || c.Score < best {
			best = c.Score
		}
		pt := HistoryPoint{Trial: c.Number, Score: num(c.Score), Best: num(best), Pareto: pareto[i],
			Feasible: c.Score <= search.Scalarize(c.Objectives[p], base[p], minimize[p], nil, 0)+1e-9}
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
