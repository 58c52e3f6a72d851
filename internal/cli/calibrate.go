package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"optimize/calibration"
	"optimize/simcore/cluster"
	"optimize/simcore/keys"
	"optimize/simcore/workload"
	"optimize/strategies/settings"
)

type calibrateOptions struct {
	flags        simFlags
	serverConfig string
	opts         calibration.Options
	replay       map[string]*string // the replay controls calibrate takes, by key
	output       string
	fit          fitFlags
}

// calibrateControls are the replay controls a calibration replays a run
// under: one of its load stages (window) and the client's in-flight cap.
var calibrateControls = []string{"window", "client-cap"}

func newCalibrateCommand(s Streams) *cobra.Command {
	o := &calibrateOptions{opts: calibration.DefaultOptions(), replay: map[string]*string{}}
	cmd := &cobra.Command{
		Use:   "calibrate RUN...",
		Short: "Replay real runs in the simulator and measure its error, as blis calibrate does; --fit fits the world to them",
		Long: `Replay each recorded run of a real server in the simulator and compare,
request by request, what the simulator predicts with what the server did,
as BLIS's "blis replay" and "blis calibrate" do: each request is sent when
the run sent it (send_time_us) with the prompt the server counted
(server_input_tokens); pairs are matched by request id; the run's warm-up
requests are dropped; the network's round trip is added to the simulated
latencies; TTFT, E2E and ITL get their mean and P50/P90/P95/P99 errors,
request-level MAPE and Pearson r, BLIS's quality label, and TTFT's MAPE its
tolerance verdict.

A RUN is a BLIS TraceV2 trace of mode real (its header YAML, or the folder
holding trace.yaml; "optimize observe" writes one), or an inference-perf
run (<exp>.meta.json or <exp>.csv.gz). The settings a run records (model,
TP, max_num_batched_tokens, max_num_seqs, block size, vLLM's
num_gpu_blocks: from the trace header, a vLLM server_config.json beside
it or above it or given by --server-config, or the inference-perf meta)
are the replay's; a flag given overrides one, and the report lists which
it took (config_match). One run prints its report; several print a table,
a row a run. --output json writes the reports.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Flags(), args, s)
		},
	}
	fs := cmd.Flags()
	o.flags.bind(fs)
	fs.StringVar(&o.serverConfig, "server-config", "", "a vLLM server_config.json for the TraceV2 runs (default: one beside the header or in the folder above)")
	fs.IntVar(&o.opts.WarmUp, "warmup-requests", -1, "requests (by id) to drop from the comparison (default: the run's warm_up_requests; 0 keeps all)")
	fs.Int64Var(&o.opts.RTTUs, "network-rtt-us", -1, "network round trip added to every simulated latency, µs (default: the run's network.measured_rtt_ms)")
	fs.Float64Var(&o.opts.BandwidthMbps, "network-bandwidth-mbps", 0, "network bandwidth for the prompt's upload and the output's download at 4 bytes a token (0: none)")
	fs.Float64Var(&o.opts.TTFTThreshold, "ttft-mape-threshold", o.opts.TTFTThreshold, "TTFT MAPE (a fraction) the tolerance verdict holds the simulator to")
	for _, c := range workload.ReplayControls() {
		if slices.Contains(calibrateControls, c.Key) {
			o.replay[c.Key] = fs.String(c.Flag, "", c.Usage)
		}
	}
	fs.StringVar(&o.output, "output", "text", "text or json")
	o.fit.bind(fs)
	return cmd
}

// calibrated is one run replayed and compared.
type calibrated struct {
	run    *calibration.Run
	cfg    cluster.Config
	report *calibration.Report
}

func (o *calibrateOptions) run(fs *pflag.FlagSet, paths []string, s Streams) error {
	if err := checkOutput(o.output); err != nil {
		return err
	}
	if err := o.opts.Check(); err != nil {
		return err
	}
	var controls workload.ReplayOptions
	for _, key := range calibrateControls {
		for _, c := range workload.ReplayControls() {
			if c.Key == key && changed(fs, c.Flag) {
				if err := controls.SetControl(key, *o.replay[key]); err != nil {
					return fmt.Errorf("--%s: %v", c.Flag, err)
				}
			}
		}
	}
	if err := o.fit.check(fs); err != nil {
		return err
	}
	var runs []calibrated
	for _, p := range paths {
		run, err := calibration.Open(p, o.serverConfig)
		if err != nil {
			return err
		}
		if err := run.Control(controls); err != nil {
			return err
		}
		cfg, match, err := o.configure(fs, run)
		if err != nil {
			return err
		}
		runs = append(runs, calibrated{run: run, cfg: cfg})
		runs[len(runs)-1].report = &calibration.Report{ConfigMatch: match}
	}
	if o.fit.on {
		return o.fit.run(runs, o.opts, s)
	}
	var reports []*calibration.Report
	for i := range runs {
		rep, err := compareRun(&runs[i], o.opts)
		if err != nil {
			return err
		}
		reports = append(reports, rep)
	}
	if o.output == "json" {
		if len(reports) == 1 {
			return writeIndented(s.Out, reports[0])
		}
		return writeIndented(s.Out, reports)
	}
	if len(reports) == 1 {
		writeCalibration(s.Out, reports[0])
	} else {
		writeCalibrationTable(s.Out, reports)
	}
	return nil
}

// compareRun replays one run in its configuration and compares it.
func compareRun(c *calibrated, o calibration.Options) (*calibration.Report, error) {
	sim, _, err := c.run.Replay(c.cfg)
	if err != nil {
		return nil, failed(err)
	}
	rep, err := calibration.Compare(c.run, sim, o)
	if err != nil {
		return nil, failed(err)
	}
	rep.World = settings.WorldLine(&c.cfg)
	rep.ConfigMatch = c.report.ConfigMatch
	c.report = rep
	return rep, nil
}

// configure is the run's configuration: the defaults, the settings the
// run records, then the flags (which override those).
func (o *calibrateOptions) configure(fs *pflag.FlagSet, run *calibration.Run) (cluster.Config, calibration.ConfigMatch, error) {
	var match calibration.ConfigMatch
	base, err := baseConfig()
	if err != nil {
		return base, match, failed(err)
	}
	var factErr error
	alias := map[string]bool{} // facts the world data does not know, named by the world file
	cfg, err := o.flags.apply(fs, base, func(c *cluster.Config) {
		for _, f := range run.Facts {
			s, ok := settings.Lookup(f.Key)
			if !ok || changed(fs, s.Flag) {
				continue // a flag gives it (a served model name the catalog does not know, say)
			}
			err := s.Set(c, f.Value)
			switch {
			case err != nil && f.Key == keys.Model && o.flags.worldFile != "":
				// A served model name the world data does not know: the
				// world file says which model it is.
				alias[f.Key] = true
			case err != nil && factErr == nil:
				factErr = fmt.Errorf("run %s: %s: %v (give the setting's flag to say what it is)", run.Name, f.From, err)
			}
		}
	})
	if factErr != nil {
		return cfg, match, factErr
	}
	if err != nil {
		return cfg, match, err
	}
	for _, f := range run.Facts {
		s, _ := settings.Lookup(f.Key)
		if alias[f.Key] {
			match.Defaulted = append(match.Defaulted, fmt.Sprintf("%s=%s (--world-file; the run's %s is %s, a served model name the world data does not know)", f.Key, s.Value(&cfg), f.From, f.Value))
			continue
		}
		if o.flags.worldFile != "" && (f.Key == keys.Model || f.Key == keys.TP) && s != nil && s.Value(&cfg) != f.Value &&
			!slices.ContainsFunc(o.flags.user, func(g given) bool { return g.setting.Key == f.Key }) {
			return cfg, match, fmt.Errorf("--world-file: %s: %s is %s, but the run %s records %s (%s): a world file calibrates runs of its own world", o.flags.worldFile, f.Key, s.Value(&cfg), run.Name, f.Value, f.From)
		}
		if i := slices.IndexFunc(o.flags.user, func(g given) bool { return g.setting.Key == f.Key }); i >= 0 {
			match.Defaulted = append(match.Defaulted, fmt.Sprintf("%s: %s (the run's %s is %s)", f.Key, o.flags.user[i].source, f.From, f.Value))
			continue
		}
		match.Matched = append(match.Matched, fmt.Sprintf("%s=%s (%s)", f.Key, f.Value, f.From))
	}
	for _, key := range []string{keys.GPU, keys.LatencyModel, keys.KVTotalBlocks, keys.MaxScheduledTokens, keys.MaxRunning} {
		if slices.ContainsFunc(run.Facts, func(f calibration.Fact) bool { return f.Key == key }) {
			continue
		}
		if s, ok := settings.Lookup(key); ok {
			match.Defaulted = append(match.Defaulted, fmt.Sprintf("%s=%s (not recorded by the run)", key, s.Value(&cfg)))
		}
	}
	return cfg, match, nil
}

// writeCalibration writes one run's report as BLIS calibrate logs it.
func writeCalibration(w io.Writer, r *calibration.Report) {
	t := r.Trace
	fmt.Fprintf(w, "run %s\nworld: %s\n", r.Run, r.World)
	fmt.Fprintf(w, "matched pairs: %d of %d requests (warm-up excluded: %d, no real latency: %d, not completed in the simulator: %d); network RTT %d µs added\n",
		t.MatchedPairs, t.NumRequests, t.WarmUpExcluded, t.UnmatchedReal, t.UnmatchedSim, t.NetworkRTTUs)
	for _, m := range r.ConfigMatch.Matched {
		fmt.Fprintf(w, "  from the run: %s\n", m)
	}
	for _, m := range r.ConfigMatch.Defaulted {
		fmt.Fprintf(w, "  not from the run: %s\n", m)
	}
	fmt.Fprintln(w, "workload level (ms; error = simulated − real):")
	for _, name := range calibration.MetricNames {
		m, ok := r.Metrics[name]
		if !ok {
			continue
		}
		a := m.Workload
		for _, row := range []struct {
			label     string
			real, sim float64
		}{{"mean", a.RealMean, a.SimMean}, {"P50", a.RealP50, a.SimP50}, {"P90", a.RealP90, a.SimP90}, {"P95", a.RealP95, a.SimP95}, {"P99", a.RealP99, a.SimP99}} {
			fmt.Fprintf(w, "  %-4s %-4s real %9.1f  sim %9.1f  error %+9.1f (%+.1f %%)\n", strings.ToUpper(name), row.label,
				row.real/1000, row.sim/1000, (row.sim-row.real)/1000, 100*calibration.Signed(row.real, row.sim))
		}
	}
	fmt.Fprintln(w, "request level:")
	for _, name := range calibration.MetricNames {
		if m, ok := r.Metrics[name]; ok {
			q := m.Request
			fmt.Fprintf(w, "  %-4s MAPE %.1f %%, Pearson r %.3f, %s, quality %s\n", strings.ToUpper(name), 100*q.MAPE, q.PearsonR, q.Bias, q.Label)
		}
	}
	if v := r.TTFTTolerance; v != nil {
		verdict := "WITHIN"
		if !v.Within {
			verdict = "EXCEEDS"
		}
		fmt.Fprintf(w, "TTFT MAPE %.1f %% (threshold %.1f %%) [%s]\n", 100*v.MAPE, 100*v.Threshold, verdict)
	}
}

// writeCalibrationTable writes several runs' errors, a row a run: the
// signed workload-level errors (simulated / real − 1) and the quality.
func writeCalibrationTable(w io.Writer, reports []*calibration.Report) {
	fmt.Fprintf(w, "%-40s %7s %9s %9s %9s %9s %9s %9s  %-9s %s\n", "run", "pairs", "TTFT mean", "TTFT P90", "E2E mean", "E2E P90", "E2E P99", "ITL mean", "E2E", "TTFT MAPE")
	for _, r := range reports {
		cell := func(metric string, pick func(calibration.Aggregates) (float64, float64)) string {
			m, ok := r.Metrics[metric]
			if !ok {
				return "—"
			}
			real, sim := pick(m.Workload)
			return fmt.Sprintf("%+.1f%%", 100*calibration.Signed(real, sim))
		}
		mean := func(a calibration.Aggregates) (float64, float64) { return a.RealMean, a.SimMean }
		p90 := func(a calibration.Aggregates) (float64, float64) { return a.RealP90, a.SimP90 }
		p99 := func(a calibration.Aggregates) (float64, float64) { return a.RealP99, a.SimP99 }
		verdict := "—"
		if v := r.TTFTTolerance; v != nil {
			verdict = fmt.Sprintf("%.1f%% within", 100*v.MAPE)
			if !v.Within {
				verdict = fmt.Sprintf("%.1f%% exceeds", 100*v.MAPE)
			}
		}
		fmt.Fprintf(w, "%-40s %7d %9s %9s %9s %9s %9s %9s  %-9s %s\n", runLabel(r.Run), r.Trace.MatchedPairs,
			cell(calibration.TTFT, mean), cell(calibration.TTFT, p90), cell(calibration.E2E, mean), cell(calibration.E2E, p90),
			cell(calibration.E2E, p99), cell(calibration.ITL, mean), r.Metrics[calibration.E2E].Request.Label, verdict)
	}
}

// runLabel shortens a run's path to its last two elements.
func runLabel(path string) string {
	parts := strings.Split(path, "/")
	if len(parts) > 2 {
		parts = parts[len(parts)-2:]
	}
	label := strings.Join(parts, "/")
	if len(label) > 40 {
		label = "…" + label[len(label)-39:]
	}
	return label
}
