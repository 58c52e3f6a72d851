package report

import (
	"fmt"

	"optimize/strategies"
)

// Validation is `study validate --output json`, and "validation" in `show`.
// Deltas are fractions (−0.69 is −69 %).
type Validation struct {
	Seeds      []int64             `json:"seeds"`
	Candidates []CandidateEvidence `json:"candidates"`
	Regimes    []RegimeEvidence    `json:"regimes"`
	// Missing counts simulations not run yet (an interrupted validation);
	// the figures then cover the seeds that are complete.
	Missing int `json:"missing,omitempty"`
}

// RegimeEvidence is the same comparison at another operating point.
type RegimeEvidence struct {
	Name       string              `json:"name"`
	Doc        string              `json:"doc"`
	Candidates []CandidateEvidence `json:"candidates"`
}

// CandidateEvidence compares one trial with the baseline, seed by seed.
type CandidateEvidence struct {
	Trial      int                          `json:"trial"`
	Params     map[string]any               `json:"params"`
	Overfit    bool                         `json:"overfit"`
	Verdict    string                       `json:"verdict"`
	Objectives map[string]ObjectiveEvidence `json:"objectives"`
}

// ObjectiveEvidence is one objective's change against the baseline: in the
// study (means over the study's seeds) and on the held-out seeds (mean of
// the per-seed changes, with its paired Student-t 95 % interval).
type ObjectiveEvidence struct {
	InStudyDelta  Num    `json:"in_study_delta"`
	HeldOutDelta  Num    `json:"held_out_delta"`
	CI95          [2]Num `json:"ci95"`
	BetterOnSeeds int    `json:"better_on_seeds"`
	Seeds         int    `json:"seeds"`
}

// Ablation is `study ablate --output json`, and "ablation" in `show`: which
// of the strategy's components earn its gain, on the study's seeds. Each
// component (the settings table's grouping) is reverted alone to the
// baseline's settings (leave-one-out) and applied alone to the baseline
// (add-one). Deltas are fractions against the baseline.
type Ablation struct {
	Trial       int                 `json:"trial"`
	Components  []ComponentEvidence `json:"components"`
	Full        map[string]Num      `json:"full"`
	Interaction map[string]Num      `json:"interaction"`
	Missing     int                 `json:"missing,omitempty"`
	Seeds       []int64             `json:"seeds"`
}

// ComponentEvidence is one component's part in the gain.
type ComponentEvidence struct {
	Name string `json:"name"`
	// Settings are the baseline's values that leave-one-out restores
	// (those with an effect once restored): `simulate --template T --param
	// … --set KEY=VALUE` for each reproduces the leave-one-out run.
	Settings     map[string]string `json:"settings"`
	LeaveOneOut  map[string]Num    `json:"leave_one_out"`
	AddOne       map[string]Num    `json:"add_one"`
	Contribution map[string]Num    `json:"contribution"`
}

// ConstraintWords renders a constraint, e.g. "tokens_per_sec ≥ 0.98 × baseline".
func ConstraintWords(c strategies.Constraint) string { return c.Words() }

// Interval renders the held-out change and its interval, "−68.0% [−70.1%, −65.9%]".
func (o ObjectiveEvidence) Interval() string {
	return fmt.Sprintf("%s [%s, %s]", Percent(float64(o.HeldOutDelta)), Percent(float64(o.CI95[0])), Percent(float64(o.CI95[1])))
}
