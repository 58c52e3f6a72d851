package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"optimize/simcore/errtext"
	"optimize/storage"
	"optimize/strategies"
	"optimize/studies"
)

func newStudyEnqueue(s Streams, f *studyFlags) *cobra.Command {
	var params []string
	cmd := &cobra.Command{
		Use:   "enqueue NAME --param name=value …",
		Short: "Add an outside parameter vector to a study as its next trial (Optuna's enqueue_trial)",
		Long: `enqueue adds a parameter vector from outside — another optimizer's winner, a
hand-made candidate — to study NAME as a trial. The study runs it as it runs
any trial (its seeds, baseline, judgement and score), so show, validate,
ablate, report and export judge it.

Every parameter active at the vector must be given and no inactive one may be,
exactly as evaluate checks a vector; a float may be any value in its range
(it runs as given, off the sampler's grid too).

Nothing runs here. The vector waits in the study's queue (stored in the
database) and runs as the next trial any worker claims: a running
` + "`study create`/`study resume`" + ` or worker process picks it up, or
` + "`study resume NAME`" + ` runs it. An enqueued trial is one of the study's
total, as in Optuna (it takes the place of a proposal); when the study has no
trial left for it — finished, or the rest of its total running or enqueued —
the total grows by one, so that every enqueued vector runs: on a finished
study, ` + "`study resume NAME`" + ` runs exactly the enqueued vectors.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(params) == 0 {
				return errtext.Usage("--param: give the vector, one --param name=value per active parameter")
			}
			given, err := strategies.Pairs(params)
			if err != nil {
				return errtext.Usage("--param: %v", err)
			}
			return f.withStudy(s, args[0], func(env *studies.Env, row *storage.Study) error {
				if err := env.Migrate(); err != nil {
					return failed(err)
				}
				before := row.TrialsTotal
				q, err := env.Enqueue(row, given)
				if err != nil {
					return enqueueError(err)
				}
				fmt.Fprintln(s.Out, enqueuedText(row.Name, q, before, f.programs.optimize))
				return nil
			})
		},
	}
	cmd.Flags().StringArrayVar(&params, "param", nil, "template parameter name=value (repeatable; every active parameter, no inactive one)")
	return cmd
}

// enqueueError: a vector the template refuses is a usage error (exit 2)
// naming the parameter; the storage's are failures.
func enqueueError(err error) error {
	var u errtext.UsageError
	if errors.As(err, &u) {
		return errtext.Usage("--param: %v", u.Err)
	}
	return studyError(err)
}

// enqueuedText says where the vector waits and how it runs.
func enqueuedText(name string, q storage.Queued, before int, optimize string) string {
	total := fmt.Sprintf("the study's total stays %d trials", q.TrialsTotal)
	if q.TrialsTotal != before {
		total = fmt.Sprintf("the study's total grows %d → %d trials to make room", before, q.TrialsTotal)
	}
	return fmt.Sprintf("study %s: vector enqueued (%d waiting); %s; it runs as the next trial a worker claims (`%s study resume %s`)",
		name, q.Position, total, optimize, name)
}
