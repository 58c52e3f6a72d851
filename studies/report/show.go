package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"optimize/search"
	"optimize/simcore"
	"optimize/simcore/metrics"
	"optimize/storage"
	"optimize/strategies"
)

// ShowJSON is `study show --output json`.
type ShowJSON struct {
	Name     string `json:"name"`
	Template string `json:"template"`
	WarmFrom string `json:"warm_from,omitempty"`
	State    string `json:"state"`
	// Failure is why the study's last run stopped before its total
	// (state "failed"): the error of the trial that stopped it.
	Failure        string `json:"failure,omitempty"`
	TrialsTotal    int    `json:"trials_total"`
	TrialsComplete int    `json:"trials_complete"`
	// TrialsPruned: a robust study's trials stopped early (--prune).
	TrialsPruned int `json:"trials_pruned,omitempty"`
	// TrialsFeasible counts the complete trials that meet every
	// constraint (until 2026-11-28 it was best.feasible, a count inside
	// the best trial's object).
	TrialsFeasible int `json:"trials_feasible"`
	// World is the world of the study's baseline (Report.World);
	// WorldAssumed says it is the seeds' world of a study stored before
	// studies recorded theirs; TunesWorld the world settings the template
	// tunes ([] for none: every trial ran in World).
	World        *WorldJSON      `json:"world"`
	WorldAssumed bool            `json:"world_assumed,omitempty"`
	TunesWorld   []string        `json:"tunes_world"`
	Baseline     metrics.Summary `json:"baseline"`
	// BaselineFrom are the production configs the baseline ran with
	// instead of the baseline template ("kind path"), absent for none.
	BaselineFrom []string `json:"baseline_from,omitempty"`
	// WorldFile is the world file the study runs in (study create
	// --world-file), absent for the built-in world; Settings the settings
	// given at create (--set KEY=VALUE), absent for none.
	WorldFile string   `json:"world_file,omitempty"`
	Settings  []string `json:"settings,omitempty"`
	// Deployable: the study searches only what production carries, each
	// trial run as its exported files carry it (study create
	// --deployable); absent for a study of the template's whole space.
	Deployable bool `json:"deployable,omitempty"`
	// Answer is a capacity study's answer (Report.CapacityAnswer), absent
	// for other studies.
	Answer      string      `json:"answer,omitempty"`
	Best        *BestJSON   `json:"best"`
	Pareto      []TrialJSON `json:"pareto"`
	Hypervolume float64     `json:"hypervolume"`
	// Importance is each parameter's share of the score's rank variance.
	Importance map[string]float64 `json:"importance"`
	// Scores are the two rules a trial is scored by (search.ScoreRules):
	// the stored score, which ranks the best trial, and the model-based samplers' ranking.
	Scores []search.ScoreRule `json:"scores"`
	// Validation is the latest validation of any kind, Validations the
	// latest of each kind, EvidenceRuns every request stored, oldest first.
	Validation    *Validation   `json:"validation,omitempty"`
	Ablation      *Ablation     `json:"ablation,omitempty"`
	EvidenceError string        `json:"evidence_error,omitempty"`
	Validations   []*Validation `json:"validations,omitempty"`
	EvidenceRuns  []EvidenceRun `json:"evidence_runs,omitempty"`
	// MaxRate is the latest `validate --max-rate`.
	MaxRate *MaxRate `json:"max_rate,omitempty"`
	// TraceWindows is the windows of a study on a replayed trace.
	TraceWindows *TraceWindows `json:"trace_windows,omitempty"`
	// Robust is a robust study's best trial in each of its scenarios
	// (absent for a study of one scenario).
	Robust *RobustJSON `json:"robust,omitempty"`
}

