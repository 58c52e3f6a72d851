package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"optimize/simcore"
	"optimize/simcore/cluster"
	"optimize/simcore/workload"
	"optimize/strategies/datasets"
	"optimize/strategies/workloads"
)

// workloadFlags choose what the simulator replays.
type workloadFlags struct {
	name, specFile, trace, traceData string
	traceFormat                      string
	numRequests                      int
	// replay holds the replay controls' flags by control key
	// (workload.ReplayControls: each is declared there once).
	replay map[string]*string
	// distribution is BLIS's distribution workload when the BLIS flags
	// ask for it (blisFlagSet.distribution), else nil.
	distribution *workload.Spec
}

func (w *workloadFlags) bind(fs *pflag.FlagSet) {
	fs.StringVar(&w.name, "workload", "", "built-in workload, optionally at a regime: NAME or NAME@REGIME (default "+workloads.Default+")")
	fs.StringVar(&w.specFile, "workload-spec", "", "BLIS v2 workload spec YAML file")
	fs.StringVar(&w.trace, "trace", "", "trace file to replay: Mooncake JSONL, Azure or BurstGPT CSV (.gz read too), or a BLIS TraceV2 header YAML")
	fs.StringVar(&w.traceFormat, "trace-format", "", "format of --trace (default: recognised from the content): "+strings.Join(workload.TraceFormats, ", "))
	fs.StringVar(&w.traceData, "trace-data", "", "TraceV2 CSV (default: beside the header, same base name)")
	fs.IntVar(&w.numRequests, "num-requests", 0, "requests to simulate (overrides the workload's num_requests; caps a replayed trace)")
	w.replay = map[string]*string{}
	for _, c := range workload.ReplayControls() {
		if c.Flag != "" {
			w.replay[c.Key] = fs.String(c.Flag, "", c.Usage)
		}
	}
}

// replayFlags returns the replay controls given as flags, as flag name
// and control key.
func (w *workloadFlags) replayFlags(fs *pflag.FlagSet) [][2]string {
	var given [][2]string
	for _, c := range workload.ReplayControls() {
		if c.Flag != "" && changed(fs, c.Flag) {
			given = append(given, [2]string{c.Flag, c.Key})
		}
	}
	return given
}

// applyReplay sets the replay controls given as flags on t.
func (w *workloadFlags) applyReplay(fs *pflag.FlagSet, t *workloads.Trace) error {
	for _, g := range w.replayFlags(fs) {
		if err := t.Replay.SetControl(g[1], *w.replay[g[1]]); err != nil {
			return fmt.Errorf("--%s: %v", g[0], err)
		}
	}
	if w.numRequests > 0 {
		t.Replay.MaxRequests = w.numRequests
	}
	return nil
}

// workloadChoice is a resolved workload that can build a fresh source for
// every seed.
type workloadChoice struct {
	name        string
	spec        *workload.Spec      // nil for a trace
	regime      *workloads.Workload // a built-in workload and its regime, or nil
	trace       *workloads.Trace    // a replayed trace (not TraceV2), or nil
	traceHeader string
	traceData   string
	traceV2     workload.ReplayOptions // the replay controls of a TraceV2 trace
	numRequests int
}

