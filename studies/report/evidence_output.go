package report

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"optimize/strategies"
)

// WriteText prints a validation: per candidate its verdict with the
// figures behind it and one row per objective; then the regimes; then the
// rule the verdicts follow.
func (v *Validation) WriteText(w io.Writer, tpl *strategies.Template) {
	v.writeText(w, tpl, true)
}

// writeText is WriteText, with the rule or without it (`show` states it
// once for each number of seeds).
func (v *Validation) writeText(w io.Writer, tpl *strategies.Template, rule bool) {
	unit := v.Unit()
	if v.Windows {
		fmt.Fprintf(w, "Held-out validation: %s — %d windows later in the trace than any the study replayed, paired window by window with the baseline\n", v.HeldOut(), len(v.Seeds))
	} else {
		fmt.Fprintf(w, "Held-out validation: %s (%d, paired seed by seed with the baseline)\n", v.HeldOut(), len(v.Seeds))
	}
	if v.RanAt != nil {
		fmt.Fprintf(w, "  latest `study %s`, ran %s\n", v.Kind.Command(), RanText(*v.RanAt))
	}
	if v.Missing > 0 {
		fmt.Fprintf(w, "  incomplete: %d simulations not run yet (run study validate again to finish)\n", v.Missing)
	}
	writeCandidates(w, v.Candidates, tpl, unit, "  ")
	for _, wd := range v.Worlds {
		fmt.Fprintf(w, "  %s:\n", wd.Title())
		writeCandidates(w, wd.Candidates, tpl, unit, "    ")
	}
	prim := tpl.Objectives[tpl.Primary].Name
	if len(v.Regimes) > 0 {
		fmt.Fprintf(w, "Regimes (same %ss; %s against the baseline at each):\n", unit, prim)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  regime\ttrial\theld out [95% CI]\tbetter on\tverdict")
		for _, rg := range v.Regimes {
			for _, c := range rg.Candidates {
				e := c.Objectives[prim]
				fmt.Fprintf(tw, "  %s\t%d\t%s\t%d/%d\t%s\n", rg.Name, c.Trial, e.Interval(), e.BetterOnSeeds, e.Seeds, c.VerdictText())
			}
		}
		tw.Flush()
		fmt.Fprintln(w, "  where:")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, rg := range v.Regimes {
			fmt.Fprintf(tw, "    %s\t%s\n", rg.Name, rg.Doc)
		}
		tw.Flush()
	}
	if rule {
		fmt.Fprintf(w, "Verdicts on %s, %d held-out %ss:\n", prim, len(v.Seeds), unit)
		for _, r := range v.Verdicts {
			fmt.Fprintf(w, "  %s: %s\n", r.Verdict, r.When)
		}
	}
}

// writeCandidates prints each candidate's verdict with the figures behind
// it and one row per objective, indented by indent.
func writeCandidates(w io.Writer, cands []CandidateEvidence, tpl *strategies.Template, unit, indent string) {
	for _, c := range cands {
		fmt.Fprintf(w, "%strial %d: %s — %s\n", indent, c.Trial, c.Verdict, c.Detail)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "%s  objective\tin study\theld out\t95%% CI\tbetter on\t\n", indent)
		for _, o := range tpl.Objectives {
			e := c.Objectives[o.Name]
			fmt.Fprintf(tw, "%s  %s\t%s\t%s\t[%s, %s]\t%d/%d %ss\t\n", indent, o.Name, Percent(float64(e.InStudyDelta)), Percent(float64(e.HeldOutDelta)),
				Percent(float64(e.CI95[0])), Percent(float64(e.CI95[1])), e.BetterOnSeeds, e.Seeds, unit)
		}
		tw.Flush()
	}
}

