package report

import (
	"fmt"
	"io"
	"optimize/storage"
	"optimize/strategies"
	"strings"

	"optimize/simcore/cluster"
	"optimize/simcore/errtext"
	"optimize/simcore/latency"
	"optimize/strategies/production"
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
// standard configuration, moved to the study's workload regime (in a
// deployable study, as its exported files carry it), with the
// latency targets of the workload's spec filling the classes the template
// left unset (as every run does when it starts). A study stored before
// studies recorded their world ran in the seeds' world, as TrialWorld
// says: so does its configuration.
func (r *Report) TrialConfig(c *Result) (cluster.Config, error) {
	base, err := settings.Standard()
	if err != nil {
		return cluster.Config{}, err
	}
	if base, _, err = StudyBase(base, r.Study.BaseFrom); err != nil {
		return cluster.Config{}, fmt.Errorf("study %s: %v", r.Study.Name, err)
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
	if r.Study.Deployable {
		// A deployable study's trials run as their exported files carry
		// them (studies' runConfig).
		if cfg, err = production.AsDeployed(base, cfg); err != nil {
			return cluster.Config{}, fmt.Errorf("trial %d: %v", c.Number, err)
		}
	}
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

// StudyBase is the configuration every run of a study starts from, before
// its template: base, with the study's configs over it in order (study
// create --world-file, then --set), and the settings they give.
func StudyBase(base cluster.Config, from []storage.ConfigFile) (cluster.Config, []settings.Given, error) {
	var given []settings.Given
	for _, f := range from {
		var g []settings.Given
		var err error
		switch f.Kind {
		case storage.KindWorld:
			g, err = settings.ApplyWorldFile(f.Path, []byte(f.Data), &base)
		case storage.KindSettings:
			g, err = settings.ApplyFile(f.Path, []byte(f.Data), &base)
		default:
			err = fmt.Errorf("%s: unknown kind %q of a study's base config (allowed: %s, %s)", f.Path, f.Kind, storage.KindWorld, storage.KindSettings)
		}
		if err != nil {
			return base, nil, err
		}
		given = append(given, g...)
	}
	return base, given, nil
}

// StudyTemplate is the template a study searches: tpl, restricted to
// what production carries when the study is deployable
// (strategies.Template.ForProduction), with each parameter that tunes a
// setting the study's configs give (a world file giving the GPU a
// capacity template tunes) pinned to the given value; pins lists them,
// "key=value".
func StudyTemplate(tpl *strategies.Template, std cluster.Config, from []storage.ConfigFile, deployable bool) (_ *strategies.Template, pins []string, err error) {
	if deployable {
		if tpl, err = tpl.ForProduction(); err != nil {
			return nil, nil, err
		}
	}
	if len(from) == 0 {
		return tpl, nil, nil
	}
	base, given, err := StudyBase(std, from)
	if err != nil {
		return nil, nil, err
	}
	for _, g := range given {
		if tuned, _, _ := tpl.Gives(g.Setting.Key); !tuned {
			continue
		}
		value := g.Setting.Value(&base)
		if tpl, err = tpl.Pinned(g.Setting.Key, value); err != nil {
			return nil, nil, err
		}
		pins = append(pins, g.Setting.Key+"="+value)
	}
	return tpl, pins, nil
}
