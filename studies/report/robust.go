package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"optimize/search"
	"optimize/simcore/metrics"
	"optimize/strategies"
)

// RobustJSON is a robust study's scenarios (regimes × worlds) and the
// best trial in each: its change to the baseline measured in the same
// scenario, per objective, and which scenario binds — the one whose ratio
// is the worst on the primary objective, which the default (worst)
// aggregate scores.
type RobustJSON struct {
	Regimes   []string `json:"regimes"`
	Worlds    []string `json:"worlds"`
	Aggregate string   `json:"aggregate"`
	// SimulationsPerTrial is scenarios × seeds.
	SimulationsPerTrial int `json:"simulations_per_trial"`
	// Prune says whether trials stop early (--prune); Pruned counts those
	// that did, and Simulations is every finished trial's runs.
	Prune       bool             `json:"prune,omitempty"`
	Pruned      int              `json:"pruned"`
	Simulations int64            `json:"simulations"`
	Trial       int              `json:"trial"`
	Scenarios   []ScenarioResult `json:"scenarios"`
	// Binding is the scenario of the worst primary ratio; BindingBy the
	// scenario of each objective's worst ratio.
	Binding   string            `json:"binding"`
	BindingBy map[string]string `json:"binding_by"`
}

// ScenarioResult is a trial in one scenario against that scenario's
// baseline.
type ScenarioResult struct {
	Scenario string `json:"scenario"`
	// Deltas is each objective's relative change to the scenario's
	// baseline (−0.5 = 50 % lower); Ratios the same as a ratio, smaller
	// is better (search.Normalize).
	Deltas map[string]Num `json:"deltas"`
	Ratios map[string]Num `json:"ratios"`
	// Violation is the trial's total constraint shortfall in the scenario
	// (0: every constraint met there); Missed names the first missed.
	Violation Num    `json:"violation"`
	Missed    string `json:"missed,omitempty"`
}

// robustOf returns the study's robust spec, and whether it is robust.
func (r *Report) robustOf() (strategies.Robust, bool) {
	rb := r.Study.Robust
	if rb == nil {
		return strategies.Robust{}, false
	}
	return strategies.Robust{Regimes: rb.Regimes, Worlds: rb.Worlds, Aggregate: rb.Aggregate}, true
}

// Robust is the per-scenario table of trial c in a robust study; nil for
// another study or a trial whose scenario runs are not stored.
func (r *Report) Robust(c *Result) (*RobustJSON, error) {
	rb, ok := r.robustOf()
	if !ok || c.stored == nil {
		return nil, nil
	}
	runs, err := c.stored.store.ScenarioMetrics(c.stored.id)
	if err != nil {
		return nil, err
	}
	byScenario := map[string][]metrics.Summary{}
	for _, run := range runs {
		byScenario[run.Scenario] = append(byScenario[run.Scenario], run.Metrics)
	}
	scs := rb.Scenarios()
	out := &RobustJSON{Regimes: rb.Regimes, Worlds: append([]string{}, rb.Worlds...), Aggregate: rb.Aggregate,
		SimulationsPerTrial: len(scs) * len(r.Seeds), Trial: c.Number, BindingBy: map[string]string{},
		Prune: r.Study.Robust.Prune, Pruned: len(r.Pruned)}
	if out.Simulations, err = c.stored.store.Simulations(r.Study.ID); err != nil {
		return nil, err
	}
	worst := make([]float64, len(r.Template.Objectives))
	for i, sc := range scs {
		base, stored := &r.Baseline, ""
		if i > 0 {
			b := r.Study.Robust.Baseline(sc.Key())
			if b == nil {
				return nil, fmt.Errorf("study %s: no baseline in scenario %s", r.Study.Name, sc.Key())
			}
			base, stored = &b.Mean, sc.Key()
		}
		if len(byScenario[stored]) != len(r.Seeds) {
			return nil, fmt.Errorf("trial %d: %d runs in scenario %s for %d seeds", c.Number, len(byScenario[stored]), sc.Key(), len(r.Seeds))
		}
		mean := metrics.Mean(byScenario[stored])
		judged, err := r.Template.Judge(base, &mean)
		if err != nil {
			return nil, err
		}
		res := ScenarioResult{Scenario: sc.Key(), Deltas: map[string]Num{}, Ratios: map[string]Num{}, Violation: Num(judged.Violation())}
		for k, o := range r.Template.Objectives {
			b, _ := strategies.Metric(base, o.Metric)
			res.Deltas[o.Name] = Num(Delta(judged.Objectives[k], b))
			res.Ratios[o.Name] = Num(judged.Ratios[k])
			if i == 0 || judged.Ratios[k] > worst[k] {
				worst[k], out.BindingBy[o.Name] = judged.Ratios[k], sc.Key()
			}
		}
		if m := judged.Missed(); m >= 0 {
			res.Missed = r.Template.Constraints[m].Words()
		}
		out.Scenarios = append(out.Scenarios, res)
	}
	out.Binding = out.BindingBy[r.Template.Objectives[r.Template.Primary].Name]
	return out, nil
}

// writeRobust prints the best trial's per-scenario table of a robust
// study; nothing for another study.
func (r *Report) writeRobust(w io.Writer, c *Result) {
	rj, err := r.Robust(c)
	if err != nil {
		fmt.Fprintf(w, "per-scenario results: %v\n", err)
		return
	}
	if rj == nil {
		return
	}
	fmt.Fprintf(w, "\nrobust study: %d scenarios × %d seeds per trial; the score is the %s ratio to the baseline of the same scenario, and every constraint must hold in every scenario\n",
		len(rj.Scenarios), len(r.Seeds), rj.Aggregate)
	fmt.Fprintf(w, "trial %d per scenario (Δ to that scenario's baseline; the table above is scenario %s):\n", rj.Trial, rj.Scenarios[0].Scenario)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"scenario"}
	for _, o := range r.Template.Objectives {
		head = append(head, o.Name)
	}
	fmt.Fprintf(tw, "%s\tconstraints\t\n", strings.Join(head, "\t"))
	for _, s := range rj.Scenarios {
		cells := []string{s.Scenario}
		for _, o := range r.Template.Objectives {
			cells = append(cells, Percent(float64(s.Deltas[o.Name])))
		}
		met := "met"
		if !search.Feasible(float64(s.Violation)) {
			met = "misses " + s.Missed
		}
		fmt.Fprintf(tw, "%s\t%s\t\n", strings.Join(cells, "\t"), met)
	}
	tw.Flush()
	prim := r.Template.Objectives[r.Template.Primary].Name
	fmt.Fprintf(w, "binds: %s (the worst %s)\n", rj.Binding, prim)
	if line := rj.PruneText(len(r.Complete)); line != "" {
		fmt.Fprintln(w, line)
	}
}

// PruneText says what pruning saved in a study of complete trials, or ""
// when the study does not prune.
func (rj *RobustJSON) PruneText(complete int) string {
	if !rj.Prune {
		return ""
	}
	full := int64(complete+rj.Pruned) * int64(rj.SimulationsPerTrial)
	return fmt.Sprintf("pruned (--prune): %d of %d trials stopped once the scenarios they ran proved they could not beat the best; %d simulations run, %d without pruning",
		rj.Pruned, complete+rj.Pruned, rj.Simulations, full)
}
