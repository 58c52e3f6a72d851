package plot

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"optimize/search"
	"optimize/strategies"
	"optimize/studies/report"
)

//go:embed study_report.html.tmpl
var reportTemplate string

var reportPage = template.Must(template.New("report").Parse(reportTemplate))

// page is what the report template shows; every string from storage or a
// template file is escaped by html/template, the SVGs are gonum's output
// (whose text vgsvg escapes) with the XML prolog and namespaces removed.
type page struct {
	Name, Template, State, Workload, Seeds, Sampler, Created string
	World, TunesWorld                                        string // the study's world; the world settings the template tunes, or ""
	Complete, Total, Running, Rescued, Pruned                int
	Description, Base, TemplateWorkload                      string
	Mechanism, Params, Objectives                            table
	Constraints                                              []string
	Headline                                                 *headlineView
	Best                                                     *bestView
	Plots                                                    []plotView
	PlotError                                                string
	Robust                                                   *robustView // a robust study's best trial per scenario, or nil
	Validations                                              []*validationView
	MaxRate                                                  *maxRateView // the latest validate --max-rate, or nil
	Ablation                                                 *ablationView
}

// table is a header and rows of cells; Num marks the numeric columns
// (right-aligned).
type table struct {
	Head []string
	Num  []bool
	Rows [][]string
}

type bestView struct {
	Trial                  int
	Table, Params          table
	Seeds                  []string // per objective, on how many seeds it beats the baseline
	Pareto                 int
	Hypervolume, Reference string
	Violates               string // Report.ViolationSentence as a sentence, or ""
	// World is the best trial's world and Worlds each Pareto trial's,
	// when the template tunes the world ("" and no rows otherwise).
	World  string
	Worlds table
}

type plotView struct {
	Kind, Caption string
	SVG           template.HTML
}

type validationView struct {
	Command, Ran   string // the request's command and when it last ran ("" for a fresh one)
	Seeds, Missing string
	Windows        string // the held-out windows of a trace study, else ""
	Candidates     []candidateView
	Worlds         []worldView // `validate --world`: one block per world
	Regimes        table
	RegimeDocs     table
	Verdicts       []report.VerdictRule // nil when an earlier section stated the same rule
}

type worldView struct {
	Title      string
	Candidates []candidateView
}

type candidateView struct {
	Trial   int
	Verdict report.Verdict
	Detail  string
	Holds   bool
	Table   table
}

type ablationView struct {
	Trial               int
	Ran, Seeds, Missing string
	Full                []string
	Components          table
}

// captions say what each picture shows, in the report.
var captions = map[string]string{
	"history":     "Each trial's primary objective in the order the trials ran; crosses violate a constraint. The line is the best value so far among the trials that meet every constraint (it starts at the first such trial and never gets worse), the dashed line the baseline.",
	"hypervolume": "The volume the Pareto front dominates, objectives as ratios to the baseline, up to twice as bad as the baseline on every axis; it grows when a trial within the constraints enlarges the front.",
	"pareto":      "Two of the objectives; the highlighted trials are the Pareto front over all objectives among the trials that meet every constraint, so some may look dominated in these two.",
	"parallel":    "One horizontal axis per parameter, the most important on top, each spanning the parameter's range (a log scale for log-float, categoricals by choice); each trial is a line down through the axes, coloured by its rank on the primary objective from blue (best) to orange (worst); inactive parameters are skipped.",
	"importance":  "How much of the variation in the trials' score ranks each parameter explains on its own (a ranking, not an exact decomposition).",
}

