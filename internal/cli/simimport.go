package cli

import (
	"fmt"
	"os"
	"slices"

	"github.com/spf13/pflag"

	"optimize/simcore/cluster"
	"optimize/strategies/production"
	"optimize/strategies/settings"
)

// productionFiles are simulate's --vllm-args FILE and --epp-config FILE:
// a production deployment's configs read onto the base (a template, a
// settings file, or the defaults) through the settings table's production
// column. Precedence, lowest first: the base, --vllm-args, --epp-config,
// --objectives, the flags, --set. The files never set the same setting (a setting
// has one counterpart); a flag that sets a setting one of them set is a
// contradiction and an error; --set may override an imported value (it
// is how MAPPING.md's command restores what production cannot carry).
type productionFiles struct {
	eppPath, vllmPath, objectivesPath string
	// prefillPath is the P/D prefill pods' vLLM arguments.
	prefillPath string
	// pd: the EndpointPickerConfig splits requests between P/D pools.
	pd bool
	// imported are the settings the files set, and where.
	imported []given
	// notes are one line per approximated or ignored item, for stderr.
	notes []string
}

func (p *productionFiles) bind(fs *pflag.FlagSet) {
	fs.StringVar(&p.vllmPath, "vllm-args", "", "vLLM engine arguments as given to vllm serve (--arg value, --arg=value or --arg; lines, # comments); an argument the simulator does not model is an error")
	fs.StringVar(&p.prefillPath, "vllm-args-prefill", "", "prefill/decode disaggregation: the prefill pods' vLLM arguments (the llm-d export's vllm-args-prefill.txt; --vllm-args then gives the decode pods'): every argument but --tensor-parallel-size (read into pd.prefill_tp) and --kv-transfer-config as --vllm-args's")
	fs.StringVar(&p.eppPath, "epp-config", "", "an llm-d Router EndpointPickerConfig (plugins, one scheduling profile, admitter); a plugin or parameter the simulator does not model is an error")
	fs.StringVar(&p.objectivesPath, "objectives", "", "llm-d InferenceObjectives, one per SLO class (YAML documents, as the llm-d export's objectives.yaml): each class's priority, priority.base.<class>")
}

// apply reads the files onto c, vLLM's first.
func (p *productionFiles) apply(c *cluster.Config) error {
	read := func(flag, path string, f func(string, []byte, *cluster.Config) (production.ImportResult, error)) error {
		if path == "" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("--%s: %v", flag, err)
		}
		res, err := f(path, data, c)
		if err != nil {
			return fmt.Errorf("--%s: %v", flag, err)
		}
		for _, g := range res.Given {
			p.imported = append(p.imported, given{fmt.Sprintf("--%s %s (%s)", flag, path, g.Where), g.Setting})
		}
		p.notes = append(p.notes, res.Notes...)
		return nil
	}
	if err := read("vllm-args", p.vllmPath, production.ApplyVLLMArgs); err != nil {
		return err
	}
	if p.prefillPath != "" {
		if p.vllmPath == "" {
			return fmt.Errorf("--vllm-args-prefill: give the decode pods' arguments with --vllm-args too")
		}
		decode, err := os.ReadFile(p.vllmPath)
		if err != nil {
			return fmt.Errorf("--vllm-args: %v", err)
		}
		err = read("vllm-args-prefill", p.prefillPath, func(file string, data []byte, c *cluster.Config) (production.ImportResult, error) {
			return production.ApplyPrefillVLLMArgs(file, data, p.vllmPath, decode, c)
		})
		if err != nil {
			return err
		}
	}
	err := read("epp-config", p.eppPath, func(file string, data []byte, c *cluster.Config) (production.ImportResult, error) {
		res, err := production.ApplyEPPConfig(file, data, c)
		p.pd = res.PD
		return res, err
	})
	if err != nil {
		return err
	}
	return read("objectives", p.objectivesPath, production.ApplyObjectives)
}

// contradiction is the error of a flag that sets a setting an imported
// file set, nil when there is none.
func (p *productionFiles) contradiction(flag string, s *settings.Setting) error {
	if i := slices.IndexFunc(p.imported, func(g given) bool { return g.setting == s }); i >= 0 {
		return fmt.Errorf("%s: %s is also set by %s; give it in one place (--set %s=VALUE overrides an imported value)", flag, s.Key, p.imported[i].source, s.Key)
	}
	return nil
}

// pools sizes the P/D pools an imported EndpointPickerConfig splits
// between when neither the flags nor --set did (production.DefaultPools),
// with a note.
func (p *productionFiles) pools(c *cluster.Config) error {
	if !p.pd {
		return nil
	}
	note, err := production.DefaultPools(c)
	if err != nil {
		return fmt.Errorf("--epp-config %s: %v", p.eppPath, err)
	}
	if note != "" {
		p.notes = append(p.notes, p.eppPath+": "+note)
	}
	return nil
}
