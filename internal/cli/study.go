package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"optimize/search"
	"optimize/simcore/cluster"
	"optimize/simcore/errtext"
	"optimize/storage"
	"optimize/strategies/production"
	"optimize/strategies/settings"
	"optimize/studies"
	"optimize/studies/report"
)

// studyFlags are shared by the study subcommands.
type studyFlags struct {
	storage      string
	templatesDir *string
	workers      int
	lease        time.Duration
	limits       studies.Limits // what one command may ask for (--max-trials, …)
	programs     programs       // for hints: the commands to type next
}

func newStudyCommand(s Streams, templatesDir *string, p programs) *cobra.Command {
	f := &studyFlags{templatesDir: templatesDir, programs: p}
	cmd := &cobra.Command{
		Use:   "study",
		Short: "Create, run, resume and report studies (TPE searches over a strategy template)",
		Args:  cobra.NoArgs,
		RunE:  showHelp,
	}
	cmd.PersistentFlags().StringVar(&f.storage, "storage", "", "sqlite:///PATH, a file path or postgres://user:pass@host:port/db (default $"+storage.EnvVar+" or ./"+storage.DefaultPath+")")
	cmd.AddCommand(newStudyCreate(s, f), newStudyResume(s, f), newStudyEnqueue(s, f), newStudyList(s, f), newStudyShow(s, f),
		newStudyDelete(s, f), newStudyExport(s, f), newStudyWait(s, f), newStudyValidate(s, f), newStudyAblate(s, f), newStudyPlot(s, f), newStudyReport(s, f))
	return cmd
}

// bindRunFlags adds the flags of commands that run trials; create alone
// accepts --workers 0.
func (f *studyFlags) bindRunFlags(cmd *cobra.Command, createOnly bool) {
	help := "trials run at once in this process"
	if createOnly {
		help += " (0 = create only, let workers run it)"
	}
	cmd.Flags().IntVar(&f.workers, "workers", runtime.NumCPU(), help)
	bindLease(cmd, f)
}

func bindLease(cmd *cobra.Command, f *studyFlags) {
	cmd.Flags().DurationVar(&f.lease, "lease", studies.DefaultLease, "a running trial whose worker sent no heartbeat for this long is rescued")
}

// checkRunFlags rejects a worker count below least (named flag) and a
// lease that is not positive.
func (f *studyFlags) checkRunFlags(flag string, least int) error {
	if f.workers < least {
		return fmt.Errorf("--%s: must be ≥ %d, got %d", flag, least, f.workers)
	}
	if f.lease <= 0 {
		return fmt.Errorf("--lease: must be > 0, got %v", f.lease)
	}
	return nil
}

// env opens the storage and builds the study environment; only create
// may make a new database.
func (f *studyFlags) env(s Streams) (*studies.Env, error) { return f.open(s, true) }

// withStudy opens the storage of study name and hands both to fn.
func (f *studyFlags) withStudy(s Streams, name string, fn func(*studies.Env, *storage.Study) error) error {
	env, err := f.existing(s, name)
	if err != nil {
		return studyError(err)
	}
	defer env.Store.Close()
	row, err := env.Store.StudyByName(name)
	if err != nil {
		return studyError(err)
	}
	return fn(env, row)
}

// existing is env for commands that read or continue study name ("" for
// all studies).
func (f *studyFlags) existing(s Streams, name string) (*studies.Env, error) {
	env, err := f.open(s, false)
	if errors.Is(err, storage.ErrNoDatabase) && name != "" {
		return nil, fmt.Errorf("study %q not found: %w (create a study first)", name, err)
	}
	return env, err
}

