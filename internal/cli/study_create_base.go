package cli

import (
	"fmt"
	"strings"

	"optimize/storage"
	"optimize/strategies/settings"
)

// createBase is what study create's --world-file and --set give every
// run of the study to start from: the world file's text, then the
// settings as a settings file's `key: value` lines. Each --set is
// checked here as simulate checks it, so that its error names it.
func createBase(worldFile string, sets []string) ([]storage.ConfigFile, error) {
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
