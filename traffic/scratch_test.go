package traffic

import (
	"fmt"
	"testing"

	"optimize/simcore/workload"
)

func TestScratch(t *testing.T) {
	for _, path := range []string{"/work/traces/AzureLLMInferenceTrace_conv.csv", "/work/traces/mooncake_conversation_trace.jsonl"} {
		tr, err := workload.OpenTrace(path, "")
		if err != nil {
			t.Fatal(err)
		}
		st, err := Measure(FromTrace(tr), 60e6)
		tr.Close()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("%s: n=%d span=%.1f mean=%.3f peak=%.3f cv=%.3f in=%+v out=%+v reuse=%+v sessions=%d\n", path, st.Requests, st.SpanS, st.MeanRate, st.PeakRate, st.InterArrivalCV, st.Input, st.Output, st.Reuse, st.Sessions)
		f, err := Fit(st, FitOptions{Name: path, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range f.Parts {
			fmt.Printf("  %s: %s KS %.4f\n", p.Name, p.Model, p.KS)
			for _, c := range p.Candidates {
				fmt.Printf("     %s %.4f\n", c.Model, c.KS)
			}
		}
		fmt.Println("  groups", f.Groups, "cv", f.ClientCV, "clients", len(f.Spec.Clients))
		for seed := int64(1); seed <= 6; seed++ {
			f.Spec.Seed = seed
			g, err := Generate(f.Spec, 60e6, 16)
			if err != nil {
				t.Fatal(err)
			}
			fails := ""
			for _, c := range Compare(st, g, Tolerance) {
				if !c.OK {
					fails += fmt.Sprintf(" [%s %.3f vs %.3f]", c.Figure, c.Trace, c.Generated)
				}
			}
			fmt.Printf("  seed %d fit ok=%v%s\n", seed, fails == "", fails)
		}
		p := PoissonAtMean(f.Spec, st)
		g, err := Generate(p, 60e6, 16)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range Compare(st, g, Tolerance) {
			fmt.Printf("  poisson %s %.3f %.3f %v\n", c.Figure, c.Trace, c.Generated, c.OK)
		}
	}
}
