package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"optimize/simcore/cluster"
	"optimize/simcore/metrics"
	"optimize/simcore/route"
	"optimize/simcore/workload"
	"optimize/strategies/workloads"
	"optimize/studies"
	"optimize/studies/report"
)

type simulateOptions struct {
	flags        simFlags
	blis         blisFlagSet
	wl           workloadFlags
	seed         int64
	seeds        []int64
	output       string
	requestsOut  string
	template     string
	params       []string
	templatesDir *string
	limits       studies.Limits
	// The P/D pools' own routing scorers, as given.
	prefillScorers, decodeScorers string
}

func newSimulateCommand(s Streams, templatesDir *string) *cobra.Command {
	o := &simulateOptions{templatesDir: templatesDir}
	cmd := &cobra.Command{
		Use:   "simulate [run]",
		Short: "Run the cluster simulator on a workload, once per seed",
		Long: `Run the embedded BLIS-like cluster simulator.

The workload is a built-in (--workload NAME), a BLIS v2 workload spec
(--workload-spec FILE) or a BLIS TraceV2 trace (--trace HEADER.yaml).
Policy flags use BLIS's names; --set KEY=VALUE sets any setting by its
template key (optimize template settings lists them, with their flags). A
setting given where it has no effect is an error. A workload spec's
slo_targets are the default per-class latency targets; --slo-ttft,
--slo-itl and --slo-e2e override them per class. Several seeds run in
parallel; the JSON output then holds every seed's summary and their mean.

A BLIS command line runs with "blis" replaced by "optimize simulate"
(BLIS f90a1e3a's with --era f90a1e3a added: its defaults differ):
"run", BLIS's verb, is the one argument accepted, and every flag of
"blis run" (BLIS 7fd7a88d and f90a1e3a) is accepted, ignored with a note
on stderr, or rejected with its reason (docs/fidelity.md's BLIS command lines
lists them); a flag given at its default is never an error.

A production deployment runs as it is configured: --vllm-args FILE reads
vLLM engine arguments and --epp-config FILE an llm-d Router
EndpointPickerConfig (study export --format llm-d writes both). They
apply in this order over the base (--template or --settings, else the
defaults): --vllm-args, --epp-config, then the flags, then --set. A flag
that sets a setting one of the files set is an error; --set overrides
an imported value. A plugin, parameter or argument the simulator does
not model is an error; an approximated value is a note on stderr.`,
		// BLIS's verb is an argument rather than a subcommand, so that
		// "simulate run" and "simulate" are one command with one flag set.
		Args:      cobra.MatchAll(cobra.MaximumNArgs(1), cobra.OnlyValidArgs),
		ValidArgs: []string{blisVerb},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd, s)
		},
	}
	fs := cmd.Flags()
	o.flags.bind(fs)
	o.wl.bind(fs)
	fs.Int64Var(&o.seed, "seed", 42, "seed of the workload and of the router's tie-breaking")
	fs.Var(newSeedList(&o.seeds, nil), "seeds", "several seeds, e.g. 42,43,44 or 42-44 (overrides --seed)")
	fs.StringVar(&o.output, "output", "text", "text or json")
	fs.StringVar(&o.requestsOut, "requests-out", "", "write every completed request to FILE as it completes, a row each (.csv, or .jsonl: a JSON object a line): seed, id, class, instance, arrival, scheduled, first token and finish times in µs, input and output tokens, preemptions (BLIS's --results-path); several seeds run one after another into the one file")
	fs.StringVar(&o.template, "template", "", "run one point of a strategy template (policy flags given too override it)")
	fs.StringArrayVar(&o.params, "param", nil, "template parameter name=value (repeatable; others take their defaults)")
	fs.StringVar(&o.prefillScorers, "prefill-routing-scorers", "", "prefill/decode disaggregation: the prefill pool's own weighted policy, name:weight,... as --routing-scorers (default: the pools share the routing policy)")
	fs.StringVar(&o.decodeScorers, "decode-routing-scorers", "", "prefill/decode disaggregation: the decode pool's own weighted policy, name:weight,... as --routing-scorers (default: the pools share the routing policy)")
	o.blis.bind(fs)
	bindLimits(fs, &o.limits, studies.LimitSeeds, studies.LimitRequests)
	return cmd
}

