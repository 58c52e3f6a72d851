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
// (Knowles' ParEGO, on TPE instead of a Gaussian process).
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
	return s.transaction(func(st goptuna.Storage) error {
		if err := st.SetTrialSystemAttr(trialID, AttrObjectives, string(js)); err != nil {
			return fmt.Errorf("tell trial %d: objectives: %w", trialID, err)
		}
		return tell(st, trialID, score)
	})
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

// paregoRecord parses a complete trial's AttrObjectives once: a complete
// trial never changes, and parsing every trial's JSON on every proposal
// would cost more than the model at thousands of trials. Records are kept
// by the trial's position in the history (stable: trials come in id order
// and are never removed), checked against its id. Runs with s.mu held.
func (s *Sampler) paregoRecord(at int, t *goptuna.FrozenTrial) (paregoRecord, bool) {
	if at < len(s.paregos) && s.paregos[at].id == t.ID {
		return s.paregos[at].rec, len(s.paregos[at].rec.Ratios) > 0
	}
	var rec paregoRecord
	if attr, ok := t.SystemAttrs[AttrObjectives]; ok && json.Unmarshal([]byte(attr), &rec) != nil {
		rec = paregoRecord{}
	}
	for len(s.paregos) <= at {
		s.paregos = append(s.paregos, parsedRecord{})
	}
	s.paregos[at] = parsedRecord{id: t.ID, rec: rec}
	return rec, len(rec.Ratios) > 0
}

// parsedRecord is a complete trial's parsed AttrObjectives.
type parsedRecord struct {
	id  int
	rec paregoRecord
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
