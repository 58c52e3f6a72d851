package report

import (
	"fmt"
	"io"
	"strings"

	"optimize/search"
	"optimize/strategies"
)

// The glossary is the one text that explains the words and numbers of a
// report: `study show --explain` prints it, the dashboard reads it from
// GET /api/glossary, and docs/glossary.md's Glossary section is generated from
// it (a test keeps the guide equal to GlossaryMarkdown).

// Term is one word of the glossary with its unit ("" when it has none).
type Term struct {
	Name    string `json:"name"`
	Unit    string `json:"unit,omitempty"`
	Meaning string `json:"meaning"`
}

// UnitWord is one unit of the metric table and what it means.
type UnitWord struct {
	Unit    string `json:"unit"`
	Meaning string `json:"meaning"`
}

// GlossaryDoc is GET /api/glossary: the terms, the units, and every
// metric with its unit.
type GlossaryDoc struct {
	Terms   []Term                  `json:"terms"`
	Units   []UnitWord              `json:"units"`
	Metrics []strategies.MetricName `json:"metrics"`
}

// Glossary is the document; its terms state the constants they depend
// on (the hypervolume's reference point, the score's penalty weight).
func Glossary() GlossaryDoc {
	return GlossaryDoc{Terms: terms(), Units: unitWords, Metrics: strategies.MetricNames()}
}

