package cli

import (
	"fmt"
	"strconv"
	"strings"

	"optimize/simcore"
	"optimize/simcore/keys"
	"optimize/simcore/latency"
	"optimize/storage"
	"optimize/strategies"
	"optimize/strategies/production"
	"optimize/strategies/settings"
	"optimize/studies"

	"github.com/spf13/pflag"
)

// sloFamilies are the per-class latency targets study create takes as
// simulate does (--slo-ttft critical=500,standard=2s), by their settings'
// flags.
var sloFamilies = []string{keys.SLOTTFT, keys.SLOITL, keys.SLOE2E}

// sloFlag is the flag of a family of per-class targets.
func sloFlag(family string) string {
	for _, s := range settings.All() {
		if strings.HasPrefix(s.Key, family+".") {
			return s.Flag
		}
	}
	return family
}

// sloSets turns the target flags given (family → CLASS=VALUE,…) into
// --set pairs, each value read as simulate reads it (ms, or a duration).
func sloSets(given map[string]string) ([]string, error) {
	var out []string
	for _, family := range sloFamilies {
		raw, ok := given[family]
		if !ok {
			continue
		}
		pc, err := simcore.ParsePerClass(raw, true)
		if err != nil {
			return nil, fmt.Errorf("--%s: %v", sloFlag(family), err)
		}
		for cl := simcore.SLOCritical; cl < simcore.NumSLOClasses; cl++ {
			if v, ok := pc.Get(cl); ok {
				out = append(out, keys.Member(family, cl.String())+"="+strconv.FormatFloat(v, 'g', -1, 64))
			}
		}
	}
	return out, nil
}