func (f *studyFlags) open(s Streams, create bool) (*studies.Env, error) {
	reg, err := loadRegistry(*f.templatesDir)
	if err != nil {
		return nil, err
	}
	base, err := baseConfig()
	if err != nil {
		return nil, failed(err)
	}
	open := storage.Open
	if !create {
		open = storage.OpenExisting
	}
	st, err := open(storage.Resolve(f.storage))
	if errors.Is(err, storage.ErrNoDatabase) || errors.Is(err, storage.ErrBadDSN) {
		return nil, err // usage errors (exit 2)
	}
	if err != nil {
		return nil, failed(err)
	}
	st.ReportOutages(s.Err)
	return &studies.Env{Store: st, Registry: reg, Base: base, Progress: s.Err,
		Workers: f.workers, Lease: f.lease, Worker: studies.WorkerID(), Limits: f.limits}, nil
}

// baseConfig is the simulator's defaults with the default model profile.
func baseConfig() (cluster.Config, error) { return settings.Standard() }

// interruptible returns a context cancelled by the first Ctrl-C or
// SIGTERM: trials in flight finish and are recorded. A second Ctrl-C
// kills the process (the study resumes from the database).
func interruptible() (context.Context, func()) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}

// studyError maps study errors to exit codes.
func studyError(err error) error {
	var u errtext.UsageError
	if err == nil || errors.As(err, &u) || errors.Is(err, storage.ErrStudyNotFound) || errors.Is(err, storage.ErrNoDatabase) ||
		errors.Is(err, storage.ErrBadDSN) {
		return err
	}
	return failed(err)
}

// runError is studyError for a command that runs study name's trials: a
// first Ctrl-C or SIGTERM (the context cancelled; trials in flight were
// recorded) says how to continue.
func (f *studyFlags) runError(name string, err error) error {
	if errors.Is(err, context.Canceled) {
		return failed(fmt.Errorf("interrupted (trials in flight were recorded): resume with `%s study resume %s`", f.programs.optimize, name))
	}
	return studyError(err)
}

// createFailed answers a study this create made whose run stopped on err:
// a study with no finished trial and none running is removed, so that a
// create that fails leaves nothing behind (its error says why, and the
// same command runs again under the same name); one with results keeps
// them and the failure recorded with it (study show says why).
func (f *studyFlags) createFailed(env *studies.Env, row *storage.Study, err error) error {
	finished, running, cerr := env.Store.Counts(row.ID)
	if cerr != nil || finished > 0 || running > 0 {
		return f.runError(row.Name, err)
	}
	if derr := env.Delete(row); derr != nil {
		return studyError(errors.Join(err, derr))
	}
	return studyError(fmt.Errorf("%w; study %s removed: no trial finished before the error, so the create leaves nothing behind", err, row.Name))
}

