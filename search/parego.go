package search

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/c-bata/goptuna"
)

// MethodParEGO aims at the Pareto front rather than one scalarised score:
// each proposal draws its own weights over the objectives and hands TPE
// every finished trial's augmented Chebyshev scalarisation under them,
//
//	max_i w_i·f_i + ρ·Σ_i w_i·f_i + penalty,
//
// where f_i is objective i as a ratio to the baseline (smaller is better),
// ρ = 0.05, and penalty the trial's constraint penalty (so an infeasible
// trial never looks good, yet still tells TPE where not to go). Different
// weights pull successive proposals towards different parts of the front
// (Knowles' ParEGO, on goptuna's TPE instead of a Gaussian process).
const MethodParEGO Method = "parego"

// AttrObjectives holds a finished trial's objectives as ratios to the
// baseline and its constraint penalty (JSON), for MethodParEGO.
const AttrObjectives = "optimize_objectives"

// chebyshevRho is the augmentation that breaks ties among points with the
// same worst weighted objective.
const chebyshevRho = 0.05

// streamWeights is the per-trial stream ParEGO's weights come from.
const streamWeights uint64 = 101

// paregoRecord is AttrObjectives' value.
type paregoRecord struct {
	Ratios  []float64 `json:"ratios"`
	Penalty float64   `json:"penalty"`
}

// TellObjectives completes a trial like Tell and records its objectives
// as ratios to the baseline (smaller is better) and its constraint
// penalty, which MethodParEGO scalarises anew for every proposal.
func (s *Sampler) TellObjectives(trialID int, score float64, ratios []float64, penalty float64) error {
	if s.method != MethodParEGO {
		// Only ParEGO reads them; skipping the write saves a SQLite
		// transaction per trial for the other samplers. A later study warm-
		// started from this one recomputes them from its own trial rows.
		return s.Tell(trialID, score)
	}
	for i, r := range ratios {
		if math.IsNaN(r) || math.IsInf(r, 0) {
			ratios[i] = RatioCap // a broken value counts as far worse than the baseline
		}
	}
	js, _ := json.Marshal(paregoRecord{Ratios: ratios, Penalty: penalty})
	if err := s.storage.SetTrialSystemAttr(trialID, AttrObjectives, string(js)); err != nil {
		return fmt.Errorf("tell trial %d: objectives: %w", trialID, err)
	}
	return s.Tell(trialID, score)
}

// paregoWeights draws trial number's weights, uniform on the simplex.
func (s *Sampler) paregoWeights(number, n int) []float64 {
	rng := newTrialRand(s.seed, number, streamWeights)
	w := make([]float64, n)
	sum := 0.0
	for i := range w {
		w[i] = -math.Log(1 - rng.Float64())
		sum += w[i]
	}
	for i := range w {
		w[i] /= sum
	}
	return w
}

// paregoView returns trials with each finished trial's value replaced by
// its scalarisation under trial number's weights; trials without recorded
// objectives keep their value.
func (s *Sampler) paregoView(trials []goptuna.FrozenTrial, number int) []goptuna.FrozenTrial {
	out := make([]goptuna.FrozenTrial, len(trials))
	var weights []float64
	for i, t := range trials {
		out[i] = t
		if t.State != goptuna.TrialStateComplete {
			continue
		}
		attr, ok := t.SystemAttrs[AttrObjectives]
		if !ok {
			continue
		}
		var rec paregoRecord
		if json.Unmarshal([]byte(attr), &rec) != nil || len(rec.Ratios) == 0 {
			continue
		}
		if weights == nil {
			weights = s.paregoWeights(number, len(rec.Ratios))
		}
		if len(rec.Ratios) != len(weights) {
			continue
		}
		out[i].Value = chebyshev(weights, rec.Ratios) + rec.Penalty
	}
	return out
}

// chebyshev is the augmented Chebyshev scalarisation of f under weights w.
func chebyshev(w, f []float64) float64 {
	worst, sum := math.Inf(-1), 0.0
	for i := range w {
		v := w[i] * math.Min(f[i], RatioCap)
		worst = math.Max(worst, v)
		sum += v
	}
	return worst + chebyshevRho*sum
}
