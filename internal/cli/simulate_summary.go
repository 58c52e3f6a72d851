package cli

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"optimize/simcore"
	"optimize/simcore/cluster"
	"optimize/simcore/metrics"
	"optimize/simcore/route"
)

// summaryRow is one line of simulate's text summary: its label, the
// summary number it shows (by its metrics name) and how it is printed.
type summaryRow struct{ label, number, format string }

// runRows and classRows are the text summary's lines, for the run and for
// each class present. A row of an optional number (attainment, goodput)
// is shown only when some column has it; a column without it prints NaN.
// The gateway rows (flow control's outcomes and queue delay) are such
// rows: present when flow control is on.
var (
	runRows = append([]summaryRow{
		{"completed", "completed", "%.0f"},
		{"rejected", "rejected", "%.0f"},
		{"TTFT mean ms", "ttft_ms.mean", "%.1f"},
		{"TTFT p99 ms", "ttft_ms.p99", "%.1f"},
		{"E2E mean ms", "e2e_ms.mean", "%.1f"},
		{"E2E p99 ms", "e2e_ms.p99", "%.1f"},
		{"ITL mean ms", "itl_ms.mean", "%.2f"},
		{"sched delay p99 ms", "scheduling_delay_ms.p99", "%.1f"},
		{"tokens/s", "tokens_per_sec", "%.0f"},
		{"preemptions", "preemptions", "%.0f"},
		{"cache hit rate", "cache_hit_rate", "%.3f"},
		{"SLO gap", "slo_gap", "%.2f"},
		{"Jain fairness", "jain_fairness", "%.3f"},
		{"SLO attainment", "attainment", "%.3f"},
		{"goodput req/s", "goodput", "%.1f"},
		{"P/D split", "pd.disaggregated", "%.0f"},
		{"P/D kept whole", "pd.local", "%.0f"},
		{"P/D dropped at decode KV", "pd.dropped_at_decode_kv", "%.0f"},
		{"P/D transfer mean ms", "pd.transfer_mean_ms", "%.2f"},
		{"P/D transfer p50 ms", "pd.transfer_p50_ms", "%.2f"},
		{"P/D transfer p95 ms", "pd.transfer_p95_ms", "%.2f"},
		{"P/D transfer p99 ms", "pd.transfer_p99_ms", "%.2f"},
		{"prefill pool done/s", "pd.prefill_completions_per_sec", "%.2f"},
		{"decode pool done/s", "pd.decode_completions_per_sec", "%.2f"},
		{"P/D peak transfers", "pd.peak_transfers", "%.0f"},
		{"P/D mean transfer depth", "pd.mean_transfer_depth", "%.2f"},
		{"GPUs", "gpu_count", "%.0f"},
		{"cost USD/h", "cost_per_hour", "%.2f"},
		{"GPU-hours", "gpu_hours", "%.3f"},
		{"cost USD", "cost_usd", "%.2f"},
		{"trace rows: no output", "trace_zero_output", "%.0f"},
		{"trace rows: no prompt", "trace_zero_input", "%.0f"},
		{"trace rows: over context", "trace_over_context", "%.0f"},
	}, gatewayRows...)
	classRows = append([]summaryRow{
		{"TTFT p99 ms", "ttft_ms.p99", "%.1f"},
		{"E2E p99 ms", "e2e_ms.p99", "%.1f"},
		{"TTFT attainment", "ttft_attainment", "%.3f"},
		{"SLO attainment", "attainment", "%.3f"},
		{"goodput req/s", "goodput", "%.1f"},
	}, gatewayRows...)
	gatewayRows = []summaryRow{
		{"gateway rejected", "gateway_rejected", "%.0f"},
		{"gateway shed", "gateway_shed", "%.0f"},
		{"gateway expired", "gateway_expired", "%.0f"},
		{"gateway evicted", "gateway_evicted", "%.0f"},
		{"gateway delay mean ms", "gateway_queue_delay_mean_ms", "%.1f"},
		{"gateway delay p99 ms", "gateway_queue_delay_p99_ms", "%.1f"},
	}
)