// HTML writes the study as one self-contained page: inline CSS and SVG,
// no script, no reference to anything outside the file.
func HTML(w io.Writer, r *report.Report) error {
	tpl := r.Template
	pg := page{
		Name: r.Study.Name, Template: r.Study.Template, State: r.State(), Workload: r.Study.Workload,
		Seeds: report.SeedList(r.Seeds), Sampler: fmt.Sprintf("%s (seed %d)", r.Study.Sampler, r.Study.SamplerSeed),
		Created:  r.Study.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"),
		Complete: len(r.Complete), Total: r.Study.TrialsTotal, Running: r.Running, Rescued: r.Failed, Pruned: len(r.Pruned),
		Description: tpl.Description, Base: tpl.Base, TemplateWorkload: tpl.Workload,
		World: r.WorldText(), TunesWorld: strings.Join(tpl.TunedWorld(), ", "),
	}
	pg.Mechanism = table{Head: []string{"setting", "value", "set by"}}
	for _, m := range tpl.Mechanism() {
		pg.Mechanism.Rows = append(pg.Mechanism.Rows, []string{m.SettingKey, m.Value, m.From})
	}
	pg.Params = table{Head: []string{"parameter", "type", "range", "default", "setting", "sampled"}}
	for _, p := range tpl.Params {
		when := "always"
		if p.When != nil {
			when = fmt.Sprintf("when %s is %s", p.When.Param, strings.Join(p.When.Choices, " or "))
		}
		pg.Params.Rows = append(pg.Params.Rows, []string{p.Name, string(p.Kind), p.RangeText(), p.Format(p.Default), p.Tunes(), when})
	}
	pg.Objectives = table{Head: []string{"objective", "direction", "metric", "unit", ""}}
	for i, o := range tpl.Objectives {
		dir, prim := "maximize", ""
		if o.Minimize {
			dir = "minimize"
		}
		if i == tpl.Primary {
			prim = "primary"
		}
		pg.Objectives.Rows = append(pg.Objectives.Rows, []string{o.Name, dir, o.Metric, strategies.MetricUnit(o.Metric), prim})
	}
	for _, c := range tpl.Constraints {
		pg.Constraints = append(pg.Constraints, report.ConstraintWords(c))
	}
	pg.Headline = headline(r)
	if r.Best >= 0 {
		pg.Best = best(r)
		for _, kind := range Kinds {
			svg, err := inlineSVG(r, kind)
			if err != nil {
				pg.PlotError = err.Error()
				continue
			}
			pg.Plots = append(pg.Plots, plotView{Kind: kind, Caption: captions[kind], SVG: svg})
		}
	}
	pg.Robust = robust(r)
	if r.MaxRate != nil {
		pg.MaxRate = maxRate(r.MaxRate)
	}
	ruled := map[int]bool{}
	for _, val := range r.LatestValidations() {
		v := validation(val, tpl)
		if ruled[len(val.Seeds)] {
			v.Verdicts = nil
		}
		ruled[len(val.Seeds)] = true
		pg.Validations = append(pg.Validations, v)
	}
	if r.Ablation != nil {
		pg.Ablation = ablation(r.Ablation, tpl)
	}
	return reportPage.Execute(w, pg)
}

// best is the baseline-against-best section.
func best(r *report.Report) *bestView {
	b := &r.Complete[r.Best]
	v := &bestView{Trial: b.Number, Pareto: len(r.Pareto), Hypervolume: strconv.FormatFloat(r.Hypervolume, 'f', 4, 64),
		Reference: strconv.FormatFloat(report.HypervolumeReference, 'f', 1, 64)}
	v.Table = table{Head: []string{"metric", "unit", "baseline", fmt.Sprintf("best (trial %d)", b.Number), "Δ", "best, seed range"},
		Num: []bool{false, false, true, true, true, true}}
	if s := r.ViolationSentence(b); s != "" {
		v.Violates = strings.ToUpper(s[:1]) + s[1:] + "."
	}
	for _, row := range r.Table() {
		v.Table.Rows = append(v.Table.Rows, []string{row.Name, row.Unit, report.Human(row.Baseline), report.Human(row.Best), pct(row.Delta),
			report.Human(row.Seeds.Min) + " – " + report.Human(row.Seeds.Max)})
	}
	for _, o := range r.Template.Objectives {
		v.Seeds = append(v.Seeds, r.SeedVerdict(b, o))
	}
	if r.TunesWorld() {
		v.World = r.TrialWorld(b).String()
		v.Worlds = paretoWorlds(r)
	}
	v.Params = table{Head: []string{"parameter", "best value", "importance"}, Num: []bool{false, true, true}}
	imp := r.Importance()
	for i, p := range r.Template.Params {
		val := "inactive"
		switch {
		case b.Params[i].Absent():
		case p.Kind == search.Categorical || p.Kind == search.Int:
			val = p.Format(b.Params[i])
		default:
			val = strconv.FormatFloat(b.Params[i].Number, 'g', 6, 64)
		}
		v.Params.Rows = append(v.Params.Rows, []string{p.Name, val, strconv.FormatFloat(imp[i], 'f', 2, 64)})
	}
	return v
}

