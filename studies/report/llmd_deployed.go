package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"optimize/simcore/errtext"
	"optimize/simcore/metrics"
	"optimize/strategies"
	"optimize/strategies/production"
)

// What production gets of an exported trial: the llm-d export's
// EndpointPickerConfig and vLLM arguments read back as simulate
// --epp-config --vllm-args reads them, in the study's world and nothing
// else — none of the --set lines MAPPING.md's command adds for what the
// files carry only approximately or not at all — run on the study's
// workload and seeds (package studies runs it) and put beside the
// trial, both against the study's stored baseline. `study export
// --format llm-d` prints it and writes it near the top of MAPPING.md.

// DeployableLine is what study show says of a deployable study.
const DeployableLine = "deployable (study create --deployable): it searches only what production carries, and every trial runs as its exported llm-d and vLLM files carry it"

// Deployed is trial Trial as production gets it: its mean over the
// study's seeds, or Skipped saying why it was not run.
type Deployed struct {
	Trial   int
	Mean    metrics.Summary
	Skipped string
}

// DeployedRow is one objective of the trial and of what production gets
// of it, each against the baseline.
type DeployedRow struct {
	Name, Unit                string
	Minimize                  bool
	Baseline, Trial, Deployed float64
	TrialDelta, DeployedDelta float64 // relative changes (Delta)
}

// ExportedTrial is the trial an llm-d export writes: n when given, else
// the best.
func (r *Report) ExportedTrial(n int, given bool) (int, error) {
	if !given {
		best, ok := r.BestTrial()
		if !ok {
			return 0, errtext.Usage("--format %s: study %s has no complete trial yet", LLMDFormat, r.Study.Name)
		}
		return best, nil
	}
	if r.ByNumber(n) == nil {
		return 0, errtext.Usage("--trial: study %s has no complete trial %d", r.Study.Name, n)
	}
	return n, nil
}

// DeployedRows are the template's objectives, the primary first.
func (r *Report) DeployedRows(d *Deployed) []DeployedRow {
	c := r.ByNumber(d.Trial)
	if c == nil || d.Skipped != "" {
		return nil
	}
	order := []int{r.Template.Primary}
	for i := range r.Template.Objectives {
		if i != r.Template.Primary {
			order = append(order, i)
		}
	}
	var rows []DeployedRow
	for _, i := range order {
		o := r.Template.Objectives[i]
		b, _ := strategies.Metric(&r.Baseline, o.Metric)
		v, _ := strategies.Metric(&d.Mean, o.Metric)
		rows = append(rows, DeployedRow{Name: o.Name, Unit: strategies.MetricUnit(o.Metric), Minimize: o.Minimize,
			Baseline: b, Trial: c.Objectives[i], Deployed: v, TrialDelta: Delta(c.Objectives[i], b), DeployedDelta: Delta(v, b)})
	}
	return rows
}

// gain is a relative change as an improvement: positive is better.
func (row DeployedRow) gain(delta float64) float64 {
	if row.Minimize {
		return -delta
	}
	return delta
}

// DeployedWarning is the warning when production would be no better than
// the baseline on the primary objective, or would keep less than half of
// the trial's gain on it; "" otherwise.
func (r *Report) DeployedWarning(d *Deployed) string {
	rows := r.DeployedRows(d)
	if rows == nil {
		return ""
	}
	p := rows[0]
	trial, prod := p.gain(p.TrialDelta), p.gain(p.DeployedDelta)
	values := fmt.Sprintf("%s %s against the baseline's %s %s (%s; the trial's %s)", Human(p.Deployed), p.Unit, Human(p.Baseline), p.Unit, Percent(p.DeployedDelta), Percent(p.TrialDelta))
	switch {
	case prod < 0:
		return fmt.Sprintf("WARNING: as exported, production would be worse than the baseline on %s: %s; the trial's gain comes from what the files do not carry (%s lists it)", p.Name, values, MappingFile)
	case prod == 0 && trial > 0:
		return fmt.Sprintf("WARNING: as exported, production would be no better than the baseline on %s: %s; the trial's gain comes from what the files do not carry (%s lists it)", p.Name, values, MappingFile)
	case trial > 0 && prod < trial/2:
		return fmt.Sprintf("WARNING: as exported, production would lose most of the trial's gain on %s: %s; the rest comes from what the files do not carry (%s lists it)", p.Name, values, MappingFile)
	}
	return ""
}

// deployedIntro says what the deployable run is.
func (r *Report) deployedIntro(d *Deployed) string {
	return fmt.Sprintf("Trial %d as production gets it: %s, %s and %s (when written) alone, read as simulate --epp-config --vllm-args --objectives reads them, in the study's world, without the --set lines %s's \"Run it again\" adds for what they carry only approximately or not at all; workload %s, seeds %s, against the study's baseline.",
		d.Trial, EPPConfigFile, VLLMArgsFile, ObjectivesFile, MappingFile, r.Study.Workload, seedList(r.Seeds))
}