// BestJSON is the best trial with its deltas against the baseline and,
// per objective, its range over the seeds and the number of seeds on which
// it beats the baseline's run on the same seed.
type BestJSON struct {
	Trial         int                  `json:"trial"`
	Params        map[string]any       `json:"params"`
	Metrics       metrics.Summary      `json:"metrics"`
	Deltas        map[string]any       `json:"deltas"`
	SeedRange     map[string]SeedRange `json:"seed_range"`
	BetterOnSeeds map[string]int       `json:"better_on_seeds"`
	// Violates names the constraint the best trial misses, if any: its
	// score counts the shortfall as a penalty, so it is best either
	// because no trial meets every constraint (trials_feasible 0) or
	// because it misses by less than a point and gains more than that
	// elsewhere.
	Violates string `json:"violates,omitempty"`
	// ViolationSentence says it as `show` does (Report.ViolationSentence),
	// so that the dashboard shows the sentence rather than rebuild it.
	ViolationSentence string `json:"violation_sentence,omitempty"`
	// Feasible says whether the best trial meets every constraint (the
	// glossary's "feasible").
	Feasible bool `json:"feasible"`
	// World is the world the trial ran in, when the template tunes the
	// world (else the study's).
	World *WorldJSON `json:"world,omitempty"`
	// Settings is every setting that has an effect in the trial's
	// configuration, with its value in the setting's own text form, by key:
	// the `key: value` lines of `study export --format settings`. Absent
	// only when that configuration cannot be built (a study whose workload
	// spec file has gone).
	Settings map[string]string `json:"settings,omitempty"`
}

// TrialJSON is a Pareto trial, with its world when the template tunes the
// world.
type TrialJSON struct {
	Trial   int             `json:"trial"`
	Params  map[string]any  `json:"params"`
	Metrics metrics.Summary `json:"metrics"`
	World   *WorldJSON      `json:"world,omitempty"`
}

// JSON builds the show document.
func (r *Report) JSON() ShowJSON {
	out := ShowJSON{
		Name: r.Study.Name, Template: r.Study.Template, WarmFrom: r.Study.WarmFrom, State: r.State(), Failure: r.Study.Failure,
		TrialsTotal: r.Study.TrialsTotal, TrialsComplete: len(r.Complete), TrialsPruned: len(r.Pruned),
		World: worldJSON(r.World), WorldAssumed: r.WorldAssumed, TunesWorld: append([]string{}, r.Template.TunedWorld()...),
		Baseline: r.Baseline, Hypervolume: r.Hypervolume, Pareto: []TrialJSON{}, Scores: search.ScoreRules,
		Validation: r.Validation, Ablation: r.Ablation, EvidenceError: r.EvidenceError, Importance: map[string]float64{},
		Validations: r.Validations, EvidenceRuns: r.EvidenceRuns, TraceWindows: r.StudyTraceWindows(),
		BaselineFrom: r.BaselineFrom(), WorldFile: r.worldFilePath(), Settings: r.createSettings(), Deployable: r.Study.Deployable, Answer: r.CapacityAnswer(), MaxRate: r.MaxRate, TrialsFeasible: r.FeasibleCount(),
	}
	for i, v := range r.Importance() {
		out.Importance[r.Template.Params[i].Name] = v
	}
	if r.Best >= 0 {
		b := &r.Complete[r.Best]
		out.Best = &BestJSON{Trial: b.Number, Params: r.ParamMap(b.Params), Metrics: b.Summary(), Deltas: deltas(b.Summary(), r.Baseline),
			SeedRange: map[string]SeedRange{}, BetterOnSeeds: map[string]int{}, Violates: r.MissedConstraint(b), ViolationSentence: r.ViolationSentence(b), Feasible: search.Feasible(b.Violation)}
		for _, o := range r.Template.Objectives {
			out.Best.SeedRange[o.Name] = Spread(b.Seeds(), o.Metric)
			out.Best.BetterOnSeeds[o.Name] = r.BetterOnSeeds(b, o)
		}
		out.Best.World = r.trialWorldJSON(b)
		out.Robust, _ = r.Robust(b) // an unreadable table is said by the text report
		out.Best.Settings, _ = r.TrialSettings(b)
	}
	for _, i := range r.Pareto {
		c := &r.Complete[i]
		out.Pareto = append(out.Pareto, TrialJSON{Trial: c.Number, Params: r.ParamMap(c.Params), Metrics: c.Summary(), World: r.trialWorldJSON(c)})
	}
	return out
}

// MissedConstraint names the constraint c misses, "" when it is feasible.
func (r *Report) MissedConstraint(c *Result) string {
	if search.Feasible(c.Violation) {
		return ""
	}
	return r.missed(r.Evaluation(c))
}

