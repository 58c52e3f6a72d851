package cli

import (
	"bytes"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"optimize/calibration"
	"optimize/simcore/keys"
	"optimize/strategies/settings"
)

// fitFlags are calibrate --fit's.
type fitFlags struct {
	on    bool
	out   string
	evals int
}

func (f *fitFlags) bind(fs *pflag.FlagSet) {
	fs.BoolVar(&f.on, "fit", false, "fit the world's latency coefficients to the runs (trained-physics: every β with an effect, within physical bounds, and α; blackbox: α and β) and write it with -o")
	fs.StringVarP(&f.out, "out", "o", "", "calibrate --fit: the world file to write (simulate, calibrate and study create read it with --world-file)")
	fs.IntVar(&f.evals, "fit-evaluations", 1500, "calibrate --fit: most replays of the runs the fit makes (each fit; the hold-out makes one fit a run)")
}

func (f *fitFlags) check(fs *pflag.FlagSet) error {
	switch {
	case !f.on && changed(fs, "out"):
		return fmt.Errorf("--out: needs --fit")
	case !f.on && changed(fs, "fit-evaluations"):
		return fmt.Errorf("--fit-evaluations: needs --fit")
	case f.on && f.out == "":
		return fmt.Errorf("--fit: give the world file to write with -o FILE")
	case f.evals < 1:
		return fmt.Errorf("--fit-evaluations: must be >= 1, got %d", f.evals)
	}
	return nil
}

// fitProvenance is what a fitted world file says of itself.
type fitProvenance struct {
	Tool     string                 `yaml:"tool"`
	Fitted   string                 `yaml:"fitted"`
	Runs     []string               `yaml:"runs"`
	FitError []calibration.RunError `yaml:"fit_error"`
	HeldOut  []calibration.RunError `yaml:"held_out_error,omitempty"`
	Note     string                 `yaml:"note"`
}

// run fits the world to the runs, checks each run held out, prints both
// and writes the world file.
func (f *fitFlags) run(runs []calibrated, o calibration.Options, s Streams) error {
	targets := make([]calibration.Target, len(runs))
	for i, r := range runs {
		targets[i] = calibration.Target{Run: r.run, Config: r.cfg}
		if i > 0 && settings.WorldLine(&r.cfg) != settings.WorldLine(&runs[0].cfg) {
			return fmt.Errorf("calibrate --fit: %s runs in %s, %s in %s: a fit is of one world", r.run.Name, settings.WorldLine(&r.cfg), runs[0].run.Name, settings.WorldLine(&runs[0].cfg))
		}
	}
	opts := calibration.FitOptions{Compare: o, Evaluations: f.evals}
	fitted, err := calibration.Fit(targets, opts)
	if err != nil {
		return failed(err)
	}
	held, err := calibration.HoldOut(targets, opts)
	if err != nil {
		return failed(err)
	}
	cfg := runs[0].cfg
	coeffs, err := calibration.Coefficients(cfg)
	if err != nil {
		return err
	}
	fitted.Apply(&cfg, coeffs)
	fmt.Fprintf(s.Out, "fitted %s to %d runs in %d replays of them\n", settings.WorldLine(&cfg), len(runs), fitted.Evals)
	for i, k := range fitted.Keys {
		fmt.Fprintf(s.Out, "  %-26s %.6g\n", k, fitted.Values[i])
	}
	fmt.Fprintln(s.Out, "errors, simulated / real − 1 (fit: the world fitted to every run; held out: fitted to the others):")
	fmt.Fprintf(s.Out, "  %-40s %-9s %9s %9s %9s %9s\n", "run", "", "TTFT mean", "E2E mean", "E2E P90", "ITL mean")
	for i, e := range fitted.Errors {
		writeRunError(s, runLabel(e.Run), "fit", e)
		if held != nil {
			writeRunError(s, "", "held out", held[i])
		}
	}
	world := []settings.WorldSetting{}
	for _, key := range []string{keys.Model, keys.GPU, keys.TP, keys.LatencyModel, keys.KVTotalBlocks, keys.GPUMemoryUtilization} {
		st, _ := settings.Lookup(key)
		world = append(world, settings.WorldSetting{Key: key, Value: st.Value(&cfg)})
	}
	for _, st := range settings.All() {
		if st.Active.Holds(&cfg) && settings.CoefficientKey(st.Key) {
			world = append(world, settings.WorldSetting{Key: st.Key, Value: st.Value(&cfg)})
		}
	}
	prov := fitProvenance{Tool: "optimize calibrate --fit", Fitted: time.Now().UTC().Format(time.RFC3339), FitError: fitted.Errors, HeldOut: held,
		Note: "kv.total_blocks is the first run's (its recorded num_gpu_blocks where it has one, else derived); coefficients not listed under fit moved are the world data's"}
	for _, r := range runs {
		prov.Runs = append(prov.Runs, r.run.Name)
	}
	var buf bytes.Buffer
	comment := "A world fitted to real runs by optimize calibrate --fit: --world-file FILE runs simulate, calibrate and study create in it."
	if err := settings.WriteWorldFile(&buf, comment, settings.WorldFile{World: world, Provenance: prov}); err != nil {
		return failed(err)
	}
	if err := os.WriteFile(f.out, buf.Bytes(), 0o644); err != nil {
		return failed(fmt.Errorf("-o: %v", err))
	}
	fmt.Fprintf(s.Out, "wrote %s\n", f.out)
	return nil
}

func writeRunError(s Streams, run, kind string, e calibration.RunError) {
	pct := func(v float64) string { return fmt.Sprintf("%+.1f%%", 100*v) }
	itl := "—"
	if e.ITLMean != 0 {
		itl = pct(e.ITLMean)
	}
	fmt.Fprintf(s.Out, "  %-40s %-9s %9s %9s %9s %9s\n", run, kind, pct(e.TTFTMean), pct(e.E2EMean), pct(e.E2EP90), itl)
}
