package studies

import (
	"optimize/simcore/errtext"
	"optimize/storage"
	"optimize/strategies"
	"optimize/studies/report"
)

// Enqueue adds an outside parameter vector (optimize study enqueue, Optuna's
// enqueue_trial) to a study as its next trial: the next claim with room
// under the study's total — by any worker, or study resume — runs it with
// the study's seeds, baseline, judgement and score, as any trial, so every
// evidence command judges it. The vector is checked as evaluate checks
// one (strategies.Template.Vector: every active parameter given, no
// inactive one), against the template the study searches (with its
// --deployable and pinned settings). See storage.Store.Enqueue for when
// it counts towards the study's total. A vector refused is an
// errtext.UsageError naming the parameter.
func (e *Env) Enqueue(row *storage.Study, given []strategies.Given) (storage.Queued, error) {
	tpl, err := e.Registry.Get(row.Template)
	if err != nil {
		return storage.Queued{}, err
	}
	if tpl, _, err = report.StudyTemplate(tpl, e.Base, row.BaseFrom, row.Deployable); err != nil {
		return storage.Queued{}, err
	}
	values, err := tpl.Vector(given)
	if err != nil {
		return storage.Queued{}, errtext.UsageError{Err: err} // the caller names its field: --param, params
	}
	return e.Store.Enqueue(row, tpl.Space().Encode(values))
}
