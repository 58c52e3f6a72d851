package studies

import (
	"fmt"

	"optimize/search"
	"optimize/simcore/errtext"
	"optimize/strategies"
	"optimize/studies/report"
)

// warmFrom is what the study records as its warm start (storage.Study.
// WarmFrom): the earlier study's name, or the Optuna journal's path
// marked as one (report.WarmJournal).
func (o CreateOptions) warmFrom() string {
	if o.FromJournal != nil {
		return report.WarmJournal + o.From
	}
	return o.From
}

// journalTrials reads o's Optuna journal over tpl's space (the study's,
// as its sampler searches it): nil without one.
func (o CreateOptions) journalTrials(tpl *strategies.Template) ([]report.JournalTrial, error) {
	if o.FromJournal == nil {
		return nil, nil
	}
	_, trials, err := report.ReadOptunaJournal(o.From, o.FromJournal, tpl)
	if err != nil {
		return nil, errtext.UsageError{Err: fmt.Errorf("--from: %v", err)}
	}
	return trials, nil
}

// warmJournal seeds smp with an Optuna journal's complete trials, as warm
// seeds it with an earlier study's: their parameters, scores and
// objectives as ratios to the journal's own baseline.
func warmJournal(smp *search.Sampler, from string, trials []report.JournalTrial) error {
	for _, t := range trials {
		if err := smp.Warm(from, t.Params, t.Evaluation); err != nil {
			return fmt.Errorf("trial %d: %w", t.Number, err)
		}
	}
	return nil
}
