package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"optimize/studies"
)

// ExecuteWorker runs the worker command line and returns the exit code.
func ExecuteWorker(args []string, s Streams) int {
	cmd := newWorkerCommand(s)
	cmd.SetArgs(args)
	return exitCode("worker", cmd.Execute(), s)
}

func newWorkerCommand(s Streams) *cobra.Command {
	var templatesDir, study string
	f := &studyFlags{templatesDir: &templatesDir}
	cmd := &cobra.Command{
		Use:   "worker --storage DSN [--study NAME] [--concurrency N]",
		Short: "Run trials of studies in shared storage until they reach their totals",
		Long: `A worker takes trials one at a time through the database, renews their
leases while it runs them, and exits when the study (or, without --study,
every unfinished study) has its total of complete trials. Start as many as
you like, on as many machines as reach the database; a worker that dies
loses its trials in flight, which another worker re-runs once their lease
expires.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.storage == "" {
				return fmt.Errorf("--storage: required (sqlite:///PATH, a file path or postgres://user:pass@host:5432/db)")
			}
			if err := f.checkRunFlags("concurrency", 1); err != nil {
				return err
			}
			env, err := f.existing(s, study)
			if err != nil {
				return studyError(err)
			}
			defer env.Store.Close()
			ctx, stop := interruptible()
			defer stop()
			if study != "" {
				row, err := env.Store.StudyByName(study)
				if err != nil {
					return studyError(err)
				}
				return studyError(env.Run(ctx, row))
			}
			return studyError(runUnfinished(ctx, env))
		},
	}
	cmd.SetOut(s.Out)
	cmd.SetErr(s.Err)
	fl := cmd.Flags()
	fl.StringVar(&f.storage, "storage", "", "database of the studies (required)")
	fl.StringVar(&study, "study", "", "work on this study only (default: every unfinished study)")
	fl.IntVar(&f.workers, "concurrency", 1, "trials run at once by this worker")
	bindLease(cmd, f)
	fl.StringVar(&templatesDir, "templates-dir", "", "directory of user strategy templates the studies use")
	return cmd
}

// runUnfinished works on unfinished studies, oldest first, until none is left.
func runUnfinished(ctx context.Context, env *studies.Env) error {
	for ctx.Err() == nil {
		rows, err := env.Store.Studies()
		if err != nil {
			return err
		}
		worked := false
		for i := range rows {
			complete, _, err := env.Store.Counts(rows[i].ID)
			if err != nil {
				return err
			}
			if int(complete) >= rows[i].TrialsTotal {
				continue
			}
			worked = true
			fmt.Fprintf(env.Progress, "joining study %s (%d/%d complete)\n", rows[i].Name, complete, rows[i].TrialsTotal)
			if err := env.Run(ctx, &rows[i]); err != nil {
				return err
			}
		}
		if !worked {
			return nil
		}
	}
	return ctx.Err()
}
