package report

import (
	"fmt"
	"io"
	"strings"

	"optimize/simcore/cluster"
	"optimize/simcore/errtext"
	"optimize/simcore/latency"
	"optimize/strategies/settings"
	"optimize/strategies/workloads"
)

// The whole strategy as data: the settings a complete trial ran with —
// every setting of the settings table, as settings.WriteFile writes
// them — which `simulate --settings FILE` reads back and runs as the
// trial ran, on the study's workload and seeds (`study show --trial N
// --settings`, `study export --format settings`, and the show document's
// best.settings).

// SettingsFormat is the export format of one trial's settings.
const SettingsFormat = "settings"

// TrialConfig is the configuration complete trial c ran with, built as
// package studies builds it: the template at c's parameters on the
// standard configuration, moved to the study's workload regime, with the
// latency targets of the workload's spec filling the classes the template
// left unset (as every run does when it starts). A study stored before
// studies recorded their world ran in the seeds' world, as TrialWorld
// says: so does its configuration.
func (r *Report) TrialConfig(c *Result) (cluster.Config, error) {
	base, err := settings.Standard()
	if err != nil {
		return cluster.Config{}, err
	}
	cfg, err := r.Template.Config(base, c.Params)
	if err != nil {
		return cluster.Config{}, fmt.Errorf("trial %d: %v", c.Number, err)
	}
	if r.WorldAssumed {
		cfg.Model, cfg.GPU, cfg.TP, cfg.LatencyModel = settings.DefaultModel, settings.DefaultGPU, settings.DefaultTP, latency.KindBlackbox
		if err := settings.CheckConfig(&cfg); err != nil {
			return cluster.Config{}, fmt.Errorf("trial %d in the seeds' world: %v", c.Number, err)
		}
	}
	wl, err := workloads.Resolve(r.Study.Workload)
	if err != nil {
		return cluster.Config{}, fmt.Errorf("study %s: workload: %v", r.Study.Name, err)
	}
	wl.ApplyConfig(&cfg)
	if wl.Spec != nil {
		wl.Spec.FillTargets(&cfg.SLOTTFT, &cfg.SLOITL, &cfg.SLOE2E)
	}
	return cfg, nil
}

// TrialSettings is the settings that have an effect in complete trial c's
// configuration, with their values, by key (settings.Map).
func (r *Report) TrialSettings(c *Result) (map[string]string, error) {
	cfg, err := r.TrialConfig(c)
	if err != nil {
		return nil, err
	}
	return settings.Map(&cfg), nil
}

// WriteTrialSettings writes complete trial n's settings file: a header
// saying what it is and how to run it again, then every setting.
func (r *Report) WriteTrialSettings(w io.Writer, n int) error {
	c := r.ByNumber(n)
	if c == nil {
		return errtext.Usage("--trial: study %s has no complete trial %d", r.Study.Name, n)
	}
	cfg, err := r.TrialConfig(c)
	if err != nil {
		return err
	}
	seeds := strings.Trim(strings.ReplaceAll(fmt.Sprint(r.Seeds), " ", ","), "[]")
	fmt.Fprintf(w, "# The settings trial %d of study %s (template %s) ran with, on workload %s, seeds %s.\n",
		n, r.Study.Name, r.Study.Template, r.Study.Workload, seeds)
	fmt.Fprintf(w, "# Run it again: optimize simulate --settings FILE --workload %s --seeds %s\n", r.Study.Workload, seeds)
	fmt.Fprintf(w, "# %s\n", settings.SettingsFileNote)
	return settings.WriteFile(w, &cfg)
}

// BestTrial is the number of the best complete trial; false when there
// is none.
func (r *Report) BestTrial() (int, bool) {
	if r.Best < 0 {
		return 0, false
	}
	return r.Complete[r.Best].Number, true
}
