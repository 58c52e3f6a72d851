package report

import (
	"fmt"
	"math"
	"strings"
	"time"

	"optimize/simcore/cluster"
	"optimize/strategies"
)

// Validation is `study validate --output json`, and "validation" in `show`.
// Deltas are fractions (−0.69 is −69 %).
type Validation struct {
	// Seeds are the held-out seeds, or for a study on a trace the numbers
	// of its held-out windows (Windows).
	Seeds []int64 `json:"seeds"`
	// Windows says Seeds are windows of the trace's second half, which the
	// study never saw (workloads.TraceSplit); WindowSpans are their parts
	// of the trace, START-END since its first row, in Seeds order.
	Windows     bool                `json:"windows,omitempty"`
	WindowSpans []string            `json:"window_spans,omitempty"`
	Candidates  []CandidateEvidence `json:"candidates"`
	Regimes     []RegimeEvidence    `json:"regimes"`
	// Worlds are the comparisons in other worlds (`validate --world`),
	// each at the study's operating point; Candidates and Regimes are
	// then empty.
	Worlds []WorldEvidence `json:"worlds,omitempty"`
	// Missing counts simulations not run yet (an interrupted validation);
	// the figures then cover the seeds that are complete.
	Missing int `json:"missing,omitempty"`
	// Kind is which request this answers (plain, regimes, pareto).
	Kind EvidenceKind `json:"kind,omitempty"`
	// RanAt is when the request last ran, for stored evidence (`show`);
	// nil in the answer of the run itself.
	RanAt *time.Time `json:"ran_at,omitempty"`
	// Verdicts are the rule the candidates' verdicts follow, for these
	// seeds: every verdict and when it is given.
	Verdicts []VerdictRule `json:"verdicts"`
}

// RegimeEvidence is the same comparison at another operating point.
type RegimeEvidence struct {
	Name       string              `json:"name"`
	Doc        string              `json:"doc"`
	Candidates []CandidateEvidence `json:"candidates"`
}

// WorldEvidence is the same comparison in another world: the trial's
// strategy settings and the baseline's, with only the world settings
// Given changed.
type WorldEvidence struct {
	// Given are the world settings given, "latency.model=trained-physics".
	Given string `json:"given"`
	// Regime is the regime compared at in that world (validate --world
	// with --regime), "" for the study's operating point. At a regime the
	// candidates are graded as at one, whatever the world.
	Regime string `json:"regime,omitempty"`
	// World is the world the baseline ran in there, and Line its name.
	World cluster.World `json:"world"`
	Line  string        `json:"line"`
	// StudyWorld says the study was tuned in the world given (its own, or
	// one of a robust study's --worlds): its candidates are graded as a
	// plain held-out validation; in any other world as at a regime
	// (nothing was fitted there, so nothing overfit: a gain that fails
	// does not hold).
	StudyWorld bool                `json:"study_world,omitempty"`
	Candidates []CandidateEvidence `json:"candidates"`
}

// Title names a world's block: "In another world: meta-llama/llama-3.1-8b-instruct
// on H100, TP2, trained-physics latency model (latency.model=trained-physics; …)".
func (w WorldEvidence) Title() string {
	at := ""
	if w.Regime != "" {
		at = " at regime " + w.Regime
	}
	if w.StudyWorld {
		if w.Regime != "" {
			return fmt.Sprintf("In a world the study was tuned in%s: %s (%s; graded as at a regime)", at, w.Line, w.Given)
		}
		return fmt.Sprintf("In a world the study was tuned in: %s (%s)", w.Line, w.Given)
	}
	return fmt.Sprintf("In another world%s: %s (%s; the strategy's settings are the trial's and the baseline's, only the world changed; graded as at a regime)", at, w.Line, w.Given)
}