func (w *workloadFlags) resolve(fs *pflag.FlagSet) (*workloadChoice, error) {
	given := 0
	for _, n := range []string{"workload", "workload-spec", "trace"} {
		if changed(fs, n) {
			given++
		}
	}
	if given > 1 {
		return nil, fmt.Errorf("--workload, --workload-spec and --trace are exclusive: give one")
	}
	if changed(fs, "trace-data") && !changed(fs, "trace") {
		return nil, fmt.Errorf("--trace-data: needs --trace")
	}
	if w.numRequests < 0 {
		return nil, fmt.Errorf("--num-requests: must be ≥ 0 (0 = the workload's own), got %d", w.numRequests)
	}
	c := &workloadChoice{numRequests: w.numRequests}
	var err error
	switch {
	case w.trace != "":
		c.name = w.trace
		format, ferr := traceFormat(w.trace, w.traceFormat)
		if ferr != nil {
			return nil, fmt.Errorf("--trace: %v", ferr)
		}
		if format == workload.FormatTraceV2 {
			c.traceHeader, c.traceData = w.trace, w.traceData
			for _, g := range w.replayFlags(fs) {
				if err := c.traceV2.SetControl(g[1], *w.replay[g[1]]); err != nil {
					return nil, fmt.Errorf("--%s: %v", g[0], err)
				}
			}
			c.traceV2.MaxRequests = w.numRequests
			if err := checkTraceV2(c); err != nil {
				return nil, err
			}
			return c, nil
		}
		if changed(fs, "trace-data") {
			return nil, fmt.Errorf("--trace-data: only a TraceV2 trace has a separate CSV (%s is %s)", w.trace, format)
		}
		c.trace = workloads.OpenTrace(w.trace, format)
		err = w.applyReplay(fs, c.trace)
	case w.specFile != "":
		c.name = w.specFile
		c.spec, err = workload.LoadSpecFile(w.specFile)
	case w.distribution != nil:
		c.name, c.spec = distributionName, w.distribution
	default:
		c.name = w.name
		if c.name == "" {
			c.name = workloads.Default
		}
		c.regime, err = workloads.Resolve(c.name)
		if err != nil {
			return nil, fmt.Errorf("--workload: %v", err)
		}
		c.spec, c.trace = c.regime.Spec, c.regime.Trace
		if c.trace != nil {
			t := *c.trace // the flags apply to this run's copy
			c.trace = &t
			err = w.applyReplay(fs, c.trace)
		}
	}
	if err == nil && c.trace == nil {
		if given := w.replayFlags(fs); len(given) > 0 {
			return nil, fmt.Errorf("--%s: needs a trace (--trace FILE or a trace dataset: %s)", given[0][0], strings.Join(datasets.Names(), ", "))
		}
	}
	if changed(fs, "trace-format") && !changed(fs, "trace") {
		return nil, fmt.Errorf("--trace-format: needs --trace")
	}
	return c, err
}

// traceFormat is the format of a trace file: forced, or recognised.
func traceFormat(path, forced string) (string, error) {
	r, err := workload.OpenTrace(path, forced)
	if err != nil {
		return "", err
	}
	defer r.Close()
	return r.Format(), nil
}

// applyConfig moves cfg to the workload's regime (instances, GPU KV).
func (c *workloadChoice) applyConfig(cfg *cluster.Config) {
	if c.regime != nil {
		c.regime.ApplyConfig(cfg)
	}
}

// source builds the request stream of cfg's seed; requests arriving after
// cfg's horizon are never generated.
func (c *workloadChoice) source(cfg cluster.Config) (simcore.Source, error) {
	if c.trace != nil {
		return c.trace.Source(cfg)
	}
	if c.spec == nil {
		t, err := workload.LoadTrace(c.traceHeader, c.traceData, int(cfg.BlockSize))
		if err != nil {
			return nil, err
		}
		return t, t.Control(c.traceV2)
	}
	return workload.NewGenerator(c.spec, workload.Options{
		Seed:        cfg.Seed,
		BlockSize:   int(cfg.BlockSize),
		NumRequests: c.numRequests,
		Horizon:     cfg.Horizon,
	})
}

// checkTraceV2 loads a TraceV2 trace once with its replay controls, so
// that a control it refuses, or a window holding none of its requests,
// fails before anything runs, naming the flag.
func checkTraceV2(c *workloadChoice) error {
	t, err := workload.LoadTrace(c.traceHeader, c.traceData, 16)
	if err != nil {
		return fmt.Errorf("--trace: %v", err)
	}
	return t.Control(c.traceV2)
}