func newStudyCreate(s Streams, f *studyFlags) *cobra.Command {
	o := studies.CreateOptions{}
	var run studyRunFlags
	var ifAbsent bool
	cmd := &cobra.Command{
		Use:   "create TEMPLATE",
		Short: "Create a study, run its baseline, then run its trials",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			o.Template = args[0]
			if err := run.resolve(cmd.Flags(), &o); err != nil {
				return err
			}
			// Check the request before touching the database.
			reg, err := loadRegistry(*f.templatesDir)
			if err != nil {
				return err
			}
			if err := f.limits.Bad(); err != nil {
				return err
			}
			if err := studies.Validate(reg, &o, f.limits); err != nil {
				return studyError(err)
			}
			if err := readFromJournal(&o); err != nil {
				return err
			}
			if err := f.checkRunFlags("workers", 0); err != nil {
				return err
			}
			env, err := f.env(s)
			if err != nil {
				return err
			}
			defer env.Store.Close()
			var row *storage.Study
			if ifAbsent {
				if row, err = env.Existing(o); err != nil {
					return studyError(err)
				}
			}
			ctx, stop := interruptible()
			defer stop()
			made, created := "created with its baseline", row == nil
			if row != nil {
				complete, _, err := env.Store.Counts(row.ID)
				if err != nil {
					return failed(err)
				}
				made = fmt.Sprintf("exists already (%d/%d trials complete)", complete, row.TrialsTotal)
				if f.workers > 0 {
					// Said before the report (or the run to the total) so
					// that it is not mistaken for a new study.
					next := "running it on to its total"
					if int(complete) >= row.TrialsTotal {
						next = "its report follows"
					}
					fmt.Fprintf(s.Err, "study %s %s with these settings (--if-absent): %s\n", row.Name, made, next)
				}
			} else if row, err = env.Create(ctx, o); err != nil {
				return studyError(err)
			}
			if f.workers == 0 {
				fmt.Fprintf(s.Out, "study %s %s; start workers: %s --storage %s --study %s\n",
					row.Name, made, f.programs.worker, env.Store.Label, row.Name)
				return nil
			}
			if err := env.Run(ctx, row); err != nil {
				if created && !errors.Is(err, context.Canceled) {
					return f.createFailed(env, row, err)
				}
				return f.runError(row.Name, err)
			}
			return showStudy(s, env, row.Name, "text")
		},
	}
	cmd.Flags().StringVar(&o.Name, "name", "", "study name (default: TEMPLATE-<timestamp>)")
	def := studies.Defaults()
	cmd.Flags().IntVar(&o.Trials, "trials", def.Trials, "total complete trials of the study (resume continues to it)")
	cmd.Flags().StringVar(&o.Sampler, "sampler", "", samplerHelp())
	cmd.Flags().StringVar(&o.From, "from", "", "warm start: the sampler learns from the complete trials of this earlier study of the same template, or of the Optuna study in this JournalStorage log (a path with a '/' or an existing file; docs/examples/optuna_evaluate.py --journal writes one)")
	cmd.Flags().Int64Var(&o.SamplerSeed, "sampler-seed", def.SamplerSeed, "seed of the sampler (the study is repeatable with one worker)")
	cmd.Flags().BoolVar(&ifAbsent, "if-absent", false, "a study of this name made with these same settings is used as it is (a retried Kubernetes Job succeeds); made otherwise, it is still an error")
	cmd.Flags().BoolVar(&o.Robust.Prune, "prune", false, "robust study: stop a trial between scenarios once those it ran prove it cannot beat the best trial (its score only grows with each scenario); the scenario that binds most often runs first. A pruned trial counts towards --trials but is never the best nor on the Pareto front (default: the template's robust_prune)")
	run.bind(cmd.Flags(), &o)
	bindLimits(cmd.Flags(), &f.limits, studies.LimitTrials, studies.LimitSeeds, studies.LimitRequests)
	f.bindRunFlags(cmd, true)
	return cmd
}

// readBaselineConfigs reads study create's --baseline-epp and
// --baseline-vllm-args files, in the order they apply.
func readBaselineConfigs(paths map[string]string) ([]storage.ConfigFile, error) {
	var out []storage.ConfigFile
	for _, kind := range production.Kinds {
		path := paths[kind]
		if path == "" {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("--baseline-%s: %v", strings.TrimSuffix(kind, "-config"), err)
		}
		out = append(out, storage.ConfigFile{Kind: kind, Path: path, Data: string(data)})
	}
	return out, nil
}

func newStudyResume(s Streams, f *studyFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "resume NAME",
		Short: "Continue a study to its trial total, rescuing trials of dead workers",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.checkRunFlags("workers", 1); err != nil {
				return err
			}
			return f.withStudy(s, args[0], func(env *studies.Env, row *storage.Study) error {
				ctx, stop := interruptible()
				defer stop()
				if err := env.Migrate(); err != nil {
					return err
				}
				complete, _, err := env.Store.Counts(row.ID)
				if err != nil {
					return failed(err)
				}
				if int(complete) >= row.TrialsTotal {
					fmt.Fprintf(s.Err, "study %s is complete (%d/%d trials): nothing to resume; its report follows\n", row.Name, complete, row.TrialsTotal)
				} else if err := env.Run(ctx, row); err != nil {
					return f.runError(row.Name, err)
				}
				return showStudy(s, env, row.Name, "text")
			})
		},
	}
	f.bindRunFlags(cmd, false)
	return cmd
}