// writeText prints a human summary: one column per seed and the mean.
func writeText(w io.Writer, cfg cluster.Config, workload string, seeds []int64, runs []metrics.Summary) {
	admission := cfg.Admission.Policy
	if fc := cfg.FlowControl.WithDefaults(); fc.Enabled {
		admission = "flow control (" + fc.Detector + " detector)"
	}
	fmt.Fprintf(w, "workload %s · %d instances · routing %s · scheduler %s/%s · admission %s%s\n",
		workload, cfg.NumInstances, routingLabel(cfg), cfg.Scheduler, cfg.Priority.Name, admission, pdLabel(cfg))
	world := cfg.Where()
	fmt.Fprintf(w, "world %s · %d KV blocks per instance\n\n", world.Line(), world.KVBlocks)
	cols := append([]metrics.Summary(nil), runs...)
	head := []string{"metric"}
	for _, s := range seeds {
		head = append(head, fmt.Sprintf("seed %d", s))
	}
	if len(runs) > 1 {
		cols = append(cols, metrics.Mean(runs))
		head = append(head, "mean")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, r := range runRows {
		writeRow(tw, r, "", metrics.SummaryNumbers(), cols, func(m *metrics.Summary) *metrics.Summary { return m })
	}
	for _, c := range classesIn(cols) {
		cl := c.Label()
		for _, r := range classRows {
			writeRow(tw, r, cl+" ", metrics.ClassNumbers(), cols, func(m *metrics.Summary) *metrics.ClassSummary {
				cs := m.PerSLO[cl] // zero when the class sent nothing in this run
				return &cs
			})
		}
	}
	tw.Flush()
}

// writeRow prints row r over the columns, reading its number from part of
// each column's summary; an optional number no column has is no row.
func writeRow[T any](tw io.Writer, r summaryRow, prefix string, numbers []metrics.Number[T], cols []metrics.Summary, part func(*metrics.Summary) *T) {
	i := slices.IndexFunc(numbers, func(n metrics.Number[T]) bool { return n.Name == r.number })
	if i < 0 {
		panic("report row " + r.label + " reads " + r.number + ", which the summary does not have")
	}
	num := numbers[i]
	cells := []string{prefix + r.label}
	shown := !num.Optional
	for j := range cols {
		v, ok := num.Get(part(&cols[j]))
		if !ok {
			v = math.NaN()
		}
		shown = shown || ok
		cells = append(cells, fmt.Sprintf(r.format, v))
	}
	if shown {
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
}

func routingLabel(cfg cluster.Config) string {
	if cfg.Routing.Policy != "weighted" {
		return cfg.Routing.Policy
	}
	parts := make([]string, 0, len(cfg.Routing.Scorers))
	for _, s := range cfg.Routing.Scorers {
		parts = append(parts, fmt.Sprintf("%s:%g", s.Name, s.Weight))
	}
	picker := ""
	if cfg.Routing.Picker != "" && cfg.Routing.Picker != route.PickerNames()[0] {
		picker = " " + cfg.Routing.Picker
	}
	switch {
	case cfg.Routing.Scorers == nil:
		return "weighted(default scorers)" + picker
	case len(parts) == 0:
		return "weighted(no scorer)" + picker
	}
	return "weighted(" + strings.Join(parts, ",") + ")" + picker
}

// pdLabel describes the P/D pools, "" when there are none.
func pdLabel(cfg cluster.Config) string {
	pd := cfg.PD
	if !pd.Enabled() {
		return ""
	}
	decider := pd.Decider
	if decider == "" {
		decider = cluster.PDNever
	}
	if decider == cluster.PDPrefixThreshold {
		decider += fmt.Sprintf(" %d", pd.PrefixThreshold)
	}
	return fmt.Sprintf(" · P/D %d prefill + %d decode + %d shared, decider %s", pd.Prefill, pd.Decode, pd.Shared, decider)
}

// classesIn lists the SLO classes present in any run, in class order.
func classesIn(runs []metrics.Summary) []simcore.SLOClass {
	var out []simcore.SLOClass
	for c := simcore.SLOClass(0); c < simcore.NumSLOClasses; c++ {
		for _, r := range runs {
			if _, ok := r.PerSLO[c.Label()]; ok {
				out = append(out, c)
				break
			}
		}
	}
	return out
}
