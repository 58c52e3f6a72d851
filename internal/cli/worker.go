package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"optimize/storage"
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
expires. $OPTIMIZE_STORAGE stands in for --storage.

A PostgreSQL server that goes away (a restart, a failover) is waited for:
the worker retries for up to $` + storage.RetryWindowVar + ` (default ` + storage.DefaultRetryWindow.String() + `),
keeping a finished trial's result until it is written, then goes on; the
server's refusals (authentication, no such database or table) end it at
once.

SIGTERM or Ctrl-C stops taking trials; the trials in flight finish and are
recorded. Exit codes: 0 the study (without --study, every study) has its
total; 1 a failure; 2 a usage error; 3 stopped by a signal before that
total, nothing lost (start a worker again to continue).`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.storage == "" && os.Getenv(storage.EnvVar) == "" {
				return fmt.Errorf("--storage: required (or $%s): sqlite:///PATH, a file path or postgres://user:pass@host:5432/db", storage.EnvVar)
			}
			if err := f.checkRunFlags("concurrency", 1); err != nil {
				return err
			}
			// Signals are caught from here on, before the connection
			// (retried for up to $OPTIMIZE_CONNECT_TIMEOUT): as PID 1 of a
			// container, a process without a handler ignores SIGTERM.
			ctx, stop := interruptible()
			defer stop()
			env, err := f.existing(s, study)
			if err != nil {
				return studyError(err)
			}
			defer env.Store.Close()
			if study != "" {
				row, err := env.Store.StudyByName(study)
				if err != nil {
					return studyError(err)
				}
				return stopped(env, row, env.Run(ctx, row))
			}
			return stopped(env, nil, runUnfinished(ctx, env))
		},
	}
	cmd.SetOut(s.Out)
	cmd.SetErr(s.Err)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagValueError(err) })
	fl := cmd.Flags()
	fl.StringVar(&f.storage, "storage", "", "database of the studies (required unless $"+storage.EnvVar+" is set)")
	fl.StringVar(&study, "study", "", "work on this study only (default: every unfinished study)")
	fl.IntVar(&f.workers, "concurrency", 1, "trials run at once by this worker")
	bindLease(cmd, f)
	fl.StringVar(&templatesDir, "templates-dir", "", "directory of user strategy templates the studies use")
	return cmd
}

// stopped maps a worker's end by signal (err is context.Canceled; its
// trials in flight were recorded) to ExitStopped, or to success when the
// study (row; nil: every study) has its total all the same.
func stopped(env *studies.Env, row *storage.Study, err error) error {
	if !errors.Is(err, context.Canceled) {
		return studyError(err)
	}
	if row == nil {
		return stoppedError{errors.New("stopped by a signal (trials in flight were recorded); unfinished studies remain: start a worker to continue")}
	}
	complete, _, cerr := env.Store.Counts(row.ID)
	if cerr != nil {
		return failed(cerr)
	}
	if int(complete) >= row.TrialsTotal {
		return nil
	}
	return stoppedError{fmt.Errorf("stopped by a signal with %d/%d trials of study %s complete (trials in flight were recorded): start a worker to continue",
		complete, row.TrialsTotal, row.Name)}
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