func newStudyList(s Streams, f *studyFlags) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the studies in the storage: state, trials, best Δ of the primary objective",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			env, err := f.existing(s, "")
			if errors.Is(err, storage.ErrNoDatabase) {
				if output == "json" {
					return writeIndented(s.Out, []report.StudySummary{})
				}
				fmt.Fprintln(s.Out, "no studies yet")
				return nil
			}
			if err != nil {
				return err
			}
			defer env.Store.Close()
			list, err := report.Summaries(env.Store, env.Registry)
			if err != nil {
				return failed(fmt.Errorf("storage %s: %v (create a study first)", env.Store.Label, err))
			}
			if output == "json" {
				return writeIndented(s.Out, list)
			}
			if len(list) > 0 {
				fmt.Fprintf(s.Out, "%-36s %-22s %9s %7s  %-20s  %-42s  %s\n", "STUDY", "TEMPLATE", "COMPLETE", "RUNNING", "CREATED", "WORLD", "BEST")
			}
			for _, r := range list {
				trials := fmt.Sprintf("%d/%d", r.TrialsComplete, r.TrialsTotal)
				world := "?" // stored before worlds were recorded, of a template not loaded
				if r.World != nil {
					world = r.World.Short
				}
				if r.BestWorld != nil { // the template tunes the world: its answer's
					world = r.BestWorld.Short + " (best)"
				}
				best := ""
				if r.BestDelta != nil {
					best = fmt.Sprintf("%s %s (trial %d)", r.Primary, report.Percent(*r.BestDelta), *r.BestTrial)
					if r.BestViolates {
						best += ", misses a constraint"
					}
				}
				fmt.Fprintf(s.Out, "%-36s %-22s %9s %7d  %-20s  %-42s  %s\n", r.Name, r.Template, trials, r.Running, r.Created.Format(time.RFC3339), world, best)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&output, "output", "text", "text or json")
	return cmd
}

func newStudyShow(s Streams, f *studyFlags) *cobra.Command {
	var output string
	var trial int
	var explain, settings bool
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Baseline against the best trial, every objective and SLO class, the Pareto front",
		Args:  cobra.RangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			switch {
			case len(args) == 0 && !explain:
				return fmt.Errorf("show: give the study's NAME (or --explain alone for the glossary)")
			case len(args) == 0 && output == "json":
				return writeIndented(s.Out, report.Glossary())
			case len(args) == 0:
				report.WriteGlossary(s.Out)
				return nil
			case explain && output == "json":
				return fmt.Errorf("--explain: with --output json give no NAME (the glossary is a document of its own)")
			}
			if settings && (explain || output == "json") {
				return fmt.Errorf("--settings: writes YAML alone; drop --explain and --output json (the JSON has best.settings, and a trial's its settings)")
			}
			return f.withStudy(s, args[0], func(env *studies.Env, row *storage.Study) error {
				var err error
				if settings {
					return showSettings(s, env, row.Name, trial, cmd.Flags().Changed("trial"))
				}
				if cmd.Flags().Changed("trial") {
					err = showTrial(s, env, row.Name, trial, output)
				} else {
					err = showStudy(s, env, row.Name, output)
				}
				if err == nil && explain {
					fmt.Fprintln(s.Out)
					report.WriteGlossary(s.Out)
				}
				return err
			})
		},
	}
	cmd.Flags().StringVar(&output, "output", "text", "text or json")
	cmd.Flags().IntVar(&trial, "trial", 0, "show one complete trial: parameters, objectives, every seed beside the baseline's")
	cmd.Flags().BoolVar(&settings, "settings", false, "the settings the trial (--trial N, else the best) ran with, as key: value YAML that simulate --settings runs again")
	cmd.Flags().BoolVar(&explain, "explain", false, "after the report, the glossary: what slo_gap, attainment, goodput, hypervolume, score, importance, Δ and seed range mean, and every metric's unit (alone, without NAME: only the glossary)")
	return cmd
}

