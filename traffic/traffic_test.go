package traffic

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"testing"

	"optimize/internal/testkit"
	"optimize/simcore/workload"
	"optimize/strategies/datasets"
	"optimize/strategies/workloads"
)

// measureDataset measures a dataset's trace over 60 s windows, from the
// test's dataset cache (testkit.Datasets).
func measureDataset(t *testing.T, name string) *Stats {
	t.Helper()
	testkit.Datasets(t)
	w, err := workloads.Resolve(name)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := w.Trace.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	st, err := Measure(FromTrace(tr), 60e6)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestMooncakeFiguresFromTheRawFile checks Measure on the Mooncake
// conversation trace against figures computed straight from its JSON
// lines: request count, span, mean input and the share of 512-token
// blocks whose hash id appeared earlier in the trace.
func TestMooncakeFiguresFromTheRawFile(t *testing.T) {
	testkit.Datasets(t)
	d, _ := datasets.Lookup("mooncake-conversation")
	file, err := datasets.Locate(d)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var n, blocks, seenBefore int
	var inputSum, firstMs, lastMs float64
	seen := map[int64]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var row struct {
			Timestamp   float64 `json:"timestamp"`
			InputLength float64 `json:"input_length"`
			HashIDs     []int64 `json:"hash_ids"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			firstMs = row.Timestamp
		}
		lastMs = row.Timestamp
		n++
		inputSum += row.InputLength
		for _, id := range row.HashIDs {
			blocks++
			if seen[id] {
				seenBefore++
			}
			seen[id] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	span, meanInput, reuse := (lastMs-firstMs)/1000, inputSum/float64(n), float64(seenBefore)/float64(blocks)

	st := measureDataset(t, "mooncake-conversation")
	if st.Requests != n || math.Abs(st.SpanS-span) > 1e-6 || math.Abs(st.Input.Mean-meanInput) > 1e-6 ||
		st.Reuse == nil || math.Abs(st.Reuse.ByBlocks-reuse) > 1e-12 || st.Reuse.Blocks != int64(blocks) {
		t.Fatalf("Measure: %d requests, %.3f s, mean input %.3f, reuse %+v; from the file: %d, %.3f s, %.3f, %d of %d blocks",
			st.Requests, st.SpanS, st.Input.Mean, st.Reuse, n, span, meanInput, seenBefore, blocks)
	}
	// The figures the trace is known by.
	if n != 12031 || math.Abs(span-3537) > 1 || math.Abs(meanInput-12035) > 1 || math.Abs(100*reuse-36.6) > 0.05 {
		t.Fatalf("Mooncake conversation: %d requests, %.1f s, mean input %.1f, block reuse %.2f %%; want 12031, ≈3537 s, ≈12035, ≈36.6 %%",
			n, span, meanInput, 100*reuse)
	}
	// Reuse grows over time as earlier requests fill the cache.
	if first, w := st.Windows[0].BlockReuse, st.Windows[len(st.Windows)/2].BlockReuse; *first > 0.1 || *w < 0.25 {
		t.Fatalf("block reuse in the first window %.3f (want < 0.1), mid-trace %.3f (want > 0.25)", *first, *w)
	}
}

// TestAzureFitWithinFivePercent: the spec fitted to the Azure
// conversation trace generates a workload within 5 % of the trace's mean
// rate, peak 60 s rate, inter-arrival CV and length quartiles; a Poisson
// stream at the trace's mean rate misses the peak rate and the CV.
func TestAzureFitWithinFivePercent(t *testing.T) {
	st := measureDataset(t, "azure-conv-2023")
	f, err := Fit(st, FitOptions{Name: "azure-conv-2023", Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	gen, err := Generate(f.Spec, 60e6, 16)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range Compare(st, gen, Tolerance) {
		if !c.OK {
			t.Errorf("fitted: %s trace %.3f generated %.3f (%.1f %% apart)", c.Figure, c.Trace, c.Generated, 100*c.RelDiff)
		}
	}
	poisson, err := Generate(PoissonAtMean(f.Spec, st), 60e6, 16)
	if err != nil {
		t.Fatal(err)
	}
	checks := Compare(st, poisson, Tolerance)
	if AllOK(checks) {
		t.Fatalf("a Poisson stream at the mean rate passes the check: %+v", checks)
	}
	if peak := checks[1]; peak.OK || peak.RelDiff < 0.15 {
		t.Errorf("Poisson peak window rate %.3f against the trace's %.3f: want more than 15 %% below", peak.Generated, peak.Trace)
	}
	for _, p := range f.Parts {
		if p.KS > 0.02 {
			t.Errorf("%s: %s has KS %.4f to the trace, want ≤ 0.02", p.Name, p.Model, p.KS)
		}
	}
	// The written spec reads back as the same workload.
	data, err := SpecYAML(f.Spec, "fitted")
	if err != nil {
		t.Fatal(err)
	}
	back, err := workload.ParseSpec("fitted.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Generate(back, 60e6, 16)
	if err != nil {
		t.Fatal(err)
	}
	if again.Requests != gen.Requests || again.PeakRate != gen.PeakRate || again.Input != gen.Input {
		t.Fatalf("the YAML spec generates %d requests (peak %.3f), the fitted one %d (peak %.3f)", again.Requests, again.PeakRate, gen.Requests, gen.PeakRate)
	}
}

// TestGammaCVFromWindows: with equal windows the stream's CV is the
// clients' own; with unequal rates the clients' CV must be lower.
func TestGammaCVFromWindows(t *testing.T) {
	even := []segment{{0, 60e6, 300}, {60e6, 120e6, 300}}
	if c := gammaCV(even, 1.5, 600); math.Abs(c-1.5) > 1e-3 {
		t.Fatalf("equal windows: client CV %.3f, want 1.5", c)
	}
	uneven := []segment{{0, 60e6, 100}, {60e6, 120e6, 500}}
	if c := gammaCV(uneven, 1.5, 600); c > 1.45 {
		t.Fatalf("unequal windows: client CV %.3f, want below 1.45", c)
	}
}

func TestKS(t *testing.T) {
	a := []float64{1, 2, 3, 4}
	if d := KSTwoSample(a, a); d != 0 {
		t.Fatalf("KS of a sample to itself %g", d)
	}
	if d := KSTwoSample(a, []float64{5, 6, 7, 8}); d != 1 {
		t.Fatalf("KS of disjoint samples %g, want 1", d)
	}
	xs := make([]int, 1000)
	for i := range xs {
		xs[i] = 100 + i%50
	}
	c := fitLengths(xs, 200)
	if c[0].Model != "empirical" || c[0].KS > 0.01 || c[len(c)-1].KS < 0.2 {
		t.Fatalf("uniform 100..149: %+v", c)
	}
}
