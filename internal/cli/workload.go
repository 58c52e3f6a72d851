package cli

import (
	"fmt"

	"github.com/spf13/pflag"

	"optimize/simcore"
	"optimize/simcore/cluster"
	"optimize/simcore/workload"
	"optimize/strategies"
)

// workloadFlags choose what the simulator replays.
type workloadFlags struct {
	name, specFile, trace, traceData string
	numRequests                      int
}

func (w *workloadFlags) bind(fs *pflag.FlagSet) {
	fs.StringVar(&w.name, "workload", "", "built-in workload, optionally at a regime: NAME or NAME@REGIME (default "+strategies.DefaultWorkload+")")
	fs.StringVar(&w.specFile, "workload-spec", "", "BLIS v2 workload spec YAML file")
	fs.StringVar(&w.trace, "trace", "", "BLIS TraceV2 header YAML file to replay")
	fs.StringVar(&w.traceData, "trace-data", "", "TraceV2 CSV (default: beside the header, same base name)")
	fs.IntVar(&w.numRequests, "num-requests", 0, "requests to simulate (overrides the workload's num_requests)")
}

// workloadChoice is a resolved workload that can build a fresh source for
// every seed.
type workloadChoice struct {
	name        string
	spec        *workload.Spec       // nil for a trace
	regime      *strategies.Workload // a built-in workload and its regime, or nil
	traceHeader string
	traceData   string
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
		c.name, c.traceHeader, c.traceData = w.trace, w.trace, w.traceData
	case w.specFile != "":
		c.name = w.specFile
		c.spec, err = workload.LoadSpecFile(w.specFile)
	default:
		c.name = w.name
		if c.name == "" {
			c.name = strategies.DefaultWorkload
		}
		c.regime, err = strategies.ResolveWorkload(c.name)
		if err != nil {
			return nil, fmt.Errorf("--workload: %v", err)
		}
		c.spec = c.regime.Spec
	}
	return c, err
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
	if c.spec == nil {
		return workload.LoadTrace(c.traceHeader, c.traceData, int(cfg.BlockSize))
	}
	return workload.NewGenerator(c.spec, workload.Options{
		Seed:        cfg.Seed,
		BlockSize:   int(cfg.BlockSize),
		NumRequests: c.numRequests,
		Horizon:     cfg.Horizon,
	})
}
