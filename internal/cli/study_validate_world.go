package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"optimize/simcore/cluster"
	"optimize/simcore/latency"
	"optimize/strategies/settings"
	"optimize/studies"
)

// worldFlags are validate's flags naming other worlds: --world, a list of
// latency models (one world each), and one flag per world setting (the
// table's World column: --model, --hardware, --tp, --latency-model),
// which apply to every world of the list.
type worldFlags struct {
	list   []string
	values []string // aligned with settings.WorldSettings()
}

// worldFlagNames are the flags of validate that name another world.
func worldFlagNames() []string {
	names := []string{worldListFlag}
	for _, s := range settings.WorldSettings() {
		names = append(names, s.Flag)
	}
	return names
}

const worldListFlag = "world"

func (f *worldFlags) bind(fs *pflag.FlagSet) {
	world := settings.WorldSettings()
	f.values = make([]string, len(world))
	var each []string
	for i, s := range world {
		if s.Key != settings.LatencyModelKey {
			each = append(each, "--"+s.Flag)
		}
		fs.StringVar(&f.values[i], s.Flag, "", fmt.Sprintf("validate in another world: %s; %s (the other world settings stay the study's)", s.Doc, s.ValuesText()))
	}
	fs.StringSliceVar(&f.list, worldListFlag, nil, fmt.Sprintf("validate in other worlds, each named by its latency model (%s), e.g. blackbox,trained-physics, or a world file (or a built-in world: %s): one block per world; %s apply to each",
		strings.Join(latency.Kinds(), ", "), strings.Join(settings.BuiltinWorlds(), ", "), strings.Join(each, ", ")))
}

// changes are the worlds the flags name (none when no flag is given),
// each value checked as the setting's flag checks it.
func (f *worldFlags) changes(fs *pflag.FlagSet) ([]studies.WorldChange, error) {
	var common studies.WorldChange
	var scratch cluster.Config
	for i, s := range settings.WorldSettings() {
		if !fs.Changed(s.Flag) {
			continue
		}
		if err := s.Set(&scratch, f.values[i]); err != nil {
			return nil, fmt.Errorf("--%s: %v", s.Flag, err)
		}
		common = append(common, studies.WorldSetting{Key: s.Key, Value: f.values[i], Flag: "--" + s.Flag})
	}
	if !fs.Changed(worldListFlag) {
		if len(common) == 0 {
			return nil, nil
		}
		return []studies.WorldChange{common}, nil
	}
	kind, _ := settings.Lookup(settings.LatencyModelKey)
	if fs.Changed(kind.Flag) {
		return nil, fmt.Errorf("--%s and --%s are exclusive: --%s names the latency model of each world", worldListFlag, kind.Flag, worldListFlag)
	}
	if len(f.list) == 0 {
		return nil, fmt.Errorf("--%s: give at least one latency model (allowed: %s)", worldListFlag, strings.Join(latency.Kinds(), ", "))
	}
	var out []studies.WorldChange
	for _, k := range f.list {
		if !slices.Contains(latency.Kinds(), k) {
			// Not a latency model: a world file, or a built-in world.
			w, err := worldFileChange(k)
			if errors.Is(err, settings.ErrNoWorld) {
				// Neither: --latency-model's error for the name, and
				// what else --world takes.
				kerr := kind.Set(&scratch, k)
				return nil, fmt.Errorf("--%s: %v, nor is it a world file or a built-in world (built in: %s)", worldListFlag, kerr, strings.Join(settings.BuiltinWorlds(), ", "))
			}
			if err != nil {
				return nil, err
			}
			out = append(out, append(w, common...))
			continue
		}
		if err := kind.Set(&scratch, k); err != nil {
			return nil, fmt.Errorf("--%s: %v", worldListFlag, err)
		}
		w := append(slices.Clone(common), studies.WorldSetting{Key: kind.Key, Value: k, Flag: "--" + worldListFlag})
		out = append(out, w)
	}
	return out, nil
}

// worldFileChange is the world a world file (or a built-in world) names,
// as the settings it gives.
func worldFileChange(pathOrName string) (studies.WorldChange, error) {
	name, text, err := settings.ReadWorldFile(pathOrName)
	if err != nil {
		return nil, err
	}
	given, err := settings.WorldFileSettings(name, text)
	if err != nil {
		return nil, fmt.Errorf("--%s: %v", worldListFlag, err)
	}
	var w studies.WorldChange
	for _, g := range given {
		w = append(w, studies.WorldSetting{Key: g.Key, Value: g.Value, Flag: "--" + worldListFlag + " " + pathOrName})
	}
	return w, nil
}