// WriteText prints an ablation: per component the primary objective's
// change with the component left out and with it alone, and its share.
func (a *Ablation) WriteText(w io.Writer, tpl *strategies.Template) {
	fmt.Fprintf(w, "Ablation of trial %d (seeds %s; Δ against the baseline):\n", a.Trial, SeedList(a.Seeds))
	if a.RanAt != nil {
		fmt.Fprintf(w, "  latest `study ablate`, ran %s\n", RanText(*a.RanAt))
	}
	if a.Missing > 0 {
		fmt.Fprintf(w, "  incomplete: %d variants not run yet (run study ablate again to finish)\n", a.Missing)
	}
	for _, o := range tpl.Objectives {
		fmt.Fprintf(w, "  %s: full strategy %s", o.Name, Percent(float64(a.Full[o.Name])))
		if v, ok := a.Interaction[o.Name]; ok {
			fmt.Fprintf(w, ", interaction (full − Σ add-one) %s", Percent(float64(v)))
		}
		fmt.Fprintln(w)
	}
	prim := tpl.Objectives[tpl.Primary].Name
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  component\twithout it\tit alone\tcontribution (%s)\trestores\n", prim)
	for _, c := range a.Components {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", c.Name, Percent(float64(c.LeaveOneOut[prim])), Percent(float64(c.AddOne[prim])),
			Percent(float64(c.Contribution[prim])), settingsText(c.Settings))
	}
	tw.Flush()
}

// writeEvidence prints the latest validation of each kind, stating the
// verdicts' rule once for each number of seeds, the latest ablation, and
// every stored request.
func (r *Report) writeEvidence(w io.Writer) {
	if r.EvidenceError != "" {
		fmt.Fprintf(w, "\nstored evidence could not be rebuilt: %s\n", r.EvidenceError)
	}
	type rule struct {
		n    int
		unit string
	}
	ruled := map[rule]bool{}
	for _, v := range r.LatestValidations() {
		fmt.Fprintln(w)
		k := rule{len(v.Seeds), v.Unit()}
		v.writeText(w, r.Template, !ruled[k])
		ruled[k] = true
	}
	if r.Ablation != nil {
		fmt.Fprintln(w)
		r.Ablation.WriteText(w, r.Template)
	}
	if r.MaxRate != nil {
		fmt.Fprintln(w)
		r.MaxRate.WriteText(w)
	}
	if len(r.EvidenceRuns) == 0 {
		return
	}
	fmt.Fprintf(w, "\nEvidence runs (%d, oldest first; each kept):\n", len(r.EvidenceRuns))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, run := range r.EvidenceRuns {
		what := "trial " + strings.Join(intStrings(run.Trials), ",")
		if len(run.Seeds) > 0 {
			what += ", seeds " + SeedList(run.Seeds)
		}
		if len(run.Regimes) > 0 {
			what += ", regimes " + strings.Join(run.Regimes, ",")
		}
		if len(run.Worlds) > 0 {
			what += ", worlds " + strings.Join(run.Worlds, "; ")
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", RanText(run.RanAt), run.Kind.Command(), what)
	}
	tw.Flush()
}

func intStrings(xs []int) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = strconv.Itoa(x)
	}
	return out
}

// settingsText renders "k=v k=v" in key order.
func settingsText(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, " ")
}

// SeedList renders seeds compactly: "100–109" for a run of three or
// more, else "1,5,9" (the text output and the HTML report alike).
func SeedList(seeds []int64) string {
	contiguous := len(seeds) > 2
	for i := 1; i < len(seeds) && contiguous; i++ {
		contiguous = seeds[i] == seeds[i-1]+1
	}
	if contiguous {
		return fmt.Sprintf("%d–%d", seeds[0], seeds[len(seeds)-1])
	}
	parts := make([]string, len(seeds))
	for i, s := range seeds {
		parts[i] = strconv.FormatInt(s, 10)
	}
	return strings.Join(parts, ",")
}

