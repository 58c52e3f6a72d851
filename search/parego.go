package search

import (
	"encoding/json"
	"math"
	"slices"

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
// baseline and its constraint penalty (JSON), for the model-based
// samplers: ParEGO scalarises the ratios, both soften the penalty
// (samplerViolationWeight).
const AttrObjectives = "optimize_objectives"

// chebyshevRho is the augmentation that breaks ties among points with the
// same worst weighted objective.
const chebyshevRho = 0.05

// streamWeights is the per-trial stream ParEGO's weights come from.
const streamWeights uint64 = 101

// objectivesRecord is AttrObjectives' value.
type objectivesRecord struct {
	Ratios []float64 `json:"ratios"`
	// Violation is the trial's total constraint shortfall
	// (Evaluation.Violation). Records written before it existed hold
	// Penalty, DefaultViolationWeight × the shortfall, instead.
	Violation *float64 `json:"violation,omitempty"`
	Penalty   float64  `json:"penalty,omitempty"`
}

// violation is the record's total constraint shortfall.
func (r objectivesRecord) violation() float64 {
	if r.Violation != nil {
		return *r.Violation
	}
	return r.Penalty / DefaultViolationWeight
}

// TellObjectives completes a trial with its evaluation: its score under
// DefaultViolationWeight (what Tell stores), and a record of its
// objectives as ratios to the baseline (smaller is better) and its total
// constraint violation: MethodParEGO scalarises the ratios anew for every
// proposal, and both model-based samplers rank with a softened penalty.
func (s *Sampler) TellObjectives(trialID int, e Evaluation) error {
	return s.TellObjectivesWith(trialID, e, nil)
}

// TellObjectivesWith is TellObjectives with the caller's record (nil:
// none) written in the same transaction, before the sampler's.
func (s *Sampler) TellObjectivesWith(trialID int, e Evaluation, rec Record) error {
	score, objectives := s.result(e)
	return s.tellWith(trialID, score, objectives, rec)
}

// result is e's stored score and its objectives record ("" for none).
func (s *Sampler) result(e Evaluation) (score float64, objectives string) {
	score, violation := e.Score(DefaultViolationWeight), e.Violation()
	if !s.modelBased() {
		// Only TPE (the penalty) and ParEGO (the ratios too) read them;
		// random and grid skip the write. A later study warm-started from
		// this one recomputes them from its own trial rows.
		return score, ""
	}
	ratios := slices.Clone(e.Ratios)
	for i, r := range ratios {
		if math.IsNaN(r) || math.IsInf(r, 0) {
			ratios[i] = RatioCap // a broken value counts as far worse than the baseline
		}
	}
	// A record JSON cannot hold leaves the trial without one: it is then
	// ranked by its stored score, as a trial of an older study.
	js, err := json.Marshal(objectivesRecord{Ratios: ratios, Violation: &violation})
	if err != nil {
		return score, ""
	}
	return score, string(js)
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

// recordOf parses a complete trial's AttrObjectives once: a complete
// trial never changes, and parsing every trial's JSON on every proposal
// would cost more than the model at thousands of trials. Records are kept
// by the trial's position in the history (stable: trials come in id order
// and are never removed), checked against its id. Runs with s.mu held.
func (s *Sampler) recordOf(at int, t *goptuna.FrozenTrial) (objectivesRecord, bool) {
	if at < len(s.records) && s.records[at].id == t.ID {
		return s.records[at].rec, len(s.records[at].rec.Ratios) > 0
	}
	var rec objectivesRecord
	if attr, ok := t.SystemAttrs[AttrObjectives]; ok && json.Unmarshal([]byte(attr), &rec) != nil {
		rec = objectivesRecord{}
	}
	for len(s.records) <= at {
		s.records = append(s.records, parsedRecord{})
	}
	s.records[at] = parsedRecord{id: t.ID, rec: rec}
	return rec, len(rec.Ratios) > 0
}

// parsedRecord is a complete trial's parsed AttrObjectives.
type parsedRecord struct {
	id  int
	rec objectivesRecord
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
