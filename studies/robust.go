package studies

import (
	"fmt"
	"math"
	"strings"

	"optimize/search"
	"optimize/simcore/metrics"
	"optimize/storage"
	"optimize/strategies"
	"optimize/strategies/settings"
	"optimize/strategies/workloads"
)

// A robust study (strategies.Robust) runs every trial in each of its
// scenarios — regimes × worlds — on every seed: trials × regimes × worlds
// × seeds simulations. Each scenario has its own baseline, run once at
// create; a trial is judged in each against that scenario's baseline,
// and its stored evaluation is the aggregate:
//
//   - each objective's ratio to the baseline (smaller is better) is the
//     worst scenario's (the largest ratio) or, with --aggregate mean, the
//     mean of the scenarios' ratios;
//   - each constraint's shortfall is the largest over the scenarios, so a
//     constraint missed in one scenario makes the trial infeasible;
//   - the stored objectives are the reference scenario's baseline values
//     times the aggregate ratios (divided, for a maximised objective), so
//     that every ratio a report takes to the study's baseline is the
//     aggregate. (A reference baseline of 0 cannot carry a ratio: such an
//     objective reads as the baseline's.)
//
// The sampler, storage and resume see one trial; its runs in the other
// scenarios are stored beside its per-seed runs, keyed by scenario. With
// Prune a trial may stop before its last scenario (see pruner).

// robustStudy returns the strategies.Robust a study row records, and
// whether it is robust.
func robustStudy(row *storage.Study) (strategies.Robust, bool) {
	if row.Robust == nil {
		return strategies.Robust{}, false
	}
	return strategies.Robust{Regimes: row.Robust.Regimes, Worlds: row.Robust.Worlds, Aggregate: row.Robust.Aggregate, Prune: row.Robust.Prune}, true
}

// robustWorlds are the worlds a robust study was tuned over, as the
// worlds validate runs in when none is asked for: a study tuned in
// trained-physics alone is validated there, not in its template's world.
// None for a study tuned in its template's world only.
func robustWorlds(row *storage.Study) []WorldChange {
	rb, _ := robustStudy(row)
	var out []WorldChange
	for _, w := range rb.Worlds {
		out = append(out, WorldChange{{Key: settings.LatencyModelKey, Value: w, Flag: "--worlds"}})
	}
	return out
}

// robustEvaluators makes ev the evaluator of row's reference scenario and
// gives it one for each other scenario, with their baselines once
// measured.
func robustEvaluators(row *storage.Study, ev *evaluator, wl *workloads.Workload) {
	rb, ok := robustStudy(row)
	if !ok {
		return
	}
	scs := rb.Scenarios()
	ev.aggregate = rb.Aggregate
	for i, sc := range scs {
		sev := ev
		if i > 0 {
			sev = &evaluator{tpl: ev.tpl, base: ev.base, seeds: ev.seeds, deployable: ev.deployable}
			ev.others = append(ev.others, sev)
			if b := row.Robust.Baseline(sc.Key()); b != nil {
				sev.baseline = &b.Mean
			}
		}
		sev.scenario, sev.wl = sc, sc.Workload(wl).OnSeeds(row.Seeds)
	}
}

// scenarioBaselines runs the baseline in each of a robust study's other
// scenarios, into row.Robust.
func (e *Env) scenarioBaselines(ev *evaluator, row *storage.Study) error {
	row.Robust.Baselines = nil
	for _, sev := range ev.others {
		studyCfg, err := sev.config(sev.tpl.Defaults())
		if err != nil {
			return fmt.Errorf("scenario %s: %v", sev.scenario.Key(), err)
		}
		cfg, err := baselineConfig(e.Registry, studyCfg, sev.base, row.BaselineFrom)
		if err != nil {
			return fmt.Errorf("scenario %s: %v", sev.scenario.Key(), err)
		}
		mean, perSeed, err := sev.run(cfg)
		if err != nil {
			return fmt.Errorf("baseline in scenario %s: %v", sev.scenario.Key(), err)
		}
		row.Robust.Baselines = append(row.Robust.Baselines, storage.ScenarioBaseline{Scenario: sev.scenario.Key(), Mean: mean, PerSeed: perSeed})
		sev.baseline = &row.Robust.Baselines[len(row.Robust.Baselines)-1].Mean
	}
	return nil
}

