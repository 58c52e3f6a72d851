// Package cli holds the cobra commands of `optimize` and `worker`: a file
// per command group (study.go holds study's create, resume, list, show,
// delete and wait; study_evidence.go validate and ablate; workload_*.go the
// workload commands), with the flags they share beside them (simflags.go,
// blisflags.go, limits.go). Commands write to injected streams and return
// errors; Execute maps them to exit codes once (2 for usage errors, 1 for
// runtime failures).
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"optimize/simcore/errtext"
)

// Streams are where a command writes: results to Out, progress to Err.
type Streams struct {
	Out io.Writer
	Err io.Writer
	In  io.Reader // what a command reads as standard input; nil: os.Stdin
}

// runtimeError marks a failure that is not the user's input (exit code 1).
type runtimeError struct{ err error }

func (e runtimeError) Error() string { return e.err.Error() }
func (e runtimeError) Unwrap() error { return e.err }

// failed wraps err as a runtime failure.
func failed(err error) error {
	if err == nil {
		return nil
	}
	return runtimeError{err}
}

// Execute runs the optimize command line and returns the process exit code.
func Execute(args []string, s Streams) int {
	root := NewRootCommand(s)
	root.SetArgs(args)
	return exitCode("optimize", root.Execute(), s)
}

// stoppedError marks a worker stopped by SIGTERM or Ctrl-C once its trials
// in flight were recorded, before its studies had their totals (exit code
// ExitStopped).
type stoppedError struct{ err error }

func (e stoppedError) Error() string { return e.err.Error() }
func (e stoppedError) Unwrap() error { return e.err }

// ExitStopped is the exit code of a worker stopped by a signal with its
// trials in flight recorded and its study not yet done: nothing was lost,
// and a replacement worker continues the study (the Kubernetes Job's
// podFailurePolicy ignores this code, so a replacement pod is started
// without counting a failure).
const ExitStopped = 3

// exitCode reports err on one line and maps it to the exit code: 0 for
// none, 1 for runtime failures, 2 for usage errors, ExitStopped for a
// worker stopped by a signal.
func exitCode(prog string, err error, s Streams) int {
	if err == nil {
		return 0
	}
	fmt.Fprintf(s.Err, "%s: %s\n", prog, errtext.OneLine(err.Error()))
	var rt runtimeError
	var st stoppedError
	switch {
	case errors.As(err, &st):
		return ExitStopped
	case errors.As(err, &rt):
		return 1
	}
	return 2
}

// NewRootCommand builds the command tree (the composition root of the CLI).
func NewRootCommand(s Streams) *cobra.Command {
	root := &cobra.Command{
		Use:           "optimize",
		Short:         "Find jointly optimised routing, scheduling and KV-cache strategies for LLM inference clusters",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE:          showHelp,
	}
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		// Execute prefixes "optimize: "; name the subcommand only.
		return fmt.Errorf("%s: %v", strings.TrimPrefix(c.CommandPath(), root.Name()+" "), flagValueError(err))
	})
	templatesDir := root.PersistentFlags().String("templates-dir", "", "directory of user strategy templates (*.yaml), added to the built-ins")
	root.AddCommand(newSimulateCommand(s, templatesDir), newCalibrateCommand(s), newStudyCommand(s, templatesDir, invokedAs(os.Args[0])), newTemplateCommand(s, templatesDir),
		newServeCommand(s, templatesDir), newWorkloadCommand(s), newObserveCommand(s), newEvaluateCommand(s, templatesDir))
	return root
}

// showHelp is the RunE of a command group. Being runnable makes cobra check
// its Args (NoArgs), so that an unknown subcommand is a usage error instead
// of help printed with exit code 0.
func showHelp(cmd *cobra.Command, _ []string) error { return cmd.Help() }

// changed reports whether the user set flag name.
func changed(fs *pflag.FlagSet, name string) bool {
	f := fs.Lookup(name)
	return f != nil && f.Changed
}

// programs are the commands hints tell the user to type: this program as
// the user ran it (os.Args[0] as typed: "bin/optimize" from the README's
// build, "optimize" from PATH or in the container) and the worker beside
// it ("bin/worker", "worker").
type programs struct{ optimize, worker string }

func invokedAs(arg0 string) programs {
	if arg0 == "" {
		arg0 = "optimize"
	}
	worker := "worker"
	if strings.ContainsRune(arg0, filepath.Separator) {
		worker = filepath.Join(filepath.Dir(arg0), worker)
		if !strings.ContainsRune(worker, filepath.Separator) {
			worker = "." + string(filepath.Separator) + worker // "./optimize": "./worker", not a PATH lookup
		}
	}
	return programs{optimize: arg0, worker: worker}
}