// ExportValidation writes the validation as JSON (the validate document)
// or CSV: one row per regime ("study" for the held-out seeds of the
// study's own workload), trial and objective; a validation in other
// worlds adds a last column, world: the world settings given.
func (v *Validation) Export(w io.Writer, format string, tpl *strategies.Template) error {
	switch format {
	case "json":
		return WriteJSON(w, v)
	case "csv":
		cw := csv.NewWriter(w)
		head := []string{"regime", "trial", "objective", "in_study_delta", "held_out_delta", "ci95_low", "ci95_high", "better_on_seeds", "seeds", "overfit", "verdict"}
		if len(v.Worlds) > 0 {
			head = append(head, "world")
		}
		_ = cw.Write(head)
		write := func(regime string, cands []CandidateEvidence, world ...string) {
			for _, c := range cands {
				for _, o := range tpl.Objectives {
					e := c.Objectives[o.Name]
					_ = cw.Write(append([]string{regime, strconv.Itoa(c.Trial), o.Name, numCell(e.InStudyDelta), numCell(e.HeldOutDelta),
						numCell(e.CI95[0]), numCell(e.CI95[1]), strconv.Itoa(e.BetterOnSeeds), strconv.Itoa(e.Seeds), strconv.FormatBool(c.Overfit), string(c.Verdict)}, world...))
				}
			}
		}
		write("study", v.Candidates)
		for _, rg := range v.Regimes {
			write(rg.Name, rg.Candidates)
		}
		for _, wd := range v.Worlds {
			regime := "study"
			if wd.Regime != "" {
				regime = wd.Regime
			}
			write(regime, wd.Candidates, wd.Given)
		}
		cw.Flush()
		return cw.Error()
	}
	return tableFormat(format, "validations")
}

// Export writes the ablation as JSON (the ablate document) or CSV: one row
// per component and objective, then the full strategy and the interaction.
func (a *Ablation) Export(w io.Writer, format string, tpl *strategies.Template) error {
	switch format {
	case "json":
		return WriteJSON(w, a)
	case "csv":
		cw := csv.NewWriter(w)
		_ = cw.Write([]string{"trial", "component", "objective", "leave_one_out", "add_one", "contribution", "settings"})
		for _, c := range a.Components {
			for _, o := range tpl.Objectives {
				_ = cw.Write([]string{strconv.Itoa(a.Trial), c.Name, o.Name, numCell(c.LeaveOneOut[o.Name]), numCell(c.AddOne[o.Name]),
					numCell(c.Contribution[o.Name]), settingsText(c.Settings)})
			}
		}
		for _, o := range tpl.Objectives {
			_ = cw.Write([]string{strconv.Itoa(a.Trial), "(full)", o.Name, "", "", numCell(a.Full[o.Name]), ""})
		}
		for _, o := range tpl.Objectives {
			if v, ok := a.Interaction[o.Name]; ok {
				_ = cw.Write([]string{strconv.Itoa(a.Trial), "(interaction)", o.Name, "", "", numCell(v), ""})
			}
		}
		cw.Flush()
		return cw.Error()
	}
	return tableFormat(format, "ablations")
}

func numCell(n Num) string { return CSVNumber(float64(n)) }

// ErrNoEvidence is ExportEvidence's answer for a study that has no
// evidence of the kind asked for yet.
var ErrNoEvidence = errors.New("no evidence yet")

// ExportEvidence writes the stored validation or ablation as Export does;
// LoadEvidence must have run.
func (r *Report) ExportEvidence(w io.Writer, kind Evidence, format string) error {
	name := r.Study.Name
	switch {
	case kind == EvidenceValidation && r.Validation != nil:
		return r.Validation.Export(w, format, r.Template)
	case kind == EvidenceAblation && r.Ablation != nil:
		return r.Ablation.Export(w, format, r.Template)
	case kind == EvidenceValidation:
		return fmt.Errorf("%w: study %s has no validation yet (run optimize study validate %s)", ErrNoEvidence, name, name)
	case kind == EvidenceAblation:
		return fmt.Errorf("%w: study %s has no ablation yet (run optimize study ablate %s)", ErrNoEvidence, name, name)
	}
	return fmt.Errorf("evidence: %s has no export (allowed: %s, %s)", kind, EvidenceValidation, EvidenceAblation)
}
