package cli

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"optimize/studies/report/plot"
	"optimize/traffic"
)

// inspectJSON is workload inspect --output json.
type inspectJSON struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	*traffic.Stats
}

func newWorkloadInspect(s Streams) *cobra.Command {
	var output, plotDir string
	o := &workloadOpen{}
	cmd := &cobra.Command{
		Use:   "inspect NAME|FILE",
		Short: "Requests, span, rates, inter-arrival CV, length quantiles, prefix reuse and sessions of a workload or trace",
		Long: `Measure a trace file (Mooncake JSONL, Azure CSV, BurstGPT CSV, TraceV2),
a trace dataset (fetched by optimize workload fetch), a built-in workload
or a workload spec file (a workload is measured on the requests its
generator draws, at its seed or --seed).
Prefix reuse: a prompt block is reused when an earlier request contained
it (Mooncake's hash_ids, 512-token blocks; a generated workload's blocks of
--block-size tokens); by block count and token-weighted. Traces without
prefix identity have none.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			if err := o.check(); err != nil {
				return err
			}
			src, st, err := o.measure(args[0])
			if err != nil {
				return err
			}
			if plotDir != "" {
				if err := writeTrafficFigures(s, plotDir, src.name, st); err != nil {
					return err
				}
			}
			if output == "json" {
				return writeIndented(s.Out, inspectJSON{Name: src.name, Kind: src.kind, Stats: st})
			}
			return failed(writeInspect(s.Out, src, st))
		},
	}
	o.bind(cmd)
	cmd.Flags().Int64Var(&o.seed, "seed", 0, "seed of a generated workload (default: its spec's)")
	cmd.Flags().IntVar(&o.blockSize, "block-size", blockSizeDefault(), "tokens per block of a generated workload's prompts")
	cmd.Flags().StringVar(&output, "output", "text", "text or json")
	cmd.Flags().StringVar(&plotDir, "plot", "", "directory to write the pictures to (rate, lengths, reuse; PNG and SVG)")
	return cmd
}

func writeInspect(w io.Writer, src *workloadSource, st *traffic.Stats) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s)\n", src.name, src.kind)
	row := func(k, format string, args ...any) { fmt.Fprintf(&b, "  %-18s %s\n", k, fmt.Sprintf(format, args...)) }
	row("requests", "%d", st.Requests)
	row("span", "%.1f s (%.1f min), first to last arrival", st.SpanS, st.SpanS/60)
	row("mean rate", "%.3f req/s", st.MeanRate)
	row("peak rate", "%.3f req/s (%g s windows; the busiest starts at %.0f s)", st.PeakRate, st.WindowS, st.PeakWindowS)
	row("inter-arrival CV", "%.3f (Poisson: 1)", st.InterArrivalCV)
	for _, l := range []struct {
		name string
		q    traffic.Lengths
	}{{"input tokens", st.Input}, {"output tokens", st.Output}} {
		row(l.name, "mean %s  p10 %s  p25 %s  p50 %s  p75 %s  p90 %s  p99 %s  max %s", tenths(l.q.Mean), tenths(l.q.P10), tenths(l.q.P25),
			tenths(l.q.P50), tenths(l.q.P75), tenths(l.q.P90), tenths(l.q.P99), tenths(l.q.Max))
	}
	if st.Reuse == nil {
		row("prefix reuse", "none (no prefix identity in this workload)")
	} else {
		r := st.Reuse
		row("prefix reuse", "%.1f %% of blocks (%d of %d %d-token blocks seen earlier), %.1f %% of prompt tokens", 100*r.ByBlocks, r.ReusedBlock, r.Blocks, r.BlockTokens, 100*r.ByTokens)
		var by []float64
		for _, win := range st.Windows {
			if win.BlockReuse != nil {
				by = append(by, *win.BlockReuse)
			}
		}
		slices.Sort(by)
		if len(by) > 0 {
			row("reuse over time", "per %g s window, by blocks: first %.1f %%, min %.1f %%, median %.1f %%, max %.1f %%, last %.1f %%", st.WindowS,
				100*firstReuse(st), 100*by[0], 100*traffic.Quantile(by, 0.5), 100*by[len(by)-1], 100*lastReuse(st))
		}
	}
	if st.Sessions == 0 {
		row("sessions", "none")
	} else {
		row("sessions", "%d (%.2f requests per session)", st.Sessions, float64(st.Requests)/float64(st.Sessions))
	}
	row("zero output", "%d requests", st.ZeroOutputCount)
	_, err := io.WriteString(w, b.String())
	return err
}

// tenths writes x to a tenth, without a trailing ".0".
func tenths(x float64) string { return strconv.FormatFloat(math.Round(x*10)/10, 'f', -1, 64) }

func firstReuse(st *traffic.Stats) float64 {
	for _, w := range st.Windows {
		if w.BlockReuse != nil {
			return *w.BlockReuse
		}
	}
	return 0
}

func lastReuse(st *traffic.Stats) float64 {
	for i := len(st.Windows) - 1; i >= 0; i-- {
		if st.Windows[i].BlockReuse != nil {
			return *st.Windows[i].BlockReuse
		}
	}
	return 0
}

// writeTrafficFigures writes each picture as DIR/NAME-KIND.png and .svg
// and names them on stderr.
func writeTrafficFigures(s Streams, dir, name string, st *traffic.Stats) error {
	figs, err := plot.TrafficFigures(name, st)
	if err != nil {
		return failed(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return failed(err)
	}
	base := strings.TrimSuffix(name, filepath.Ext(name))
	for _, f := range figs {
		for _, format := range plot.Formats {
			var buf bytes.Buffer
			if err := plot.WriteFigure(&buf, f, format); err != nil {
				return failed(err)
			}
			file := filepath.Join(dir, base+"-"+f.Name+"."+format)
			if err := writeFile(s, file, buf.Bytes()); err != nil {
				return err
			}
			fmt.Fprintf(s.Err, "wrote %s\n", file)
		}
	}
	return nil
}