// templateConfig builds the configuration of one template point and, when
// no workload flag is given, selects the template's workload. Flags and
// --set given too override it (that is how a component of a strategy is
// reverted by hand), even where that leaves a parameter without effect.
func (o *simulateOptions) templateConfig(fs *pflag.FlagSet) (cluster.Config, error) {
	reg, err := loadRegistry(*o.templatesDir)
	if err != nil {
		return cluster.Config{}, err
	}
	tpl, err := reg.Get(o.template)
	if err != nil {
		return cluster.Config{}, fmt.Errorf("--template: %v", err)
	}
	values, err := tpl.ParseParams(o.params)
	if err != nil {
		return cluster.Config{}, fmt.Errorf("--param: %v", err)
	}
	base, err := baseConfig()
	if err != nil {
		return cluster.Config{}, failed(err)
	}
	if !changed(fs, "workload") && !changed(fs, "workload-spec") && !changed(fs, "trace") {
		o.wl.name = tpl.Workload
	}
	return tpl.Config(base, values)
}

func (o *simulateOptions) run(cmd *cobra.Command, s Streams) error {
	fs := cmd.Flags()
	if err := checkOutput(o.output); err != nil {
		return err
	}
	if o.requestsOut != "" {
		if err := checkRequestsOut(o.requestsOut); err != nil {
			return err
		}
	}
	if err := o.blis.check(fs, s.Err); err != nil {
		return err
	}
	base, err := baseConfig()
	if err != nil {
		return failed(err)
	}
	if o.template != "" && o.flags.file.path != "" {
		return fmt.Errorf("--settings: give a template (--template) or a settings file, not both")
	}
	if o.template != "" {
		if base, err = o.templateConfig(fs); err != nil {
			return err
		}
	} else if len(o.params) > 0 {
		return fmt.Errorf("--param: needs --template")
	}
	if o.wl.distribution, err = o.blis.distribution(fs); err != nil {
		return err
	}
	wl, err := o.wl.resolve(fs)
	if err != nil {
		return err
	}
	if err := o.checkLimits(wl); err != nil {
		return err
	}
	if wl.spec != nil {
		// The workload's latency targets fill the classes the template
		// left unset; the flags, applied next, override them.
		wl.spec.FillTargets(&base.SLOTTFT, &base.SLOITL, &base.SLOE2E)
	}
	cfg, err := o.flags.apply(fs, base, wl.applyConfig)
	if err != nil {
		return err
	}
	if err := o.poolScorers(fs, &cfg); err != nil {
		return err
	}
	for _, n := range o.flags.production.notes {
		fmt.Fprintln(s.Err, "note: "+n)
	}
	if n := autoscalerNote(&cfg); n != "" {
		fmt.Fprintln(s.Err, "note: "+n)
	}
	seeds := o.seeds
	if !changed(fs, "seeds") {
		seeds = []int64{o.seed}
		if !changed(fs, "seed") && wl.spec != nil && wl.spec.Seed != 0 {
			seeds = []int64{wl.spec.Seed}
		}
	}
	if len(seeds) == 0 {
		return fmt.Errorf("--seeds: give at least one seed")
	}
	if err := o.limits.Check(studies.LimitSeeds, "--seeds", int64(len(seeds))); err != nil {
		return err
	}
	var runs []metrics.Summary
	if o.requestsOut != "" {
		runs, err = runSeedsRecorded(cfg, wl, seeds, o.requestsOut)
	} else {
		runs, err = runSeeds(cfg, wl, seeds)
	}
	if err != nil {
		return o.flags.blame(err) // a check only the engine makes (slo-deadline needs a TTFT target)
	}
	if o.output == "json" {
		return writeJSON(s, seeds, runs)
	}
	writeText(s.Out, cfg, wl.name, seeds, runs)
	writeScaleText(s.Out, seeds, runs)
	return nil
}

// runSeeds simulates every seed on its own goroutine; results keep the
// order of seeds, so the output does not depend on scheduling.
func runSeeds(base cluster.Config, wl *workloadChoice, seeds []int64) ([]metrics.Summary, error) {
	runs := make([]metrics.Summary, len(seeds))
	errs := make([]error, len(seeds))
	var wg sync.WaitGroup
	for i, seed := range seeds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runs[i], errs[i] = simulateOnce(base, wl, seed, nil)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return runs, nil
}

