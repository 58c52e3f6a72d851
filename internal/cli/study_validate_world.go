package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"optimize/simcore/cluster"
	"optimize/simcore/latency"
	"optimize/strategies"
	"optimize/studies"
)

// validateWorldKeys are the world settings `study validate` takes, each
// by its own flag (--model, --hardware, --tp, --latency-model), to
// validate in another world.
var validateWorldKeys = []string{"model", "gpu", "tp", "latency.model"}

// worldFlags are validate's flags naming other worlds: --world, a list of
// latency models (one world each), and one flag per world setting, which
// apply to every world of the list.
type worldFlags struct {
	list   []string
	values []string // aligned with validateWorldKeys
}

const worldListFlag = "world"

func (f *worldFlags) bind(fs *pflag.FlagSet) {
	f.values = make([]string, len(validateWorldKeys))
	for i, key := range validateWorldKeys {
		s, _ := strategies.LookupSetting(key)
		fs.StringVar(&f.values[i], s.Flag, "", fmt.Sprintf("validate in another world: %s; %s (the other world settings stay the study's)", s.Doc, s.ValuesText()))
	}
	fs.StringSliceVar(&f.list, worldListFlag, nil, fmt.Sprintf("validate in other worlds, each named by its latency model (%s), e.g. blackbox,trained-physics: one block per world; --model, --hardware and --tp apply to each",
		strings.Join(latency.Kinds(), ", ")))
}

// changes are the worlds the flags name (none when no flag is given),
// each value checked as the setting's flag checks it.
func (f *worldFlags) changes(fs *pflag.FlagSet) ([]studies.WorldChange, error) {
	var common studies.WorldChange
	var scratch cluster.Config
	for i, key := range validateWorldKeys {
		s, _ := strategies.LookupSetting(key)
		if !fs.Changed(s.Flag) {
			continue
		}
		if err := s.Set(&scratch, f.values[i]); err != nil {
			return nil, fmt.Errorf("--%s: %v", s.Flag, err)
		}
		common = append(common, studies.WorldSetting{Key: key, Value: f.values[i], Flag: "--" + s.Flag})
	}
	if !fs.Changed(worldListFlag) {
		if len(common) == 0 {
			return nil, nil
		}
		return []studies.WorldChange{common}, nil
	}
	kind, _ := strategies.LookupSetting("latency.model")
	if fs.Changed(kind.Flag) {
		return nil, fmt.Errorf("--%s and --%s are exclusive: --%s names the latency model of each world", worldListFlag, kind.Flag, worldListFlag)
	}
	if len(f.list) == 0 {
		return nil, fmt.Errorf("--%s: give at least one latency model (allowed: %s)", worldListFlag, strings.Join(latency.Kinds(), ", "))
	}
	var out []studies.WorldChange
	for _, k := range f.list {
		if err := kind.Set(&scratch, k); err != nil {
			return nil, fmt.Errorf("--%s: %v", worldListFlag, err)
		}
		w := append(slices.Clone(common), studies.WorldSetting{Key: kind.Key, Value: k, Flag: "--" + worldListFlag})
		out = append(out, w)
	}
	return out, nil
}
