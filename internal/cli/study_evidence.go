package cli

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"optimize/storage"
	"optimize/strategies/workloads"
	"optimize/studies"
	"optimize/studies/report"
)

func newStudyValidate(s Streams, f *studyFlags) *cobra.Command {
	var (
		trial         int
		pareto        bool
		seeds, output string
		windows       string
		withRegimes   bool
		regimes       []string
		worlds        worldFlags
		maxRate       bool
		attainment    string
		tolerance     float64
	)
	cmd := &cobra.Command{
		Use:   "validate NAME",
		Short: "Re-run the best trial and the baseline on held-out seeds (and regimes, or in other worlds): paired Δ, 95% interval, verdict",
		Long: `Re-run a study's best trial (--trial N for another, --pareto for every
Pareto trial) and its baseline on held-out seeds, paired seed by seed. For
each objective: the in-study Δ, the held-out Δ (the mean of the per-seed
relative changes), its 95% Student-t interval, and on how many seeds the
candidate beats the baseline. Each candidate gets a verdict on the
primary objective (for 10 seeds; the output states it for the seeds given):
` + verdictHelp() + `
A study on a replayed trace is held out in time instead: it tuned on
windows of the trace's first half, and validate replays windows of its
second half, which the study never saw (--windows; by default all of
them), paired window by window.
--regimes also runs the template's regimes (other operating points of the
same workload; ` + "`--regime a,b`" + ` picks them).
--world (a list of latency models), --model, --hardware, --tp and
--latency-model validate in other worlds instead, at the study's operating
point and at each --regime given (a load-* regime at the capacity
measured in that world): the trial's strategy settings and the
baseline's stay as in the study, only the world settings given change;
one block per world and regime. In a
world the study was not tuned in (its template's, or a robust study's
--worlds) nothing was fitted, so its verdicts are graded as at a regime
(does not hold replaces overfit). Every simulation is stored as
it finishes: an interrupted validation continues where it stopped. Every
request is kept: ` + "`study show`" + ` includes the latest of each kind (plain,
--regimes, --pareto, --max-rate) and lists them all.
--max-rate asks instead how much traffic each carries: for the trial and
the baseline, on each held-out seed, the highest request rate at which the
run meets the SLO-attainment targets (--attainment; by default the
template's attainment constraints, else TTFT attainment ≥ 0.99 for critical
and ≥ 0.95 for standard and sheddable, for the classes the workload has).
It brackets the threshold by doubling or halving the workload's own rate,
then bisects until the gap is within --tolerance of the rate found (which
meets the targets: at most the threshold, within the tolerance of it);
each probe is a full simulation. It prints per seed both max rates, their
means and the paired change with its 95% Student-t interval.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			if pareto && cmd.Flags().Changed("trial") {
				return fmt.Errorf("--pareto and --trial are exclusive: give one")
			}
			if f.workers < 1 {
				return fmt.Errorf("--workers: must be ≥ 1, got %d", f.workers)
			}
			if err := f.limits.Bad(); err != nil {
				return err
			}
			if maxRate {
				return runMaxRate(cmd, s, f, args[0], trial, seeds, windows, attainment, tolerance, output)
			}
			for _, flag := range []string{"attainment", "tolerance"} {
				if cmd.Flags().Changed(flag) {
					return fmt.Errorf("--%s: only with --max-rate", flag)
				}
			}
			o := studies.ValidateOptions{Trial: trial, Pareto: pareto}
			ws, err := worlds.changes(cmd.Flags())
			if err != nil {
				return err
			}
			o.Worlds = ws
			if cmd.Flags().Changed("seeds") {
				list, err := parseSeeds(seeds)
				if err != nil {
					return fmt.Errorf("--seeds: %v", err)
				}
				if err := f.limits.Check(studies.LimitSeeds, "--seeds", int64(len(list))); err != nil {
					return err
				}
				o.Seeds = list
			}
			if cmd.Flags().Changed("windows") {
				list, err := parseSeeds(windows)
				if err != nil {
					return fmt.Errorf("--windows: %v", strings.ReplaceAll(err.Error(), "seed", "window"))
				}
				o.Windows = list
			}
			return f.withStudy(s, args[0], func(env *studies.Env, row *storage.Study) error {
				tpl, err := env.Registry.Get(row.Template)
				if err != nil {
					return studyError(err)
				}
				if cmd.Flags().Changed("regime") && withRegimes {
					return fmt.Errorf("--regimes and --regime are exclusive: --regimes runs the template's, --regime the ones named")
				}
				switch {
				case cmd.Flags().Changed("regime"):
					o.Regimes = regimes
				case withRegimes:
					o.Regimes = tpl.Regimes
				}
				ctx, stop := interruptible()
				defer stop()
				v, err := env.Validate(ctx, row.Name, o)
				if err != nil {
					return f.evidenceError(err, "validate", row.Name)
				}
				if output == "json" {
					return writeIndented(s.Out, v)
				}
				v.WriteText(s.Out, tpl)
				return nil
			})
		},
	}
	cmd.Flags().IntVar(&trial, "trial", -1, "the complete trial to validate (default: the best)")
	cmd.Flags().BoolVar(&pareto, "pareto", false, "validate every Pareto trial")
	cmd.Flags().StringVar(&seeds, "seeds", "100-109", "held-out seeds: a list (100,101) or a range (100-109); never the study's own")
	cmd.Flags().StringVar(&windows, "windows", "", "a trace study's held-out windows, by number: a list (11,12) or a range (11-20), all of the trace's second half (study show names them; default: every one)")
	cmd.Flags().BoolVar(&withRegimes, "regimes", false, "also run the template's regimes (template show lists them)")
	cmd.Flags().StringSliceVar(&regimes, "regime", nil, "run these regimes instead: "+strings.Join(workloads.RegimeNames(), ", "))
	worlds.bind(cmd.Flags())
	cmd.Flags().BoolVar(&maxRate, "max-rate", false, "find the highest request rate at which the trial and the baseline meet the attainment targets, per seed, by bisection")
	cmd.Flags().StringVar(&attainment, "attainment", "", "with --max-rate: targets CLASS=MIN (the class's TTFT attainment) or METRIC=MIN, comma-separated (default: the template's attainment constraints, else critical=0.99,standard=0.95,sheddable=0.95)")
	cmd.Flags().Float64Var(&tolerance, "tolerance", studies.DefaultMaxRateTolerance, "with --max-rate: the bisection's relative width (0.02: the rate found is within 2% below the threshold)")
	bindLimits(cmd.Flags(), &f.limits, studies.LimitSeeds)
	cmd.Flags().StringVar(&output, "output", "text", "text or json")
	cmd.Flags().IntVar(&f.workers, "workers", runtime.NumCPU(), "simulations run at once")
	return cmd
}

// runMaxRate is `study validate --max-rate`.
func runMaxRate(cmd *cobra.Command, s Streams, f *studyFlags, name string, trial int, seeds, windows, attainment string, tolerance float64, output string) error {
	for _, flag := range append([]string{"pareto", "regimes", "regime"}, worldFlagNames()...) {
		if cmd.Flags().Changed(flag) {
			return fmt.Errorf("--max-rate and --%s are exclusive: the search runs one trial and the baseline on held-out seeds or windows", flag)
		}
	}
	if !(tolerance > 0 && tolerance < 1) {
		return fmt.Errorf("--tolerance: %g is not a relative width in (0, 1) (e.g. 0.02 for 2%%)", tolerance)
	}
	o := studies.MaxRateOptions{Trial: trial, Tolerance: tolerance}
	if cmd.Flags().Changed("seeds") {
		list, err := parseSeeds(seeds)
		if err != nil {
			return fmt.Errorf("--seeds: %v", err)
		}
		if err := f.limits.Check(studies.LimitSeeds, "--seeds", int64(len(list))); err != nil {
			return err
		}
		o.Seeds = list
	}
	if cmd.Flags().Changed("windows") {
		list, err := parseSeeds(windows)
		if err != nil {
			return fmt.Errorf("--windows: %v", strings.ReplaceAll(err.Error(), "seed", "window"))
		}
		o.Windows = list
	}
	if cmd.Flags().Changed("attainment") {
		targets, err := studies.ParseAttainment(attainment)
		if err != nil {
			return err
		}
		o.Targets = targets
	}
	return f.withStudy(s, name, func(env *studies.Env, row *storage.Study) error {
		ctx, stop := interruptible()
		defer stop()
		m, err := env.MaxRate(ctx, row.Name, o)
		if err != nil {
			return f.evidenceError(err, "validate --max-rate", row.Name)
		}
		if output == "json" {
			return writeIndented(s.Out, m)
		}
		m.WriteText(s.Out)
		return nil
	})
}

func newStudyAblate(s Streams, f *studyFlags) *cobra.Command {
	var (
		trial  int
		output string
	)
	cmd := &cobra.Command{
		Use:   "ablate NAME",
		Short: "Which components earn the best trial's gain: each left out, and each alone, on the study's seeds",
		Long: `For the best trial (--trial N for another), group the settings in which it
differs from the baseline by component (routing, scheduler, priority,
chunking, admission, preemption, ...; optimize template settings lists each
setting's). For each component, run the trial with that component reverted
to the baseline's settings (leave-one-out) and the baseline with only that
component (add-one), on the study's seeds. A component's contribution is
the full Δ minus its leave-one-out Δ; the interaction is the full Δ minus
the sum of the add-one Δs. Runs are stored as they finish; study show
includes the result.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			if f.workers < 1 {
				return fmt.Errorf("--workers: must be ≥ 1, got %d", f.workers)
			}
			return f.withStudy(s, args[0], func(env *studies.Env, row *storage.Study) error {
				tpl, err := env.Registry.Get(row.Template)
				if err != nil {
					return studyError(err)
				}
				ctx, stop := interruptible()
				defer stop()
				a, err := env.Ablate(ctx, row.Name, trial)
				if err != nil {
					return f.evidenceError(err, "ablate", row.Name)
				}
				if output == "json" {
					return writeIndented(s.Out, a)
				}
				a.WriteText(s.Out, tpl)
				return nil
			})
		},
	}
	cmd.Flags().IntVar(&trial, "trial", -1, "the complete trial to ablate (default: the best)")
	cmd.Flags().StringVar(&output, "output", "text", "text or json")
	cmd.Flags().IntVar(&f.workers, "workers", runtime.NumCPU(), "simulations run at once")
	return cmd
}

// verdictHelp lists the verdicts and their rule for validate's help.
func verdictHelp() string {
	var b strings.Builder
	for _, r := range report.VerdictRules("the primary objective", 10) {
		fmt.Fprintf(&b, "  %s: %s.\n", r.Verdict, r.When)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// evidenceError is studyError with the right words for an interruption:
// the command to run again.
func (f *studyFlags) evidenceError(err error, command, name string) error {
	if strings.Contains(err.Error(), "context canceled") {
		return failed(fmt.Errorf("interrupted: run `%s study %s %s` again, with the same options, to continue (finished simulations are kept)",
			f.programs.optimize, command, name))
	}
	return studyError(err)
}