func terms() []Term {
	return []Term{
		{"baseline", "", "The llm-d-parity policies (the built-in template baseline) on the study's workload, cluster and CPU KV tier, run on the same seeds as every trial: only the strategy differs. Every trial is judged against it, seed by seed."},
		{"Δ (delta)", "fraction", "The relative change against the baseline, (value − baseline) / |baseline|: −0.62 is 62 % lower. Text, the dashboard and the HTML report show it in per cent (−62.0%); every JSON and CSV export gives it as a fraction (fields named NAME_delta, the validation's ci95 bounds, the ablation's leave_one_out, add_one and contribution). Whether lower is better depends on the objective's direction."},
		{"seed range", "", "The lowest and highest value of a metric over the study's seeds (one simulation per seed), in the metric's unit; the table's value is their mean."},
		{"better on seeds", "seeds", "On how many of the seeds the trial beats the baseline's run on the same seed, in the objective's direction."},
		{"slo_gap", "ratio", "The sheddable class's p99 TTFT divided by the critical class's: above 1 the low-priority class waits longer than the high-priority one; 0 when either class is absent."},
		{"attainment", "fraction", "The share of a class's arrived requests that completed within every latency target the class has (TTFT, mean ITL, E2E); rejected, dropped and unfinished requests miss, so shedding cannot raise it. The top-level attainment pools the classes with targets; it is absent without a target."},
		{"cache_hit_rate", "fraction", "BLIS's prefix-cache hit rate: for each instance, the KV blocks a request found cached over all the blocks it stored, then the unweighted mean over instances, an instance that served nothing counting 0. So a router that leaves half the instances idle halves it even when every busy instance hits as often as before (read routing_imbalance beside it). vLLM's counterpart is per instance: vllm:prefix_cache_hits / vllm:prefix_cache_queries."},
		{"routing_imbalance", "ratio", "The most requests the router sent to one instance over the mean per instance: 1 is an even spread, the instance count means all went to one. It shows a router piling load onto a few instances (llm-d's prefix-cache-scorer does when the load scorers see no difference). Production has no such gauge; it follows from vLLM's per-instance request counters (vllm:request_success_total)."},
		{"goodput", "req/s", "The requests that met their class's targets (as attainment counts them) per second of the run's makespan."},
		{"gpu_count", "GPUs", "The GPUs the cluster serves on: instances × TP (GPUs per instance). A property of the configuration, the same on every seed."},
		{"cost_per_hour", "USD/h", "What the cluster costs per hour: gpu_count × the price of its GPU per GPU-hour (setting cost.gpu_hour.<GPU>; defaults are on-demand cloud list prices, their source and date in `optimize template settings --output json`). Cost has no vLLM or llm-d counterpart: it is priced here, not measured. Absent when the GPU has no price."},
		{"gpu_hours", "GPU-h", "With the autoscaler: Σ over the instances of their GPUs × the hours from their placement to their termination or the end of the run, so the cost follows the instances actually running; gpu_count and cost_per_hour are then their means over the run."},
		{"cost_usd", "USD", "With the autoscaler: what the run cost, gpu_hours × the price of the GPU per GPU-hour. Absent when the GPU has no price."},
		{"cost_per_million_tokens", "USD/Mtok", "cost_per_hour / (tokens_per_sec × 3600) × 1,000,000: US dollars per million output tokens at the simulated throughput (no vLLM or llm-d counterpart). A run with no output tokens has no finite cost per token: reading the metric is then an error that fails the trial, never a number a search could rank as cheap. Compare it only between runs of one latency model (the latency model sets the throughput)."},
		{"trace_zero_output", "requests", "Rows of a replayed trace with no output tokens (a failed request): counted, never replayed. Absent for generated workloads."},
		{"trace_zero_input", "requests", "Rows of a replayed trace with no prompt tokens: counted, never replayed. Absent for generated workloads."},
		{"trace_over_context", "requests", "Rows of a replayed trace longer than the model's context window (the prompt fills it, or prompt + output exceeds it; vLLM refuses them): counted, never replayed. Absent for generated workloads."},
		{search.StoredScore.Name, "ratio", fmt.Sprintf("What the best trial has lowest, stored with every trial: the primary objective as a ratio to the baseline (1 is the baseline, 0.3 is 70 %% better; capped at %g) plus %g times the sum of the constraints' shortfalls (a bound of 0.99 × baseline met at 0.98 × falls short by 0.01 and adds %g), so every feasible trial ranks before every clearly infeasible one.", search.RatioCap, search.StoredScore.Weight, search.StoredScore.Weight*0.01)},
		{search.SamplerRank.Name, "ratio", fmt.Sprintf("How the model-based samplers (gp, tpe, parego) rank trials when they propose the next: the same primary ratio plus %g times the shortfall (0.1 of the ratio per point, not %g), so a trial a few points short of a constraint while far ahead on the objective stays among their best and draws the search to where feasible settings of its mechanism exist. `evaluate` writes it beside the score.", search.SamplerRank.Weight, search.StoredScore.Weight*0.01)},
		{"feasible", "", "A trial that meets every constraint of its template, judged on its mean over the seeds against the baseline's mean."},
		{"Pareto front", "", "The feasible trials that no other feasible trial beats on every objective at once."},
		{"pruned", "", "A robust study's trial stopped before its last scenario (study create --prune): the scenarios it ran already proved its score no better than the best trial's, under the stored score and under the sampler's softer one (the score only grows with each scenario). It counts towards the trials, is never the best nor on the Pareto front, and its stored score and objectives are those bounds, not measurements. Adaptive capping, as in ParamILS and SMAC; vLLM and llm-d have no counterpart."},
		{"hypervolume", "ratio^k", fmt.Sprintf("The volume the Pareto front dominates, each of the k objectives as a ratio to the baseline with smaller better (a maximised objective as baseline / value), measured up to the reference point %g on every axis (twice as bad as the baseline). The baseline alone scores 1 (a box of side 1 per axis); larger is better; it never shrinks as trials are added.", HypervolumeReference)},
		{"importance", "fraction", "Each parameter's share of the variation in the trials' score ranks that it explains on its own (epsilon-squared over bins of the parameter, chance removed), normalised to sum to 1; a ranking, not an exact decomposition, and 0 with fewer than 4 trials."},
		{"held-out validation", "", "The best trials rerun on seeds the study never saw, each seed paired with the baseline's run on it. The 95 % interval is the paired Student-t interval of the per-seed Δ."},
		{"verdict", "", verdictWords()},
	}
}

