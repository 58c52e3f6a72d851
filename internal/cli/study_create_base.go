package cli

import (
	"fmt"
	"strconv"
	"strings"

	"optimize/simcore"
	"optimize/simcore/keys"
	"optimize/storage"
	"optimize/strategies/settings"
)

// createBase is what study create's --world-file and --set give every
// run of the study to start from: the world file's text, then the
// settings as a settings file's `key: value` lines. Each --set is
// checked here as simulate checks it, so that its error names it.
func createBase(worldFile string, sets []string) ([]storage.ConfigFile, error) {
	return createBaseSLO(worldFile, sets, nil)
}

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

// createBaseSLO is createBase with the target flags given too.
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
