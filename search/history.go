package search

import (
	"math"
	"sort"
	"strings"

	"github.com/c-bata/goptuna"
)

// scored is one trial as TPE models it: its parameters, the score it is
// ranked by (its value with the penalty softened, see
// samplerViolationWeight; its ParEGO scalarisation; its quantile in a
// warm start; or the liar's worst score for a pending trial), and whether
// it came from an earlier study (Warm).
type scored struct {
	params  map[string]float64
	score   float64
	warm    bool
	pending bool // a running trial, scored by the liar
}

// samplerViolationWeight is what the model-based samplers charge per unit
// of constraint shortfall when they rank trials: 10, i.e. 0.1 of the
// primary ratio per percentage point, where a trial's stored score (and so
// the report's best) charges DefaultViolationWeight, 1000, which puts every
// feasible trial first. The report must rank that way; the sampler must
// not: a mechanism whose first trials miss a constraint by a few points
// while far ahead on the objective (strict class priority in sustained
// overload: −98 % critical TTFT P99 at −3 % tokens/s, the constraint being
// −1 %) would otherwise rank behind every feasible trial, TPE would model
// it as bad as one that does nothing and abandon it, and the study would
// stop at a feasible −12 %. Ranked at 0.02 + 0.3, such trials enter TPE's
// best group and draw the search to the mechanism, where feasible
// settings exist. Measured (BENCHMARKS.md): cold sustained-overload
// studies that find it 9 of 10 against 5 of 10, hypervolume at the
// default load unchanged. It needs the trial's violation, which TellObjectives records;
// a trial without a record (an older study resumed) is ranked by its
// stored score.
const samplerViolationWeight = 10.0

// SamplerScore is how the model-based samplers (gp, tpe, parego) rank a trial of stored score and total
// violation: the same primary ratio, its shortfall charged at
// samplerViolationWeight instead of DefaultViolationWeight. A study that
// stops trials early (studies' pruner) asks it, so that a pruned trial's
// bound never ranks, in the sampler's eyes, ahead of the best trial.
func SamplerScore(score, violation float64) float64 {
	return score - DefaultViolationWeight*violation + samplerViolationWeight*violation
}

// History bound: TPE reads at most the historyBest best-scoring complete
// trials and the defaultHistoryRecent most recent others. The best group of
// TPE's split never holds more than 25 trials, so it is exactly what the
// whole history would give; the rest of the history is seen through its
// newest defaultHistoryRecent trials, where the whole history would add older
// trials that TPE's weights already count least (a trial's weight falls
// linearly with its age, to 1/m for the oldest of m). This bounds a
// proposal's cost whatever the study's size; studies of up to
// historyBest+defaultHistoryRecent complete trials are modelled on
// everything. Options.History changes the second number, for comparisons.
const (
	historyBest          = 25
	defaultHistoryRecent = 150
)

// history returns what trial number's TPE proposal models, in trial
// order: the bounded complete trials, then the pending ones carrying the
// liar's score (unless Options.NoLiar). The asking trial is not among
// them: it is written after its proposal. Runs with s.mu held.
func (s *Sampler) history(trials []goptuna.FrozenTrial, number int) []scored {
	var weights []float64
	complete := make([]scored, 0, len(trials))
	for i := range trials {
		t := &trials[i]
		if t.State != goptuna.TrialStateComplete {
			continue
		}
		score := t.Value
		if rec, ok := s.recordOf(i, t); ok {
			v := rec.violation()
			soft := samplerViolationWeight * v
			score = SamplerScore(t.Value, v)
			if s.method == MethodParEGO {
				if weights == nil {
					weights = s.paregoWeights(number, len(rec.Ratios))
				}
				if len(rec.Ratios) == len(weights) {
					score = chebyshev(weights, rec.Ratios) + soft
				}
			}
		}
		warm := s.opts.Warm && strings.HasPrefix(t.SystemAttrs[AttrSource], warmSource)
		complete = append(complete, scored{params: t.InternalParams, score: score, warm: warm})
	}
	if s.opts.Warm {
		toQuantiles(complete)
	}
	recent := defaultHistoryRecent
	switch {
	case s.opts.History > 0:
		recent = s.opts.History
	case s.opts.History < 0:
		recent = len(complete)
	}
	out := bounded(complete, recent)
	if s.opts.NoLiar {
		return out
	}
	lie, ok := worstScore(complete)
	if !ok {
		return out
	}
	for i := range trials {
		t := &trials[i]
		// A trial still being written (some params missing) stays out:
		// its position is not known yet.
		if t.State == goptuna.TrialStateRunning && hasAllParams(t.InternalParams, s.space) {
			out = append(out, scored{params: t.InternalParams, score: lie, pending: true})
		}
	}
	return out
}

// bounded keeps the historyBest best and the recent newest of the complete
// trials, in trial order.
func bounded(complete []scored, recent int) []scored {
	if len(complete) <= historyBest+recent {
		return complete
	}
	first := len(complete) - recent
	keep := make([]bool, first)
	for _, i := range lowest(len(complete), historyBest, func(i int) float64 { return complete[i].score }) {
		if i < first {
			keep[i] = true
		}
	}
	out := make([]scored, 0, historyBest+recent)
	for i := range keep {
		if keep[i] {
			out = append(out, complete[i])
		}
	}
	return append(out, complete[first:]...)
}

// hasAllParams reports whether a proposal is fully written: every axis is
// stored, or is conditional on a stored axis whose choice leaves it
// inactive.
func hasAllParams(params map[string]float64, space Space) bool {
	internal := make([]float64, len(space))
	for i, p := range space {
		v, ok := params[p.Name]
		if !ok {
			v = math.NaN()
		}
		internal[i] = v
	}
	for i, on := range space.Active(space.values(internal)) {
		if on && math.IsNaN(internal[i]) {
			return false
		}
	}
	return true
}

// observations are a parameter's stored values in the trials where it was
// active, with their scores, in history order.
func observations(history []scored, name string) []observation {
	var obs []observation
	for _, h := range history {
		if v, ok := h.params[name]; ok && !math.IsNaN(h.score) {
			obs = append(obs, observation{x: v, score: h.score})
		}
	}
	return obs
}

// toQuantiles puts a warm start's two sources of trials on one scale once
// the study has minModelTrials complete trials of its own: each trial's
// score becomes its quantile among the trials of its source, (rank + ½)/n.
// Scores of different workloads or regimes are not comparable (a
// strategy's ratio to the baseline at one load says little about its
// ratio at another), but which settings rank near the top often carries
// over (the quantile transfer of Salinas, Shen and Perrone, 2020). Without
// it an earlier study whose ratios are better than any the new regime
// allows would fill TPE's best group for good, and the study's own trials
// would never enter it. Until the study has trials of its own, the earlier
// study's scores stand as they are.
func toQuantiles(complete []scored) {
	var own, earlier []int
	for i, c := range complete {
		if c.warm {
			earlier = append(earlier, i)
		} else {
			own = append(own, i)
		}
	}
	if len(own) < minModelTrials || len(earlier) == 0 {
		return
	}
	for _, group := range [][]int{own, earlier} {
		sort.SliceStable(group, func(a, b int) bool { return complete[group[a]].score < complete[group[b]].score })
		// Equal scores share their mean rank (ties are common: different
		// weights often make the same routing decisions).
		for start := 0; start < len(group); {
			end := start + 1
			for end < len(group) && complete[group[end]].score == complete[group[start]].score {
				end++
			}
			q := (float64(start+end-1)/2 + 0.5) / float64(len(group))
			for _, i := range group[start:end] {
				complete[i].score = q
			}
			start = end
		}
	}
}