// verdictWords states each validation verdict and when it is given (the
// rule Grade follows, at the default 10 held-out seeds).
func verdictWords() string {
	var b strings.Builder
	b.WriteString("What held-out validation concludes of a trial, from its primary objective at the default 10 seeds:")
	for _, r := range VerdictRules("the primary objective", 10) {
		fmt.Fprintf(&b, " %q: %s.", string(r.Verdict), r.When)
	}
	return b.String()
}

// unitWords are the units the metric table uses; TestGlossaryNamesEveryUnit
// checks that each unit of the table is here.
var unitWords = []UnitWord{
	{"ms", "milliseconds of simulated time"},
	{"tokens/s", "output tokens per second of the run's makespan"},
	{"req/s", "requests per second of the run's makespan"},
	{"requests", "a count of requests (a mean over seeds may be fractional)"},
	{"tokens", "a count of tokens"},
	{"blocks", "a count of KV-cache blocks"},
	{"preemptions", "a count of preemptions (a request may be preempted more than once)"},
	{"fraction", "a share between 0 and 1 (0.95 is 95 %)"},
	{"ratio", "a quotient of two like numbers, without unit"},
	{"index", "Jain's fairness index over the classes' output tokens per request: 1 is equal, 1/n is all to one of n classes"},
	{"GPUs", "a count of GPUs"},
	{"transfers", "a count of prefill/decode KV transfers in flight"},
	{"USD/h", "US dollars per hour of the cluster's operation"},
	{"GPU-h", "GPU-hours: one GPU for one hour"},
	{"USD", "US dollars"},
	{"USD/Mtok", "US dollars per million output tokens"},
}

// WriteGlossary prints the glossary as `study show --explain` does.
func WriteGlossary(w io.Writer) {
	doc := Glossary()
	fmt.Fprintln(w, "Glossary")
	for _, t := range doc.Terms {
		head := t.Name
		if t.Unit != "" {
			head += " (" + t.Unit + ")"
		}
		fmt.Fprintf(w, "  %s\n%s", head, wrap(t.Meaning, "      ", 78))
	}
	fmt.Fprintln(w, "\nUnits")
	for _, u := range doc.Units {
		fmt.Fprintf(w, "  %-12s %s\n", u.Unit, u.Meaning)
	}
	fmt.Fprintln(w, "\nMetrics (names as templates and JSON spell them; <stat> is mean, p50, p90 or p99)")
	for _, m := range doc.Metrics {
		fmt.Fprintf(w, "  %-44s %s\n", m.Name, m.Unit)
	}
}

// GlossaryMarkdown is docs/glossary.md's Glossary section after its heading.
func GlossaryMarkdown() string {
	doc := Glossary()
	var b strings.Builder
	b.WriteString("<!-- generated from studies/report/glossary.go; `go test ./studies/report -run TestREADMEGlossary -update` rewrites it -->\n\n")
	b.WriteString("`optimize study show NAME --explain` prints this glossary, and the dashboard's help panel shows it.\n\n")
	for _, t := range doc.Terms {
		unit := ""
		if t.Unit != "" {
			unit = " (" + t.Unit + ")"
		}
		fmt.Fprintf(&b, "* **%s**%s: %s\n", t.Name, unit, t.Meaning)
	}
	b.WriteString("\n| unit | meaning |\n|---|---|\n")
	for _, u := range doc.Units {
		fmt.Fprintf(&b, "| %s | %s |\n", u.Unit, u.Meaning)
	}
	b.WriteString("\n| metric | unit |\n|---|---|\n")
	for _, m := range doc.Metrics {
		fmt.Fprintf(&b, "| `%s` | %s |\n", m.Name, m.Unit)
	}
	return b.String()
}

// wrap breaks text into lines of at most width columns after indent.
func wrap(text, indent string, width int) string {
	var b strings.Builder
	line := indent
	for _, word := range strings.Fields(text) {
		if len([]rune(line))+1+len([]rune(word)) > width && line != indent {
			b.WriteString(line + "\n")
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += word
	}
	return b.String() + line + "\n"
}