// paretoWorlds is each Pareto trial's world and objectives: with the
// world tuned, the front is a choice between clusters.
func paretoWorlds(r *report.Report) table {
	t := table{Head: []string{"trial", "model", "GPU", "TP", "latency model", "instances", "KV blocks per instance"},
		Num: []bool{true, false, false, true, false, true, true}}
	for _, o := range r.Template.Objectives {
		head := o.Name
		if unit := strategies.MetricUnit(o.Metric); unit != "" {
			head += " (" + unit + ")"
		}
		t.Head, t.Num = append(t.Head, head), append(t.Num, true)
	}
	for _, i := range r.Pareto {
		c := &r.Complete[i]
		w := r.TrialWorld(c)
		row := []string{strconv.Itoa(c.Number), w.Model, w.GPU, strconv.Itoa(w.TP), w.LatencyModel, strconv.Itoa(w.Instances), strconv.FormatInt(w.KVBlocks, 10)}
		for _, v := range c.Objectives {
			row = append(row, report.Human(v))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func validation(val *report.Validation, tpl *strategies.Template) *validationView {
	v := &validationView{Command: "study " + val.Kind.Command(), Seeds: report.SeedList(val.Seeds), Verdicts: val.Verdicts}
	if val.Windows {
		v.Windows = val.HeldOut()
	}
	if val.RanAt != nil {
		v.Ran = report.RanText(*val.RanAt)
	}
	if val.Missing > 0 {
		v.Missing = fmt.Sprintf("Incomplete: %d simulations not run yet (run study validate again to finish).", val.Missing)
	}
	v.Candidates = candidates(val.Candidates, tpl, val.Unit())
	for _, w := range val.Worlds {
		v.Worlds = append(v.Worlds, worldView{Title: w.Title(), Candidates: candidates(w.Candidates, tpl, val.Unit())})
	}
	if len(val.Regimes) > 0 {
		prim := tpl.Objectives[tpl.Primary].Name
		v.Regimes = table{Head: []string{"regime", "trial", prim + " held out [95% CI]", "better on", "verdict"}, Num: []bool{false, true, true, true, false}}
		v.RegimeDocs = table{Head: []string{"regime", "what changes"}}
		for _, rg := range val.Regimes {
			for _, c := range rg.Candidates {
				e := c.Objectives[prim]
				v.Regimes.Rows = append(v.Regimes.Rows, []string{rg.Name, strconv.Itoa(c.Trial),
					fmt.Sprintf("%s [%s, %s]", pct(float64(e.HeldOutDelta)), pct(float64(e.CI95[0])), pct(float64(e.CI95[1]))),
					fmt.Sprintf("%d/%d", e.BetterOnSeeds, e.Seeds), c.VerdictText()})
			}
			v.RegimeDocs.Rows = append(v.RegimeDocs.Rows, []string{rg.Name, rg.Doc})
		}
	}
	return v
}

// candidates are each candidate's verdict and its table of objectives.
func candidates(cands []report.CandidateEvidence, tpl *strategies.Template, unit string) []candidateView {
	var out []candidateView
	for _, c := range cands {
		cv := candidateView{Trial: c.Trial, Verdict: c.Verdict, Detail: c.Detail, Holds: c.Verdict.Holds(),
			Table: table{Head: []string{"objective", "in study", "held out", "95% CI", "better on"}, Num: []bool{false, true, true, true, true}}}
		for _, o := range tpl.Objectives {
			e := c.Objectives[o.Name]
			cv.Table.Rows = append(cv.Table.Rows, []string{o.Name, pct(float64(e.InStudyDelta)), pct(float64(e.HeldOutDelta)),
				fmt.Sprintf("[%s, %s]", pct(float64(e.CI95[0])), pct(float64(e.CI95[1]))), fmt.Sprintf("%d/%d %ss", e.BetterOnSeeds, e.Seeds, unit)})
		}
		out = append(out, cv)
	}
	return out
}

func ablation(a *report.Ablation, tpl *strategies.Template) *ablationView {
	v := &ablationView{Trial: a.Trial, Seeds: report.SeedList(a.Seeds)}
	if a.RanAt != nil {
		v.Ran = report.RanText(*a.RanAt)
	}
	if a.Missing > 0 {
		v.Missing = fmt.Sprintf("Incomplete: %d variants not run yet (run study ablate again to finish).", a.Missing)
	}
	for _, o := range tpl.Objectives {
		line := fmt.Sprintf("%s: full strategy %s", o.Name, pct(float64(a.Full[o.Name])))
		if x, ok := a.Interaction[o.Name]; ok {
			line += fmt.Sprintf(", interaction (full − Σ add-one) %s", pct(float64(x)))
		}
		v.Full = append(v.Full, line)
	}
	prim := tpl.Objectives[tpl.Primary].Name
	v.Components = table{Head: []string{"component", "without it", "it alone", "contribution (" + prim + ")", "restores"},
		Num: []bool{false, true, true, true, false}}
	for _, c := range a.Components {
		v.Components.Rows = append(v.Components.Rows, []string{c.Name, pct(float64(c.LeaveOneOut[prim])), pct(float64(c.AddOne[prim])),
			pct(float64(c.Contribution[prim])), settings(c.Settings)})
	}
	return v
}

// svgProlog matches what an inline SVG does not need: the XML declaration,
// gonum's comment, the namespace declarations and the fixed size (the
// viewBox scales it to the page).
var svgProlog = regexp.MustCompile(`<\?xml[^>]*\?>\s*|<!--[^>]*-->\s*|\s+xmlns(:\w+)?="[^"]*"|\s(width|height)="[\d.]+pt"`)

// inlineSVG draws kind as an SVG element fit for an HTML page.
func inlineSVG(r *report.Report, kind string) (template.HTML, error) {
	p, err := Make(r, kind, "", "")
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := Write(&buf, p, "svg"); err != nil {
		return "", err
	}
	svg := svgProlog.ReplaceAllString(buf.String(), "")
	svg = strings.Replace(svg, "<svg", fmt.Sprintf(`<svg role="img" aria-label="%s"`, template.HTMLEscapeString(p.Title.Text)), 1)
	if strings.Contains(svg, "://") {
		return "", fmt.Errorf("the %s plot refers to a URL", kind)
	}
	return template.HTML(svg), nil // gonum's output; vgsvg escapes every text it draws
}

func pct(d float64) string {
	if math.IsNaN(d) {
		return "–"
	}
	return fmt.Sprintf("%+.1f%%", 100*d)
}

// settings renders "k=v k=v" in key order.
func settings(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for k, v := range m {
		parts = append(parts, k+"="+v)
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}
