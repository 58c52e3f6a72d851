package studies

import (
	"optimize/search"
	"optimize/simcore/metrics"
	"optimize/storage"
	"optimize/strategies"
	"optimize/studies/report"
)

// What the external tests (package studies_test) need of the package's
// insides.

// GoptunaName names the sampler's study of row.
var GoptunaName = goptunaName

// SamplerOptions are the sampler options a study runs with.
var SamplerOptions = samplerOptions

// ValidationJobs counts the simulations a validation of trials on seeds,
// at the study's workload and at regimes, needs.
func (e *Env) ValidationJobs(r *report.Report, seeds []int64, trials []int, regimes []string) (int, error) {
	p, err := e.validationPlan(r, validationRequest{Seeds: seeds, Trials: trials, Regimes: regimes})
	if err != nil {
		return 0, err
	}
	return len(p.jobs), nil
}

// FullScore evaluates stored parameters params of study row in every
// scenario, without pruning: the score the trial would have had.
func (e *Env) FullScore(row *storage.Study, params []float64) (float64, error) {
	ev, err := e.evaluator(row)
	if err != nil {
		return 0, err
	}
	values, err := ev.tpl.Space().Decode(params)
	if err != nil {
		return 0, err
	}
	t, err := e.evaluate(ev, values)
	if err != nil {
		return 0, err
	}
	return t.judged.Score(search.DefaultViolationWeight), nil
}

// CombineBound is the robust aggregate of evaluations all (the
// scenarios run) out of total, under aggregate, for template tpl.
func CombineBound(tpl *strategies.Template, baseline *metrics.Summary, aggregate string, all []search.Evaluation, total int) search.Evaluation {
	ev := &evaluator{tpl: tpl, baseline: baseline, aggregate: aggregate}
	return ev.combine(all, total)
}
