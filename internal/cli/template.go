package cli

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"optimize/simcore/errtext"
	"optimize/strategies"
	"optimize/strategies/workloads"
)

func newTemplateCommand(s Streams, templatesDir *string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "template",
		Short: "List and inspect strategy templates",
		Args:  cobra.NoArgs,
		RunE:  showHelp,
	}
	cmd.AddCommand(
		newTemplateList(s, templatesDir),
		newTemplateShow(s, templatesDir),
		newSettingsCommand(s),
	)
	return cmd
}

// loadRegistry loads the built-in templates and, when dir is not empty,
// the user's. A broken built-in is a runtime failure (exit 1); a broken
// user template is the user's input (exit 2).
func loadRegistry(dir string) (*strategies.Registry, error) {
	reg, err := strategies.Builtin()
	if err != nil {
		return nil, failed(err)
	}
	if dir != "" {
		if err := reg.AddDir(dir); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

func writeTemplateList(w io.Writer, reg *strategies.Registry) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tWORKLOAD\tPARAMS\tDESCRIPTION")
	for _, t := range reg.Templates() {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", t.Name, t.Workload, len(t.Params), firstSentence(t.Description))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(reg.Broken()) > 0 {
		fmt.Fprintln(w, "\nNot loaded (the templates above work without them):")
		writeBroken(w, reg, "  ")
	}
	return nil
}

// writeBroken names each --templates-dir file that did not load, with its
// one-line error, one per line.
func writeBroken(w io.Writer, reg *strategies.Registry, indent string) {
	for _, b := range reg.Broken() {
		fmt.Fprintf(w, "%s%s\n", indent, errtext.OneLine(b.Err.Error()))
	}
}

// firstSentence is the text up to the first full stop followed by a space.
func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

func writeTemplate(w io.Writer, t *strategies.Template) error {
	fmt.Fprintf(w, "%s (%s)\n", t.Name, t.File)
	if t.Base != "" {
		fmt.Fprintf(w, "base: %s\n", t.Base)
	}
	fmt.Fprintf(w, "workload: %s\n", t.Workload)
	if world, err := t.World(); err == nil {
		fmt.Fprintf(w, "world: %s\n", world)
	}
	if tuned := t.TunedWorld(); len(tuned) > 0 {
		fmt.Fprintf(w, "tunes the world: %s (each trial runs in the world its parameters give)\n", strings.Join(tuned, ", "))
	} else {
		fmt.Fprintln(w, "tunes the world: no (every trial runs in this world)")
	}
	if t.Sampler != "" {
		fmt.Fprintf(w, "sampler: %s (its studies' default; --sampler overrides)\n", t.Sampler)
	}
	fmt.Fprintf(w, "\n%s\n", wrap(t.Description, 78))

	fmt.Fprintln(w, "\nMechanism:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, m := range t.Mechanism() {
		fmt.Fprintf(tw, "  %s\t%s\t(%s)\n", m.SettingKey, m.Value, m.From) // the last cell is not padded
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(w, "\nParameters:")
	if len(t.Params) == 0 {
		fmt.Fprintln(w, "  none")
	}
	// Every row has the condition cell, empty or not, so that the
	// conditions line up in one column; the padding this leaves at the end
	// of unconditional rows is trimmed.
	var params bytes.Buffer
	tw = tabwriter.NewWriter(&params, 0, 0, 2, ' ', 0)
	for _, p := range t.Params {
		when := ""
		if p.When != nil {
			when = fmt.Sprintf("only when %s is %s", p.When.Param, strings.Join(p.When.Choices, " or "))
		}
		space := p.RangeText()
		if g := p.GridText(); g != "" {
			space += " (" + g + ")"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\tdefault %s\t→ %s\t%s\n", p.Name, p.Kind, space, p.Format(p.Default), p.Tunes(), when)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, line := range strings.SplitAfter(params.String(), "\n") {
		if line != "" {
			fmt.Fprintln(w, strings.TrimRight(line, " \n"))
		}
	}

	fmt.Fprintln(w, "\nObjectives:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for i, o := range t.Objectives {
		direction := "maximize"
		if o.Minimize {
			direction = "minimize"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s", o.Name, direction, o.Metric)
		if i == t.Primary {
			fmt.Fprint(tw, "\t(primary)")
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(w, "\nConstraints:")
	if len(t.Constraints) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, c := range t.Constraints {
		fmt.Fprintf(w, "  %s\n", c.Words())
	}

	fmt.Fprintln(w, "\nRegimes (study validate --regimes):")
	if len(t.Regimes) == 0 {
		fmt.Fprintln(w, "  none")
	}
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, name := range t.Regimes {
		r, _ := workloads.LookupRegime(name)
		fmt.Fprintf(tw, "  %s\t%s\n", name, r.Doc)
	}
	return tw.Flush()
}

// wrap breaks text into lines of at most width columns.
func wrap(text string, width int) string {
	var b strings.Builder
	line := 0
	for _, word := range strings.Fields(text) {
		if line > 0 && line+1+len([]rune(word)) > width {
			b.WriteByte('\n')
			line = 0
		} else if line > 0 {
			b.WriteByte(' ')
			line++
		}
		b.WriteString(word)
		line += len([]rune(word))
	}
	return b.String()
}

func newTemplateList(s Streams, templatesDir *string) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the strategy templates (built-in and --templates-dir)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			reg, err := loadRegistry(*templatesDir)
			if err != nil {
				return err
			}
			if output == "json" {
				// The list keeps GET /api/templates' shape; the files
				// that did not load are said on stderr.
				writeBroken(s.Err, reg, "not loaded: ")
				list := []strategies.TemplateSummary{}
				for _, t := range reg.Templates() {
					list = append(list, t.Summary())
				}
				return writeIndented(s.Out, list)
			}
			return failed(writeTemplateList(s.Out, reg))
		},
	}
	cmd.Flags().StringVar(&output, "output", "text", "text or json")
	return cmd
}

func newTemplateShow(s Streams, templatesDir *string) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Show a template's mechanism, parameters (and which depend on which choice), objectives, constraints and regimes",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			reg, err := loadRegistry(*templatesDir)
			if err != nil {
				return err
			}
			t, err := reg.Get(args[0])
			if err != nil {
				return err
			}
			if output == "json" {
				return writeIndented(s.Out, t.JSON())
			}
			return failed(writeTemplate(s.Out, t))
		},
	}
	cmd.Flags().StringVar(&output, "output", "text", "text or json")
	return cmd
}