// CandidateEvidence compares one trial with the baseline, seed by seed.
type CandidateEvidence struct {
	Trial  int            `json:"trial"`
	Params map[string]any `json:"params"`
	// Overfit is Verdict == VerdictOverfit.
	Overfit bool    `json:"overfit"`
	Verdict Verdict `json:"verdict"`
	// Detail gives the figures behind the verdict: the primary objective's
	// held-out Δ and interval, on how many seeds the trial is better, the
	// in-study Δ, and any constraint that fails.
	Detail string `json:"detail"`
	// Failed names the constraint the held-out means miss, or "".
	Failed     string                       `json:"failed,omitempty"`
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
	// RanAt is when the request last ran, for stored evidence (`show`).
	RanAt *time.Time `json:"ran_at,omitempty"`
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

// Verdict grades a candidate's held-out result on the template's primary
// objective. These words are what `validate`, `show`, the HTML report and
// the dashboard (from the JSON) all print.
type Verdict string

// The verdicts; VerdictRules says when each is given.
const (
	VerdictHolds        Verdict = "holds"
	VerdictHoldsSmaller Verdict = "holds, smaller than in-study"
	VerdictOverfit      Verdict = "overfit"
	VerdictDoesNotHold  Verdict = "does not hold"
	VerdictNotRun       Verdict = "not run yet"
)

// Holds reports whether v is one of the verdicts of a gain that holds.
func (v Verdict) Holds() bool { return v == VerdictHolds || v == VerdictHoldsSmaller }

// HoldsShare is the share of the held-out seeds on which a candidate must
// beat the baseline for its gain to hold: 8 of 10.
const HoldsShare = 0.8

// SeedsToHold is how many of n seeds HoldsShare is: ⌈0.8·n⌉ (8 of 10,
// 16 of 20, 3 of 3).
func SeedsToHold(n int) int { return int(math.Ceil(HoldsShare*float64(n) - 1e-9)) }

// VerdictRule is one verdict and when it is given.
type VerdictRule struct {
	Verdict Verdict `json:"verdict"`
	When    string  `json:"when"`
}

// VerdictRules states the rule Grade follows, for n held-out seeds and
// the primary objective prim: every verdict and when it is given.
func VerdictRules(prim string, n int) []VerdictRule { return VerdictRulesIn(prim, n, "seed") }

// VerdictRulesIn is VerdictRules for n held-out units: "seed", or "window"
// of a replayed trace.
func VerdictRulesIn(prim string, n int, unit string) []VerdictRule {
	k := SeedsToHold(n)
	return []VerdictRule{
		{VerdictHolds, fmt.Sprintf("the 95 %% interval of the held-out Δ of %s lies on the better side of zero, the trial beats the baseline on ≥ %d of %d held-out %ss (%.0f %%), and every constraint holds on the held-out means", prim, k, n, unit, 100*HoldsShare)},
		{VerdictHoldsSmaller, "as holds, but the whole interval falls short of the in-study Δ (part of the study's gain was the luck of picking the best of many trials)"},
		{VerdictOverfit, fmt.Sprintf("a constraint fails on the held-out means, or the trial gained on %s in the study but the held-out interval includes zero", prim)},
		{VerdictDoesNotHold, fmt.Sprintf("any other result: the interval lies on the worse side of zero (or includes zero, for a trial that did not gain in the study), or the trial beats the baseline on fewer than %d of %d %ss; at a regime, where nothing was fitted, this replaces overfit", k, n, unit)},
		{VerdictNotRun, fmt.Sprintf("fewer than 2 held-out %ss have both runs stored (run study validate again to finish)", unit)},
	}
}

// Unit is what the validation holds out: "window" (of a replayed trace)
// or "seed".
func (v *Validation) Unit() string {
	if v.Windows {
		return "window"
	}
	return "seed"
}

// HeldOut names the held-out runs, "seeds 100–109" or "trace windows
// 11–20 (29m30s-58m30s)".
func (v *Validation) HeldOut() string {
	if !v.Windows {
		return "seeds " + SeedList(v.Seeds)
	}
	out := "trace windows " + SeedList(v.Seeds)
	if n := len(v.WindowSpans); n > 0 {
		first, _, _ := strings.Cut(v.WindowSpans[0], "-")
		_, last, _ := strings.Cut(v.WindowSpans[n-1], "-")
		out += fmt.Sprintf(" (%s-%s)", first, last)
	}
	return out
}

// Grade is the verdict on a candidate whose primary objective changed by
// the interval [lo, hi] on the held-out seeds and by inStudy in the study,
// all signed so that positive is better; it beat the baseline on better
// of seeds paired seeds; failed names a constraint its held-out means
// miss, or "". At a regime (another operating point, where nothing was
// fitted) there is no in-study Δ to fall short of and nothing to overfit.
func Grade(lo, hi, inStudy float64, better, seeds int, failed string, regime bool) Verdict {
	straddles := lo <= 0 && hi >= 0
	switch {
	case seeds < 2:
		return VerdictNotRun
	case !regime && (failed != "" || straddles && inStudy > 0):
		return VerdictOverfit
	case failed != "" || !(lo > 0) || better < SeedsToHold(seeds):
		return VerdictDoesNotHold
	case !regime && hi < inStudy:
		return VerdictHoldsSmaller
	}
	return VerdictHolds
}

// EvidenceRun is one stored evidence request, as `show` lists them.
type EvidenceRun struct {
	Kind    EvidenceKind `json:"kind"`
	RanAt   time.Time    `json:"ran_at"`
	Trials  []int        `json:"trials"`
	Seeds   []int64      `json:"seeds,omitempty"` // held-out seeds; an ablation runs on the study's
	Regimes []string     `json:"regimes,omitempty"`
	Worlds  []string     `json:"worlds,omitempty"` // the world settings of each other world
}

// VerdictText is the verdict with the constraint that failed, if any:
// "does not hold (tokens_per_sec ≥ 0.98 × baseline fails)".
func (c CandidateEvidence) VerdictText() string {
	if c.Failed != "" {
		return fmt.Sprintf("%s (%s fails)", c.Verdict, c.Failed)
	}
	return string(c.Verdict)
}

// RanText renders when evidence ran, "2025-06-01 12:00:05 UTC".
func RanText(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// LatestValidations are the latest validation of each kind (LoadEvidence),
// or the one validation a report was given.
func (r *Report) LatestValidations() []*Validation {
	if len(r.Validations) == 0 && r.Validation != nil {
		return []*Validation{r.Validation}
	}
	return r.Validations
}