// FailedConstraint names the first template constraint the candidate's
// mean misses against the baseline's mean; "" when all hold.
func (r *Report) FailedConstraint(cand, base metrics.Summary) string {
	judged, err := r.Template.Judge(&base, &cand)
	if err != nil { // a template's metrics are checked at load: cannot happen
		return ""
	}
	return r.missed(judged)
}

// missed names the first constraint e misses (or its first objective
// that could not be measured), "" when it misses none.
func (r *Report) missed(e search.Evaluation) string {
	if i := e.Missed(); i >= 0 {
		return ConstraintWords(r.Template.Constraints[i])
	}
	for i, v := range e.Objectives {
		if math.IsNaN(v) {
			return r.Template.Objectives[i].Name + " (not measured)"
		}
	}
	return ""
}

// FeasibleCount is the number of complete trials that meet every
// constraint (counted with the front).
func (r *Report) FeasibleCount() int { return r.feasible }

// ViolationSentence says that c (the best trial) misses a constraint, and
// why it is best all the same; "" when it meets every one. A report must
// say it, or its table reads as a strategy the user may pick.
func (r *Report) ViolationSentence(c *Result) string {
	missed := r.MissedConstraint(c)
	if missed == "" {
		return ""
	}
	if n := r.FeasibleCount(); n > 0 {
		return fmt.Sprintf("trial %d misses %s by under a point, which its score charges less than it gains; %d of %d trials meet every constraint",
			c.Number, missed, n, len(r.Complete))
	}
	return fmt.Sprintf("no trial meets every constraint: trial %d misses %s", c.Number, missed)
}

// deltas mirrors the metrics' JSON with each number replaced by its
// relative change against the baseline (null where the baseline is 0).
func deltas(v, b metrics.Summary) map[string]any {
	var vm, bm map[string]any
	vj, _ := json.Marshal(v)
	bj, _ := json.Marshal(b)
	_ = json.Unmarshal(vj, &vm)
	_ = json.Unmarshal(bj, &bm)
	return deltaTree(vm, bm)
}

func deltaTree(v, b map[string]any) map[string]any {
	out := make(map[string]any, len(v))
	for k, x := range v {
		switch xv := x.(type) {
		case float64:
			bv, _ := b[k].(float64)
			if d := Delta(xv, bv); !math.IsNaN(d) {
				out[k] = d
			} else {
				out[k] = nil
			}
		case map[string]any:
			bsub, _ := b[k].(map[string]any)
			out[k] = deltaTree(xv, bsub)
		}
	}
	return out
}

