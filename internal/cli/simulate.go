package cli

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/spf13/cobra"

	"optimize/simcore/cluster"
	"optimize/simcore/metrics"
)

type simulateOptions struct {
	flags  simFlags
	wl     workloadFlags
	seed   int64
	seeds  []int64
	output string
}

func newSimulateCommand(s Streams) *cobra.Command {
	o := &simulateOptions{}
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Run the cluster simulator on a workload, once per seed",
		Long: `Run the embedded BLIS-like cluster simulator.

The workload is a built-in (--workload NAME), a BLIS v2 workload spec
(--workload-spec FILE) or a BLIS TraceV2 trace (--trace HEADER.yaml).
Policy flags use BLIS's names. Several seeds run in parallel; the JSON
output then holds every seed's summary and their mean.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd, s)
		},
	}
	fs := cmd.Flags()
	o.flags.bind(fs)
	o.wl.bind(fs)
	fs.Int64Var(&o.seed, "seed", 42, "seed of the workload and of the router's tie-breaking")
	fs.Int64SliceVar(&o.seeds, "seeds", nil, "several seeds, e.g. 42,43,44 (overrides --seed)")
	fs.StringVar(&o.output, "output", "text", "text or json")
	return cmd
}

func (o *simulateOptions) run(cmd *cobra.Command, s Streams) error {
	fs := cmd.Flags()
	if o.output != "text" && o.output != "json" {
		return fmt.Errorf("--output: unknown value %q (allowed: text, json)", o.output)
	}
	catalog, err := loadCatalog()
	if err != nil {
		return failed(err)
	}
	cfg, err := o.flags.apply(fs, cluster.Defaults(), catalog)
	if err != nil {
		return err
	}
	wl, err := o.wl.resolve(fs)
	if err != nil {
		return err
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
	runs, err := runSeeds(cfg, wl, seeds)
	if err != nil {
		return err
	}
	if o.output == "json" {
		return writeJSON(s, seeds, runs)
	}
	writeText(s.Out, cfg, wl.name, seeds, runs)
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
			runs[i], errs[i] = simulateOnce(base, wl, seed)
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

func simulateOnce(cfg cluster.Config, wl *workloadChoice, seed int64) (metrics.Summary, error) {
	cfg.Seed = seed
	src, err := wl.source(cfg)
	if err != nil {
		return metrics.Summary{}, err
	}
	eng, err := cluster.New(cfg, src)
	if err != nil {
		return metrics.Summary{}, err
	}
	return eng.Run(), nil
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
	enc := json.NewEncoder(s.Out)
	enc.SetIndent("", "  ")
	return failed(enc.Encode(v))
}