// trialRuns is what evaluating a trial gives: its reference scenario's
// mean and per-seed runs, its runs in the other scenarios, its aggregate
// judgement and each objective's range over the seeds.
type trialRuns struct {
	mean      metrics.Summary
	perSeed   []metrics.Summary
	scenarios []storage.ScenarioRuns
	judged    search.Evaluation
	ranges    [][2]float64
	// pruned: stopped before its last scenario (judged and ranges are
	// then bounds over the scenarios it ran, mean and perSeed empty
	// unless the reference was among them).
	pruned bool
}

// evaluateScenarios runs values in every scenario of ev's robust study
// (ev, the reference, and ev.others) and aggregates the judgements into
// t. With a pruner the scenarios run in its order and stop as soon as
// those run prove the trial cannot beat the study's best (t.pruned).
func (ev *evaluator) evaluateScenarios(values []search.Value) (trialRuns, error) {
	var t trialRuns
	scs := append([]*evaluator{ev}, ev.others...)
	judged := make([]*search.Evaluation, len(scs))
	runs := make([][]metrics.Summary, len(scs))
	means := make([]metrics.Summary, len(scs))
	order := ev.pruner.order(len(scs))
	for n, i := range order {
		sev := scs[i]
		cfg, err := sev.runConfig(values)
		if err != nil {
			return t, fmt.Errorf("scenario %s: %v", sev.scenario.Key(), err)
		}
		if means[i], runs[i], err = sev.run(cfg); err != nil {
			return t, fmt.Errorf("scenario %s: %v", sev.scenario.Key(), err)
		}
		j, err := sev.judge(&means[i])
		if err != nil {
			return t, err
		}
		judged[i] = &j
		if n+1 < len(order) {
			if t.pruned, err = ev.pruner.beaten(ev.bound(judged)); err != nil {
				return t, err
			}
			if t.pruned {
				break
			}
		}
	}
	ev.pruner.record(judged)
	var ran []search.Evaluation
	var ranRuns [][]metrics.Summary
	var baselines []*metrics.Summary
	for i, sev := range scs {
		if judged[i] == nil {
			continue
		}
		ran, ranRuns, baselines = append(ran, *judged[i]), append(ranRuns, runs[i]), append(baselines, sev.baseline)
		if i == 0 {
			t.mean, t.perSeed = means[0], runs[0]
		} else {
			t.scenarios = append(t.scenarios, storage.ScenarioRuns{Scenario: sev.scenario.Key(), PerSeed: runs[i]})
		}
	}
	t.judged = ev.combine(ran, len(scs))
	// Each seed's aggregate, judged as the means are (against each
	// scenario's mean baseline), gives the objectives' ranges.
	t.ranges = make([][2]float64, len(ev.tpl.Objectives))
	for k := range t.ranges {
		t.ranges[k] = [2]float64{math.Inf(1), math.Inf(-1)}
	}
	for i := range ev.seeds {
		seedAll := make([]search.Evaluation, len(ranRuns))
		for s := range ranRuns {
			var err error
			if seedAll[s], err = ev.tpl.Judge(baselines[s], &ranRuns[s][i]); err != nil {
				return t, err
			}
		}
		for k, v := range ev.combine(seedAll, len(scs)).Objectives {
			t.ranges[k] = [2]float64{min(t.ranges[k][0], v), max(t.ranges[k][1], v)}
		}
	}
	return t, nil
}