// WriteDeployed writes the comparison as text: what it is, one line per
// objective, the constraint production would miss and the warning.
func (r *Report) WriteDeployed(w io.Writer, d *Deployed) {
	if d.Skipped != "" {
		fmt.Fprintf(w, "trial %d as production gets it: not measured: %s\n", d.Trial, d.Skipped)
		return
	}
	fmt.Fprintln(w, r.deployedIntro(d))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "objective\tunit\tbaseline\ttrial %d\tΔ\tas deployed\tΔ\t\n", d.Trial)
	for _, row := range r.DeployedRows(d) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", row.Name, row.Unit, Human(row.Baseline), Human(row.Trial), Percent(row.TrialDelta), Human(row.Deployed), Percent(row.DeployedDelta))
	}
	tw.Flush()
	for _, line := range r.deployedNotes(d) {
		fmt.Fprintln(w, line)
	}
}

// deployedNotes are the constraint production would miss and the
// warning, each one line.
func (r *Report) deployedNotes(d *Deployed) []string {
	var out []string
	if missed := r.FailedConstraint(d.Mean, r.Baseline); missed != "" {
		out = append(out, "as deployed it misses "+missed)
	}
	if w := r.DeployedWarning(d); w != "" {
		out = append(out, w)
	}
	return out
}

// DeployedCommand is the simulate command line that runs what production
// gets of the trial: the files, the study's workload and seeds, and --set
// for the world's settings alone (production.WorldSets).
func (r *Report) DeployedCommand(d *Deployed) []string {
	out := []string{"optimize", "simulate", "--epp-config", EPPConfigFile, "--vllm-args", VLLMArgsFile}
	if c := r.ByNumber(d.Trial); c != nil {
		if cfg, err := r.TrialConfig(c); err == nil {
			out = simulateFiles(&cfg)
			if _, used := production.ClassPriorities(&cfg); used {
				out = append(out, "--objectives", ObjectivesFile)
			}
			out = append(out, "--workload", r.Study.Workload, "--seeds", seedList(r.Seeds))
			for _, kv := range append(production.WorldSets(&cfg), production.PDTPSets(&cfg)...) {
				out = append(out, "--set", kv)
			}
		}
	}
	return out
}

// deployedHeading opens MAPPING.md's last section, the command that runs
// what production gets.
const deployedHeading = "## Run what production gets"

// WithDeployed returns files with the comparison in MAPPING.md, a
// section after its opening paragraph, and the command that runs it, a
// section at its end (after the command that runs the trial again).
func (r *Report) WithDeployed(files []ExportFile, d *Deployed) []ExportFile {
	var b bytes.Buffer
	b.WriteString("## What production gets\n\n")
	if d.Skipped != "" {
		fmt.Fprintf(&b, "Trial %d as production gets it: not measured: %s.\n\n", d.Trial, d.Skipped)
	} else {
		fmt.Fprintf(&b, "%s\n\n", r.deployedIntro(d))
		fmt.Fprintf(&b, "| objective | baseline | trial %d | Δ | as deployed | Δ |\n|---|---|---|---|---|---|\n", d.Trial)
		for _, row := range r.DeployedRows(d) {
			unit := ""
			if row.Unit != "" {
				unit = " " + row.Unit
			}
			fmt.Fprintf(&b, "| %s | %s%s | %s%s | %s | %s%s | %s |\n", row.Name, Human(row.Baseline), unit, Human(row.Trial), unit, Percent(row.TrialDelta), Human(row.Deployed), unit, Percent(row.DeployedDelta))
		}
		if notes := r.deployedNotes(d); notes != nil {
			fmt.Fprintf(&b, "\n%s\n", strings.Join(notes, "\n\n"))
		}
		fmt.Fprintf(&b, "\nThe last section's command runs it.\n\n")
	}
	out := make([]ExportFile, len(files))
	copy(out, files)
	for i, f := range out {
		if f.Name != MappingFile {
			continue
		}
		text := string(f.Data)
		// After the title and the paragraph that names the files.
		at := 0
		for range 2 {
			if k := strings.Index(text[at:], "\n\n"); k >= 0 {
				at += k + 2
			}
		}
		text = text[:at] + b.String() + text[at:]
		if d.Skipped == "" {
			text += fmt.Sprintf("\n%s\n\nThe files and the world alone, as the section on what production gets ran them:\n\n```\n%s\n```\n",
				deployedHeading, strings.Join(r.DeployedCommand(d), " "))
		}
		out[i].Data = []byte(text)
	}
	return out
}