func showTrial(s Streams, env *studies.Env, name string, n int, output string) error {
	r, err := report.Load(env.Store, env.Registry, name)
	if err != nil {
		return studyError(err)
	}
	d, ok := r.Trial(n)
	if !ok {
		return fmt.Errorf("--trial: study %s has no complete trial %d", name, n)
	}
	if err := r.DetailErr(); err != nil {
		return failed(err)
	}
	if output == "json" {
		return writeIndented(s.Out, d)
	}
	fmt.Fprintf(s.Out, "study %s · trial %d · score %.4f\nworld %s\n", name, n, d.Score, d.World.Line)
	for _, p := range r.Template.Params {
		v := d.Params[p.Name]
		if v == nil {
			v = "inactive"
		}
		fmt.Fprintf(s.Out, "  %-28s = %v\n", p.Name, v)
	}
	fmt.Fprintln(s.Out)
	r.WriteTrialTable(s.Out, n)
	return nil
}

// showSettings writes the settings file of trial n, or of the best trial
// when no --trial is given.
func showSettings(s Streams, env *studies.Env, name string, n int, given bool) error {
	r, err := report.Load(env.Store, env.Registry, name)
	if err != nil {
		return studyError(err)
	}
	var buf bytes.Buffer
	if err := writeTrialSettings(&buf, r, n, given); err != nil {
		return err
	}
	_, err = s.Out.Write(buf.Bytes())
	return failed(err)
}

// writeTrialSettings writes trial n's settings file, or the best trial's
// when n is not given.
func writeTrialSettings(w io.Writer, r *report.Report, n int, given bool) error {
	if !given {
		best, ok := r.BestTrial()
		if !ok {
			return fmt.Errorf("--settings: study %s has no complete trial yet", r.Study.Name)
		}
		n = best
	}
	return studyError(r.WriteTrialSettings(w, n))
}

func showStudy(s Streams, env *studies.Env, name, output string) error {
	r, err := report.Load(env.Store, env.Registry, name)
	if err != nil {
		return studyError(err)
	}
	if err := env.LoadEvidence(r); err != nil {
		return studyError(err)
	}
	var buf bytes.Buffer
	if output == "json" {
		_ = writeIndented(&buf, r.JSON())
	} else {
		r.WriteTable(&buf)
	}
	if err := r.DetailErr(); err != nil {
		return failed(err)
	}
	_, err = s.Out.Write(buf.Bytes())
	return failed(err)
}

func newStudyDelete(s Streams, f *studyFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a study and all its trials",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withStudy(s, args[0], func(env *studies.Env, row *storage.Study) error {
				if err := env.Delete(row); err != nil {
					return failed(err)
				}
				fmt.Fprintf(s.Out, "deleted study %s\n", row.Name)
				return nil
			})
		},
	}
}

func newStudyWait(s Streams, f *studyFlags) *cobra.Command {
	var poll time.Duration
	cmd := &cobra.Command{
		Use:   "wait NAME",
		Short: "Block until a study run by workers has its total of complete trials",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if poll <= 0 {
				return fmt.Errorf("--poll: must be > 0, got %v", poll)
			}
			return f.withStudy(s, args[0], func(env *studies.Env, row *storage.Study) error {
				ctx, stop := interruptible()
				defer stop()
				for {
					complete, _, err := env.Store.Counts(row.ID)
					if err != nil {
						return failed(err)
					}
					if int(complete) >= row.TrialsTotal {
						return showStudy(s, env, row.Name, "text")
					}
					select {
					case <-ctx.Done():
						return failed(fmt.Errorf("interrupted with %d/%d trials complete", complete, row.TrialsTotal))
					case <-time.After(poll):
					}
				}
			})
		},
	}
	cmd.Flags().DurationVar(&poll, "poll", time.Second, "how often to check")
	return cmd
}

// samplerHelp is --sampler's help: each method from search.Methods with
// what it does.
func samplerHelp() string {
	var b strings.Builder
	for i, m := range search.Methods {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: %s", m.Method, m.Doc)
	}
	fmt.Fprintf(&b, ". Default: the template's sampler if it names one, else %s", search.DefaultMethod)
	return b.String()
}
