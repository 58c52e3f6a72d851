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
)

// writeText prints a human summary: one column per seed and the mean.
func writeText(w io.Writer, cfg cluster.Config, workload string, seeds []int64, runs []metrics.Summary) {
	fmt.Fprintf(w, "workload %s · %d instances · routing %s · scheduler %s/%s · admission %s\n\n",
		workload, cfg.NumInstances, routingLabel(cfg), cfg.Scheduler, cfg.Priority.Name, cfg.Admission.Policy)
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
	row := func(name, format string, get func(m metrics.Summary) float64) {
		cells := []string{name}
		for _, m := range cols {
			cells = append(cells, fmt.Sprintf(format, get(m)))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	row("completed", "%.0f", func(m metrics.Summary) float64 { return m.Completed })
	row("rejected", "%.0f", func(m metrics.Summary) float64 { return m.Rejected })
	row("TTFT mean ms", "%.1f", func(m metrics.Summary) float64 { return m.TTFT.Mean })
	row("TTFT p99 ms", "%.1f", func(m metrics.Summary) float64 { return m.TTFT.P99 })
	row("E2E mean ms", "%.1f", func(m metrics.Summary) float64 { return m.E2E.Mean })
	row("E2E p99 ms", "%.1f", func(m metrics.Summary) float64 { return m.E2E.P99 })
	row("ITL mean ms", "%.2f", func(m metrics.Summary) float64 { return m.ITL.Mean })
	row("sched delay p99 ms", "%.1f", func(m metrics.Summary) float64 { return m.SchedulingDelay.P99 })
	row("tokens/s", "%.0f", func(m metrics.Summary) float64 { return m.TokensPerSec })
	row("preemptions", "%.0f", func(m metrics.Summary) float64 { return m.Preemptions })
	row("cache hit rate", "%.3f", func(m metrics.Summary) float64 { return m.CacheHitRate })
	row("SLO gap", "%.2f", func(m metrics.Summary) float64 { return m.SLOGap })
	row("Jain fairness", "%.3f", func(m metrics.Summary) float64 { return m.JainFairness })
	if slices.ContainsFunc(cols, func(m metrics.Summary) bool { return m.Attainment != nil }) {
		row("SLO attainment", "%.3f", func(m metrics.Summary) float64 { return opt(m.Attainment) })
		row("goodput req/s", "%.1f", func(m metrics.Summary) float64 { return opt(m.Goodput) })
	}
	for _, c := range classesIn(cols) {
		cl := c.Label()
		row(cl+" TTFT p99 ms", "%.1f", func(m metrics.Summary) float64 { return m.PerSLO[cl].TTFT.P99 })
		row(cl+" E2E p99 ms", "%.1f", func(m metrics.Summary) float64 { return m.PerSLO[cl].E2E.P99 })
		if _, ok := cfg.SLOTTFT.Get(c); ok {
			row(cl+" TTFT attainment", "%.3f", func(m metrics.Summary) float64 {
				if a := m.PerSLO[cl].TTFTAttainment; a != nil {
					return *a
				}
				return math.NaN() // the class sent nothing in this run
			})
		}
		if slices.ContainsFunc(cols, func(m metrics.Summary) bool { return m.PerSLO[cl].Attainment != nil }) {
			row(cl+" SLO attainment", "%.3f", func(m metrics.Summary) float64 { return opt(m.PerSLO[cl].Attainment) })
			row(cl+" goodput req/s", "%.1f", func(m metrics.Summary) float64 { return opt(m.PerSLO[cl].Goodput) })
		}
	}
	tw.Flush()
}

// opt reads an optional figure; NaN (printed "NaN") when the run lacks it.
func opt(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}

func routingLabel(cfg cluster.Config) string {
	if cfg.Routing.Policy != "weighted" {
		return cfg.Routing.Policy
	}
	parts := make([]string, 0, len(cfg.Routing.Scorers))
	for _, s := range cfg.Routing.Scorers {
		parts = append(parts, fmt.Sprintf("%s:%g", s.Name, s.Weight))
	}
	if len(parts) == 0 {
		return "weighted(default scorers)"
	}
	return "weighted(" + strings.Join(parts, ",") + ")"
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
