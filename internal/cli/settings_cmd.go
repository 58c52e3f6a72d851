package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"optimize/search"
	"optimize/strategies/settings"
)

// settingJSON is one row of `template settings --output json`.
type settingJSON struct {
	Key       string      `json:"key"`
	Flag      string      `json:"flag"`
	Kind      string      `json:"kind"`
	Range     *[2]float64 `json:"range,omitempty"`
	Choices   []string    `json:"choices,omitempty"`
	Default   string      `json:"default"`
	Unit      string      `json:"unit,omitempty"`
	Component string      `json:"component"`
	Active    string      `json:"active"`
	Doc       string      `json:"doc"`
	// Production is the setting's llm-d or vLLM counterpart, from the
	// settings table's production column (what study export --format
	// llm-d writes and MAPPING.md reports).
	Production productionJSON `json:"production"`
}

type productionJSON struct {
	System   string `json:"system,omitempty"` // llm-d, vllm, or none
	Name     string `json:"name,omitempty"`   // plugin type or vLLM argument
	Param    string `json:"param,omitempty"`  // plugin parameter, or weight
	Fidelity string `json:"fidelity"`         // exact, approximated, no counterpart, world
	Note     string `json:"note,omitempty"`
}

// productionText is the counterpart in a few words, e.g. "vllm
// --max-num-seqs (exact)" or "llm-d queue-scorer weight (exact)".
func productionText(c settings.Counterpart) string {
	if c.System == "" {
		return c.Fidelity.String()
	}
	words := c.System
	for _, w := range []string{c.Name, c.Param} {
		if w != "" && !strings.HasSuffix(words, " "+w) {
			words += " " + w
		}
	}
	if len(c.Values) == 0 {
		return words + " (" + c.Fidelity.String() + ")"
	}
	by := make([]string, len(c.Values))
	for i, v := range c.Values {
		by[i] = v.Value + ": " + v.Fidelity.String()
	}
	return words + " (" + strings.Join(by, ", ") + ")"
}

func newSettingsCommand(s Streams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "settings",
		Aliases: []string{"knobs"}, // the command's first name, kept
		Short:   "List every simulator setting: key, flag, values, default, component and when it has an effect",
		Long: `List every simulator setting from the one settings table: its key (as
templates, a parameter's setting field and simulate --set name it), the simulate flag
that sets it, the values it accepts, its default, the component an
ablation reverts it with, its production counterpart (the llm-d
plugin parameter or vLLM argument, and whether it carries over exactly,
approximately, not at all, or is the world), and when it has an effect
given the other settings. --model, --hardware and --tp choose a latency profile, which
sets latency.* and kv.total_blocks.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			switch output {
			case "json":
				return writeIndented(s.Out, settingsJSON())
			case "text":
				return failed(writeSettings(s.Out))
			}
			return checkOutput(output) // "text" and "json" returned above
		},
	}
	cmd.Flags().StringVar(&output, "output", "text", "text or json")
	return cmd
}

func settingsJSON() []settingJSON {
	var out []settingJSON
	for _, k := range settings.All() {
		row := settingJSON{Key: k.Key, Flag: k.FlagText(), Kind: string(k.Kind), Default: k.Default(), Unit: k.Unit,
			Component: k.Component, Active: k.Active.Describe(), Doc: k.Doc,
			Production: productionJSON{System: k.Production.System, Name: k.Production.Name, Param: k.Production.Param,
				Fidelity: k.Production.Fidelity.String(), Note: k.Production.Note}}
		if k.Kind == search.Categorical {
			row.Choices = k.Choices
		} else {
			row.Range = &[2]float64{k.Low, k.High}
		}
		out = append(out, row)
	}
	return out
}

func writeSettings(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tFLAG\tVALUES\tDEFAULT\tCOMPONENT\tPRODUCTION\tHAS AN EFFECT")
	for _, k := range settings.All() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.Key, k.FlagText(), k.ValuesText(), k.Default(), k.Component,
			productionText(k.Production), k.Active.Describe())
	}
	return tw.Flush()
}