// bound is the aggregate judgement of the scenarios run so far (judged,
// nil where not run) as a bound on the whole trial's.
func (ev *evaluator) bound(judged []*search.Evaluation) search.Evaluation {
	var ran []search.Evaluation
	for _, j := range judged {
		if j != nil {
			ran = append(ran, *j)
		}
	}
	return ev.combine(ran, len(judged))
}

// combine aggregates a trial's judgements in the scenarios it ran (all,
// in the study's scenario order) out of total scenarios (see the top of
// this file). When some did not run, each objective's aggregate is the
// best it can still be: the worst of those run, or their sum over total
// (every ratio being ≥ 0); each constraint's shortfall is the largest so
// far. Adding a scenario can only raise either, so the score of a partial
// combination is a lower bound on the whole one's.
func (ev *evaluator) combine(all []search.Evaluation, total int) search.Evaluation {
	n := len(ev.tpl.Objectives)
	out := search.Evaluation{Objectives: make([]float64, n), Ratios: make([]float64, n), Primary: ev.tpl.Primary,
		Violations: make([]float64, len(ev.tpl.Constraints))}
	for k, o := range ev.tpl.Objectives {
		ratios := make([]float64, len(all))
		for s := range all {
			ratios[s] = all[s].Ratios[k]
		}
		r := aggregateRatios(ratios, ev.aggregate, total)
		b, _ := strategies.Metric(ev.baseline, o.Metric)
		out.Ratios[k] = r
		out.Objectives[k] = b * r
		if !o.Minimize {
			out.Objectives[k] = b / r
		}
	}
	for c := range out.Violations {
		for s := range all {
			v := all[s].Violations[c]
			if math.IsNaN(v) || math.IsNaN(out.Violations[c]) {
				out.Violations[c] = math.NaN()
				continue
			}
			out.Violations[c] = max(out.Violations[c], v)
		}
	}
	return out
}

// aggregateRatios is the worst (largest) of ratios, or their mean over
// total scenarios (len(ratios) of them run).
func aggregateRatios(ratios []float64, aggregate string, total int) float64 {
	if aggregate == strategies.AggregateMean {
		sum := 0.0
		for _, r := range ratios {
			sum += r
		}
		return sum / float64(total)
	}
	worst := math.Inf(-1)
	for _, r := range ratios {
		worst = max(worst, r)
	}
	return worst
}

// scenarioKeys lists a robust study's scenario keys, the reference first;
// nil for another study.
func scenarioKeys(row *storage.Study) []string {
	rb, ok := robustStudy(row)
	if !ok {
		return nil
	}
	var keys []string
	for _, sc := range rb.Scenarios() {
		keys = append(keys, sc.Key())
	}
	return keys
}

// robustCost says what a robust study costs, for create's progress line.
func robustCost(row *storage.Study, trials int) string {
	keys := scenarioKeys(row)
	if keys == nil {
		return ""
	}
	bound := ""
	if row.Robust.Prune {
		bound = "at most "
	}
	line := fmt.Sprintf("robust over %d scenarios (%s, %s ratio): %d trials × %d scenarios × %d seeds = %s%d simulations",
		len(keys), strings.Join(keys, ", "), row.Robust.Aggregate, trials, len(keys), len(row.Seeds), bound, trials*len(keys)*len(row.Seeds))
	if row.Robust.Prune {
		line += " (--prune stops a trial once it cannot beat the best)"
	}
	return line
}

// robustRecord is the record of r a study row keeps; nil when r is not
// active.
func robustRecord(r strategies.Robust) *storage.Robust {
	if !r.Active() {
		return nil
	}
	return &storage.Robust{Regimes: r.Regimes, Worlds: r.Worlds, Aggregate: r.Aggregate, Prune: r.Prune}
}

// robustText names a robust study's scenarios and aggregate, "none" for
// another study, so that create --if-absent can compare them.
func robustText(r *storage.Robust) string {
	if r == nil {
		return "none"
	}
	return fmt.Sprintf("regimes %v worlds %v aggregate %s prune %v", r.Regimes, r.Worlds, r.Aggregate, r.Prune)
}