// runSeedsRecorded is runSeeds writing every completed request to the
// file at path (--requests-out): the seeds run one after another, so the
// file holds each seed's requests in completion order, seeds in order.
func runSeedsRecorded(base cluster.Config, wl *workloadChoice, seeds []int64, path string) ([]metrics.Summary, error) {
	out, err := openRequestsOut(path)
	if err != nil {
		return nil, err
	}
	runs := make([]metrics.Summary, len(seeds))
	for i, seed := range seeds {
		if runs[i], err = simulateOnce(base, wl, seed, out.sink(seed)); err != nil {
			out.Close()
			return nil, err
		}
	}
	return runs, out.Close()
}

// simulateOnce runs cfg on the workload with one seed, handing each
// completed request's record to sink when it is not nil.
func simulateOnce(cfg cluster.Config, wl *workloadChoice, seed int64, sink func(*metrics.RequestRecord)) (metrics.Summary, error) {
	cfg.Seed = seed
	src, err := wl.source(cfg)
	if err != nil {
		return metrics.Summary{}, err
	}
	eng, err := cluster.New(cfg, src)
	if err != nil {
		return metrics.Summary{}, err
	}
	if sink != nil {
		eng.OnCompleted(sink)
	}
	sum := eng.Run()
	if replay, ok := src.(*workload.ReplaySource); ok {
		defer replay.Close()
		if err := replay.Err(); err != nil {
			return metrics.Summary{}, err
		}
		workloads.AddReplayCounts(&sum, replay.Counts())
	}
	return sum, nil
}

// multiSeed is the JSON shape for several seeds.
type multiSeed struct {
	Seeds   []int64           `json:"seeds"`
	PerSeed []metrics.Summary `json:"per_seed"`
	Mean    metrics.Summary   `json:"mean"`
}

func writeJSON(s Streams, seeds []int64, runs []metrics.Summary) error {
	var v any = runs[0]
	if len(runs) > 1 {
		v = multiSeed{Seeds: seeds, PerSeed: runs, Mean: metrics.Mean(runs)}
	}
	return writeIndented(s.Out, v)
}

// checkOutput accepts the --output values every command shares.
func checkOutput(output string) error {
	if output != "text" && output != "json" {
		return fmt.Errorf("--output: unknown value %q (allowed: text, json)", output)
	}
	return nil
}

// writeIndented writes v as indented JSON.
func writeIndented(w io.Writer, v any) error {
	return failed(report.WriteJSON(w, v))
}

// checkLimits refuses a run that would generate more requests than
// --max-requests: --num-requests, else the spec's num_requests.
func (o *simulateOptions) checkLimits(wl *workloadChoice) error {
	if err := o.limits.Bad(); err != nil {
		return err
	}
	if wl.numRequests > 0 {
		return o.limits.Check(studies.LimitRequests, "--num-requests", int64(wl.numRequests))
	}
	return o.limits.CheckSpec(wl.spec)
}

// poolScorers reads --prefill-routing-scorers and --decode-routing-scorers
// (BLIS f90a1e3a's): a pool's own weighted policy.
func (o *simulateOptions) poolScorers(fs *pflag.FlagSet, cfg *cluster.Config) error {
	for _, f := range []struct {
		name string
		raw  string
		dst  *[]route.ScorerWeight
	}{{"prefill-routing-scorers", o.prefillScorers, &cfg.PD.PrefillScorers}, {"decode-routing-scorers", o.decodeScorers, &cfg.PD.DecodeScorers}} {
		if !changed(fs, f.name) || strings.TrimSpace(f.raw) == "" {
			continue
		}
		if !cfg.PD.Enabled() {
			return fmt.Errorf("--%s: has no effect without prefill/decode pools (--prefill-instances, --decode-instances, --prefill-decode-instances)", f.name)
		}
		list, err := route.ParseScorers(f.raw)
		if err != nil {
			return fmt.Errorf("--%s: %v", f.name, err)
		}
		if err := (&route.Config{Policy: "weighted", Scorers: list}).Validate(); err != nil {
			return fmt.Errorf("--%s: %v", f.name, err)
		}
		*f.dst = list
	}
	return nil
}