// createBaseSLO is what study create's --world-file, --set and per-class
// target flags (slo, by family) give every run of the study to start
// from: the world file's text, then the settings as a settings file's
// `key: value` lines. Each --set is checked here as simulate checks it,
// so that its error names it.
func createBaseSLO(worldFile string, sets []string, slo map[string]string) ([]storage.ConfigFile, error) {
	targets, err := sloSets(slo)
	if err != nil {
		return nil, err
	}
	sets = append(targets, sets...)
	var from []storage.ConfigFile
	if worldFile != "" {
		name, data, err := settings.ReadWorldFile(worldFile)
		if err != nil {
			return nil, fmt.Errorf("--world-file: %v", err)
		}
		from = append(from, storage.ConfigFile{Kind: storage.KindWorld, Path: name, Data: string(data)})
	}
	if len(sets) == 0 {
		return from, nil
	}
	var lines strings.Builder
	seen := map[string]string{}
	for _, pair := range sets {
		key, value, ok := strings.Cut(pair, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !ok || key == "" {
			return nil, fmt.Errorf("--set %s: want KEY=VALUE, e.g. slo.ttft_target_ms.critical=500", pair)
		}
		s, ok := settings.Lookup(key)
		if !ok {
			return nil, fmt.Errorf("--set %s: %v", pair, settings.Unknown(key))
		}
		if first, dup := seen[key]; dup {
			return nil, fmt.Errorf("--set %s: %s is also given by --set %s; give it once", pair, key, first)
		}
		seen[key] = pair
		if _, err := s.ParseNumber(value); err != nil {
			return nil, fmt.Errorf("--set %s: %v", pair, err)
		}
		fmt.Fprintf(&lines, "%s: %s\n", key, value)
	}
	return append(from, storage.ConfigFile{Kind: storage.KindSettings, Path: "--set", Data: lines.String()}), nil
}

// studyRunFlags are the flags that decide what a study's runs are: its
// seeds, workload, world, starting settings, latency targets, baseline and
// robust scenarios. study create and evaluate bind them once, so that
// evaluate scores a vector as a study created with the same flags would.
type studyRunFlags struct {
	seeds                                []int64
	baselineEPP, baselineVLLM, worldFile string
	sets                                 []string
	sloTargets                           map[string]*string
}

// bind registers the flags on fs, those that are options on o.
func (r *studyRunFlags) bind(fs *pflag.FlagSet, o *studies.CreateOptions) {
	def := studies.Defaults()
	r.sloTargets = map[string]*string{}
	fs.Var(newSeedList(&r.seeds, def.Seeds), "seeds", "simulation seeds of every trial: a list (42,43,44) or a range (42-44)")
	fs.StringVar(&o.Workload, "workload", "", "built-in workload (NAME or NAME@REGIME), spec file, or trace (a trace dataset's name, fetched by `optimize workload fetch`, or trace:FILE, ?KEY=VALUE controls: its seeds replay windows of its first half, study validate windows of its second) (default: the template's)")
	fs.BoolVar(&o.Deployable, "deployable", false, "search only what production carries: parameters of settings with no llm-d or vLLM counterpart are left out (their settings at the standard configuration's values), a categorical keeps the choices production carries, and every trial runs as its exported files carry it, so that study export's deployable Δ is the trial's (the study keeps it; a template's deployable: true says it too)")
	fs.StringVar(&r.baselineEPP, "baseline-epp", "", "the baseline runs this llm-d EndpointPickerConfig (as simulate --epp-config reads it) instead of the baseline template's routing and admission; the study keeps its text")
	fs.StringVar(&r.baselineVLLM, "baseline-vllm-args", "", "the baseline runs these vLLM engine arguments (as simulate --vllm-args reads them) instead of the baseline template's; the study keeps their text")
	fs.StringSliceVar(&o.Robust.Regimes, "regime", nil, "robust study: run every trial in each of these regimes ("+strings.Join(strategies.RobustRegimeNames(), ", ")+"; "+strategies.BaseRegime+" = the workload's own operating point) and score it by its ratios to the baseline in each; costs trials × regimes × worlds × seeds simulations (default: the template's robust_regimes)")
	fs.StringSliceVar(&o.Robust.Worlds, "worlds", nil, "robust study: run every trial in each of these worlds (latency models: "+strings.Join(latency.Kinds(), ", ")+"; or built-in worlds fitted to real runs: "+strings.Join(settings.BuiltinWorlds(), ", ")+"), each regime in each (default: the template's robust_worlds, else the study's own world)")
	fs.StringVar(&o.Robust.Aggregate, "aggregate", "", "robust study: how the scenarios' ratios to their baselines make the score: "+strings.Join(strategies.Aggregates(), " (default) or ")+"; every constraint must hold in every scenario (its shortfall is the largest over them)")
	fs.StringVar(&r.worldFile, "world-file", "", "run the study in this world — a file (optimize calibrate --fit writes one: model, GPU, TP, KV blocks, latency coefficients fitted to real runs) or a built-in world ("+strings.Join(settings.BuiltinWorlds(), ", ")+"); the study keeps its text, and every run, validation and export of it runs there; a parameter tuning a setting it gives (capacity's gpu, tp) is pinned to its value")
	for _, family := range sloFamilies {
		r.sloTargets[family] = fs.String(sloFlag(family), "", "per-class "+strings.TrimPrefix(strings.TrimSuffix(family, "_target_ms"), "slo.")+" targets every run of the study is judged by, class=value,… in ms or a duration (critical=500,standard=2s), as simulate takes them; the same as --set "+family+".<class>=MS")
	}
	fs.StringArrayVar(&r.sets, "set", nil, "KEY=VALUE: a setting every run of the study starts from (repeatable; optimize template settings lists the keys), e.g. --set slo.ttft_target_ms.critical=500 for a trace that carries no targets; the template's own settings are not given this way")
}

// resolve gives o the seeds, baseline configs and starting settings the
// flags of fs say.
func (r *studyRunFlags) resolve(fs *pflag.FlagSet, o *studies.CreateOptions) (err error) {
	o.Seeds = r.seeds
	files := map[string]string{production.ProductionEPPConfig: r.baselineEPP, production.ProductionVLLMArgs: r.baselineVLLM}
	if o.BaselineFrom, err = readBaselineConfigs(files); err != nil {
		return err
	}
	slo := map[string]string{}
	for family, v := range r.sloTargets {
		if fs.Changed(sloFlag(family)) {
			slo[family] = *v
		}
	}
	o.BaseFrom, err = createBaseSLO(r.worldFile, r.sets, slo)
	return err
}