// WriteTable prints the human report: baseline against the best trial.
func (r *Report) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "study %s · template %s · %s · %d/%d trials complete", r.Study.Name, r.Study.Template, r.State(), len(r.Complete), r.Study.TrialsTotal)
	if len(r.Pruned) > 0 {
		fmt.Fprintf(w, ", %d pruned", len(r.Pruned))
	}
	if r.Failed > 0 {
		fmt.Fprintf(w, " (%d rescued)", r.Failed)
	}
	if r.State() == "failed" {
		fmt.Fprintf(w, "\nits last run stopped on an error: %s (optimize study resume %s runs it on)", r.Study.Failure, r.Study.Name)
	}
	fmt.Fprintf(w, "\nworkload %s · seeds %s · sampler %s", r.Study.Workload, strings.ReplaceAll(fmt.Sprint(r.Study.Seeds), " ", ","), r.Study.Sampler)
	if file, ok := strings.CutPrefix(r.Study.WarmFrom, WarmJournal); ok {
		fmt.Fprintf(w, " · warm-started from the Optuna journal %s", file)
	} else if r.Study.WarmFrom != "" {
		fmt.Fprintf(w, " · warm-started from study %s", r.Study.WarmFrom)
	}
	if tw := r.StudyTraceWindows(); tw != nil {
		fmt.Fprintln(w)
		tw.WriteText(w)
	}
	fmt.Fprintf(w, "\nworld %s", r.WorldText())
	if f := storage.Config(r.Study.BaseFrom, storage.KindWorld); f != nil {
		fmt.Fprintf(w, "\nin the world of %s (study create --world-file; every run, validation and export of the study runs in it)", f.Path)
		if r.pins != nil {
			fmt.Fprintf(w, "; it pins %s, which the template tunes", strings.Join(r.pins, ", "))
		}
	}
	if set := r.createSettings(); set != nil {
		fmt.Fprintf(w, "\nsettings given at create: %s", strings.Join(set, ", "))
	}
	if r.Study.Deployable {
		fmt.Fprintf(w, "\n%s", DeployableLine)
	}
	if from := r.BaselineFrom(); from != nil {
		fmt.Fprintf(w, "\nbaseline from production configs: %s (in the study's world)", strings.Join(from, ", "))
	}
	if r.TunesWorld() {
		fmt.Fprintf(w, "\n(the baseline's; the template tunes %s: each trial runs in the world its parameters give)", r.tunedText())
	}
	for _, rule := range search.ScoreRules {
		fmt.Fprintf(w, "\n%s (%s): %s", rule.Name, rule.Ranks, rule.Rule)
	}
	fmt.Fprint(w, "\n\n")
	if r.Best < 0 {
		fmt.Fprintln(w, "no complete trial yet")
		return
	}
	best := &r.Complete[r.Best]
	if answer := r.CapacityAnswer(); answer != "" {
		fmt.Fprintf(w, "%s\n\n", answer)
	}
	r.writeTable(w, best, fmt.Sprintf("best (trial %d)", best.Number), "best")
	for _, o := range r.Template.Objectives {
		fmt.Fprintln(w, r.SeedVerdict(best, o))
	}
	if s := r.ViolationSentence(best); s != "" {
		fmt.Fprintln(w, s)
	}
	r.writeRobust(w, best)
	if r.TunesWorld() {
		fmt.Fprintf(w, "trial %d's world: %s\n", best.Number, r.TrialWorld(best))
	}
	fmt.Fprintf(w, "\nPareto front: %d trials · hypervolume %.4f (objectives as ratios to the baseline, reference %.1f; trials within the constraints only)\n",
		len(r.Pareto), r.Hypervolume, HypervolumeReference)
	r.writeFront(w)
	fmt.Fprintln(w, "best parameters (importance: share of the score's rank variance each explains, over all trials):")
	pm := r.ParamMap(best.Params)
	imp := r.Importance()
	for i, p := range r.Template.Params {
		grid := ""
		if g := p.GridText(); g != "" {
			grid = "  (" + g + ")"
		}
		fmt.Fprintf(w, "  %-28s = %-12s importance %.2f%s\n", p.Name, ParamText(pm[p.Name]), imp[i], grid)
	}
	r.writeEvidence(w)
	fmt.Fprintf(w, "\nwhat the words and units mean: study show %s --explain\n", r.Study.Name)
}

// WriteTrialTable prints complete trial n against the baseline as
// WriteTable does for the best; nothing when there is no such trial.
func (r *Report) WriteTrialTable(w io.Writer, n int) {
	if c := r.ByNumber(n); c != nil {
		r.writeTable(w, c, fmt.Sprintf("trial %d", n), "trial")
	}
}

func (r *Report) writeTable(w io.Writer, c *Result, heading, label string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "metric\tunit\tbaseline\t%s\tΔ\t%s, seed range\t\n", heading, label)
	for _, row := range r.TableFor(c) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s – %s\t\n", row.Name, row.Unit, Human(row.Baseline), Human(row.Best), Percent(row.Delta),
			Human(row.Seeds.Min), Human(row.Seeds.Max))
	}
	tw.Flush()
}

// TableRow is one metric of the baseline-against-best table.
type TableRow struct {
	Name string
	// Unit is the metric's unit (strategies.MetricUnit): "ms", "req/s".
	Unit           string
	Baseline, Best float64
	Delta          float64   // relative change (Delta), NaN when the baseline is 0
	Seeds          SeedRange // the best trial's range over the seeds
}

// Table is the baseline-against-best table of WriteTable: one row per
// metric, the objectives first, then per class and the totals that are
// not objectives already; nil without a complete trial.
func (r *Report) Table() []TableRow {
	if r.Best < 0 {
		return nil
	}
	return r.TableFor(&r.Complete[r.Best])
}

