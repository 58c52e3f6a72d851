package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"optimize/traffic"
)

// fitJSON is workload fit --output json.
type fitJSON struct {
	Trace   string             `json:"trace"`
	Fit     *traffic.Fitted    `json:"fit"`
	Checks  []traffic.Check    `json:"checks"`         // the fitted spec's generated workload against the trace
	Poisson []traffic.Check    `json:"poisson_checks"` // a Poisson stream at the mean rate against the trace
	KS      map[string]float64 `json:"ks_generated"`   // two-sample KS, generated against trace
	OK      bool               `json:"ok"`
}

func newWorkloadFit(s Streams) *cobra.Command {
	var out, output string
	o := &workloadOpen{}
	cmd := &cobra.Command{
		Use:   "fit FILE|TRACE",
		Short: "Fit a v2 workload spec to a trace: arrivals with their burstiness, lengths, prefix groups; print the goodness of fit",
		Long: fmt.Sprintf(`Fit a BLIS v2 workload spec to a trace and write it (-o). The rate over
time is kept window by window (--window): one client per window, active
in it only, at its rate; each client's arrivals are a gamma process whose
CV gives the whole stream the trace's inter-arrival CV. Input and output
lengths take the model nearest the trace by Kolmogorov–Smirnov distance
(KS) among %s. With Mooncake hash_ids, the requests that
reuse a prefix are split into prefix groups by its length.
The fitted spec is then generated at its seed and checked against the
trace: mean rate, peak window rate, inter-arrival CV and length quartiles
within %.0f %%; a Poisson stream at the trace's mean rate is checked too.`, strings.Join(traffic.LengthModels, ", "), 100*traffic.Tolerance),
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
			f, err := traffic.Fit(st, traffic.FitOptions{Name: src.name, Seed: o.seed})
			if err != nil {
				return err
			}
			header := fmt.Sprintf("Fitted by `optimize workload fit` to %s (%s): %d requests over %.0f s, mean %.3f req/s.\n"+
				"One client per %g s window, active in it only; aggregate_rate is the sum of the windows' rates.", src.name, src.kind, st.Requests, st.SpanS, st.MeanRate, st.WindowS)
			data, err := traffic.SpecYAML(f.Spec, header)
			if err != nil {
				return failed(err)
			}
			window := o.window.Microseconds()
			gen, err := traffic.Generate(f.Spec, window, blockSizeDefault())
			if err != nil {
				return failed(err)
			}
			poisson, err := traffic.Generate(traffic.PoissonAtMean(f.Spec, st), window, blockSizeDefault())
			if err != nil {
				return failed(err)
			}
			res := fitJSON{Trace: src.name, Fit: f, Checks: traffic.Compare(st, gen, traffic.Tolerance),
				Poisson: traffic.Compare(st, poisson, traffic.Tolerance), KS: generatedKS(st, gen)}
			res.OK = traffic.AllOK(res.Checks)
			if out != "" {
				if err := writeFile(s, out, data); err != nil {
					return err
				}
			}
			if output == "json" {
				return writeIndented(s.Out, res)
			}
			if out == "" {
				if _, err := s.Out.Write(data); err != nil {
					return failed(err)
				}
				return failed(writeFitReport(s.Err, res))
			}
			return failed(writeFitReport(s.Out, res))
		},
	}
	o.bind(cmd)
	cmd.Flags().Int64Var(&o.seed, "seed", 1, "the fitted spec's seed")
	cmd.Flags().StringVarP(&out, "o", "o", "", "write the spec to this file (default: the spec to stdout, the report to stderr)")
	cmd.Flags().StringVar(&output, "output", "text", "the report: text or json")
	return cmd
}

// generatedKS is the two-sample KS distance, generated against trace, of
// the gaps, the input and the output lengths.
func generatedKS(trace, gen *traffic.Stats) map[string]float64 {
	gaps := func(st *traffic.Stats) []float64 {
		g := make([]float64, 0, len(st.Arrivals))
		for i := 1; i < len(st.Arrivals); i++ {
			g = append(g, float64(st.Arrivals[i]-st.Arrivals[i-1]))
		}
		slices.Sort(g)
		return g
	}
	sorted := func(xs []int) []float64 {
		f := make([]float64, len(xs))
		for i, x := range xs {
			f[i] = float64(x)
		}
		slices.Sort(f)
		return f
	}
	return map[string]float64{
		"inter_arrival": traffic.KSTwoSample(gaps(trace), gaps(gen)),
		"input":         traffic.KSTwoSample(sorted(trace.Inputs), sorted(gen.Inputs)),
		"output":        traffic.KSTwoSample(sorted(trace.Outputs), sorted(gen.Outputs)),
	}
}

func writeFitReport(w io.Writer, r fitJSON) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Fit of %s (KS: Kolmogorov–Smirnov distance of the model to the trace)\n", r.Trace)
	for _, p := range r.Fit.Parts {
		fmt.Fprintf(&b, "  %-44s %-40s KS %.4f", p.Name, p.Model, p.KS)
		if len(p.Candidates) > 1 {
			var others []string
			for _, c := range p.Candidates[1:] {
				others = append(others, fmt.Sprintf("%s %.3f", c.Model, c.KS))
			}
			fmt.Fprintf(&b, "  (others: %s)", strings.Join(others, ", "))
		}
		b.WriteByte('\n')
	}
	for _, g := range r.Fit.Groups {
		if g.Tokens > 0 {
			fmt.Fprintf(&b, "  prefix group %-31s %d tokens, %.1f %% of requests\n", g.Name, g.Tokens, 100*g.Share)
		}
	}
	fmt.Fprintf(&b, "Generated from the fitted spec against the trace: KS inter-arrival %.4f, input %.4f, output %.4f\n",
		r.KS["inter_arrival"], r.KS["input"], r.KS["output"])
	fmt.Fprintf(&b, "Check, within %.0f %%:\n  %-32s %12s %12s %8s %12s %8s\n", 100*traffic.Tolerance, "figure", "trace", "fitted", "diff", "poisson", "diff")
	for i, c := range r.Checks {
		p := r.Poisson[i]
		fmt.Fprintf(&b, "  %-32s %12.3f %12.3f %7.1f%%%s %12.3f %7.1f%%%s\n", c.Figure, c.Trace, c.Generated, 100*c.RelDiff, mark(c.OK), p.Generated, 100*p.RelDiff, mark(p.OK))
	}
	verdict := "fitted spec: PASS"
	if !r.OK {
		verdict = "fitted spec: FAIL (a figure differs by more than the tolerance)"
	}
	if traffic.AllOK(r.Poisson) {
		verdict += "; Poisson at the mean rate: PASS too (the trace is not bursty in these figures)"
	} else {
		verdict += "; Poisson at the mean rate: FAIL"
	}
	fmt.Fprintln(&b, verdict)
	_, err := io.WriteString(w, b.String())
	return err
}

func mark(ok bool) string {
	if ok {
		return " "
	}
	return "✗"
}