// TableFor is Table for any complete trial: its price per class too
// (goodput and rejections) where the study's workload has SLO targets or
// either side rejected requests.
func (r *Report) TableFor(best *Result) []TableRow {
	summary := best.Summary()
	shed := r.Baseline.Rejected > 0 || summary.Rejected > 0
	var rows []TableRow
	shown := map[string]bool{}
	row := func(name, path string) {
		if shown[path] {
			return
		}
		shown[path] = true
		get := metricOf(path)
		b, v := get(&r.Baseline), get(&summary)
		rows = append(rows, TableRow{Name: name, Unit: strategies.MetricUnit(path), Baseline: b, Best: v, Delta: Delta(v, b), Seeds: Spread(best.Seeds(), path)})
	}
	for _, o := range r.Template.Objectives {
		row(o.Name, o.Metric)
	}
	for _, cl := range classOrder(r.Baseline) {
		row(cl+" TTFT p99", "per_slo."+cl+".ttft_ms.p99")
		row(cl+" E2E p99", "per_slo."+cl+".e2e_ms.p99")
		if r.Baseline.PerSLO[cl].Attainment != nil {
			row(cl+" SLO attainment", "per_slo."+cl+".attainment")
			row(cl+" goodput", "per_slo."+cl+".goodput")
		}
		if shed {
			row(cl+" rejected", "per_slo."+cl+".rejected")
		}
	}
	if r.Baseline.Attainment != nil {
		row("SLO attainment", "attainment")
		row("goodput", "goodput")
	}
	row("throughput", "tokens_per_sec")
	row("rejected", "rejected")
	if r.readsCost() {
		for _, path := range strategies.CostMetrics() {
			row(path, path)
		}
	}
	return rows
}

// Importance estimates how much each parameter drives the score
// (search.Importance over the complete trials).
func (r *Report) Importance() []float64 {
	values := make([][]search.Value, len(r.Complete))
	scores := make([]float64, len(r.Complete))
	for i, c := range r.Complete {
		values[i], scores[i] = c.Params, c.Score
	}
	return search.Importance(values, scores, r.Template.Space())
}

// metricOf reads a metric path (validated when the template loaded).
func metricOf(path string) func(*metrics.Summary) float64 {
	return func(m *metrics.Summary) float64 {
		v, _ := strategies.Metric(m, path)
		return v
	}
}

// classOrder lists the SLO classes present in s in simcore's class order
// ("default", the unclassed requests, first).
func classOrder(s metrics.Summary) []string {
	var out []string
	for c := simcore.SLONone; c < simcore.NumSLOClasses; c++ {
		if _, ok := s.PerSLO[c.Label()]; ok {
			out = append(out, c.Label())
		}
	}
	return out
}

// BaselineFrom lists the production configs the baseline ran with
// instead of the baseline template, "kind path" each; nil for none.
func (r *Report) BaselineFrom() []string {
	var out []string
	for _, f := range r.Study.BaselineFrom {
		out = append(out, "--baseline-"+strings.TrimSuffix(f.Kind, "-config")+" "+f.Path)
	}
	return out
}

// worldFilePath is the path of the study's world file, "" for none.
func (r *Report) worldFilePath() string {
	if f := storage.Config(r.Study.BaseFrom, storage.KindWorld); f != nil {
		return f.Path
	}
	return ""
}

// createSettings are the settings given at create, "key=value" each, in
// their order; nil for none.
func (r *Report) createSettings() []string {
	f := storage.Config(r.Study.BaseFrom, storage.KindSettings)
	if f == nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(f.Data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			out = append(out, strings.TrimSpace(k)+"="+strings.TrimSpace(v))
		}
	}
	return out
}

// SeedVerdict says how trial c's objective o compares with the
// baseline's seed by seed — or, for a metric the configuration alone
// decides (cost per hour without an autoscaler), that it is the same on
// every seed.
func (r *Report) SeedVerdict(c *Result, o strategies.Objective) string {
	if cfg, err := r.TrialConfig(c); strategies.SetByConfig(o.Metric) && (err != nil || !cfg.Autoscale.On()) {
		return fmt.Sprintf("%s: set by the cluster, the same on every seed", o.Name)
	}
	return fmt.Sprintf("%s: better than the baseline on %d of %d seeds", o.Name, r.BetterOnSeeds(c, o), len(r.Seeds))
}
