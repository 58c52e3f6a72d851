//go:build quality

package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// samplerRun is one study's trials as the side-by-side reads them: per
// trial in number order, the primary objective's ratio to the baseline
// and whether the trial met every constraint.
type samplerRun struct {
	ratio    []float64
	feasible []bool
}

// bestFeasible is the lowest feasible ratio among the first n trials
// (+Inf when none is feasible).
func (r samplerRun) bestFeasible(n int) float64 {
	best := math.Inf(1)
	for i := 0; i < n && i < len(r.ratio); i++ {
		if r.feasible[i] {
			best = math.Min(best, r.ratio[i])
		}
	}
	return best
}

// trialsTo is the number of trials after which the best feasible ratio is
// at most target (0: never).
func (r samplerRun) trialsTo(target float64) int {
	for n := 1; n <= len(r.ratio); n++ {
		if r.bestFeasible(n) <= target {
			return n
		}
	}
	return 0
}

// oursRun runs a study of template with our sampler through the CLI (one
// worker) and reads its trials back from study export.
func oursRun(t *testing.T, bin, template, primary, sampler string, seed int64, trials int, extra ...string) samplerRun {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	args := append([]string{"study", "create", template, "--trials", fmt.Sprint(trials), "--workers", "1",
		"--sampler", sampler, "--sampler-seed", fmt.Sprint(seed), "--storage", db, "--name", "s"}, extra...)
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s seed %d: %v\n%s", template, sampler, seed, err, out)
	}
	out, err := exec.Command(bin, "study", "export", "s", "--storage", db, "--format", "json").Output()
	if err != nil {
		t.Fatal(err)
	}
	// Each trial's score is min(ratio, 10) + 1000 × its shortfall: a
	// feasible trial's score is its capped ratio.
	var rows []map[string]any
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("study export --format json: %v", err)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i]["trial"].(float64) < rows[j]["trial"].(float64) })
	var r samplerRun
	for _, row := range rows {
		ratio := 1 + row[primary+"_delta"].(float64)
		r.ratio = append(r.ratio, ratio)
		r.feasible = append(r.feasible, math.Abs(row["score"].(float64)-math.Min(ratio, 10)) < 1e-9)
	}
	return r
}

// optunaRun drives evaluate with Optuna (docs/examples/optuna_evaluate.py).
func optunaRun(t *testing.T, py, bin, template, sampler string, seed int64, trials int) samplerRun {
	script, err := filepath.Abs(filepath.Join("..", "..", "docs", "examples", "optuna_evaluate.py"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, script, "--optimize", bin, "--template", template, "--trials", fmt.Sprint(trials),
		"--seed", fmt.Sprint(seed), "--sampler", sampler, "--value", "rank").Output()
	if err != nil {
		t.Fatalf("optuna %s seed %d: %v", sampler, seed, err)
	}
	var r samplerRun
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var tr struct {
			Ratio    float64 `json:"ratio"`
			Feasible bool    `json:"feasible"`
		}
		if err := json.Unmarshal([]byte(line), &tr); err != nil {
			t.Fatalf("optuna output %q: %v", line, err)
		}
		r.ratio = append(r.ratio, tr.Ratio)
		r.feasible = append(r.feasible, tr.Feasible)
	}
	return r
}

// sideBySide is one row of the table: a sampler's runs over seeds 1..n.
type sideBySide struct {
	name string
	runs []samplerRun
}

func medianOf(xs []float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	n := len(s)
	return (s[(n-1)/2] + s[n/2]) / 2
}

// at is the median, over seeds, of the best feasible ratio after n trials,
// and the interquartile range.
func (row sideBySide) at(n int) (median, iqr float64) {
	var xs []float64
	for _, r := range row.runs {
		xs = append(xs, r.bestFeasible(n))
	}
	sort.Float64s(xs)
	q := func(p float64) float64 { return xs[int(math.Round(p*float64(len(xs)-1)))] }
	return medianOf(xs), q(0.75) - q(0.25)
}

// to is the median number of trials to reach target (a run that never
// does counts as one beyond its length) and how many never do.
func (row sideBySide) to(target float64) (median float64, never int) {
	var xs []float64
	for _, r := range row.runs {
		n := r.trialsTo(target)
		if n == 0 {
			n, never = len(r.ratio)+1, never+1
		}
		xs = append(xs, float64(n))
	}
	return medianOf(xs), never
}

// runSamplerSeeds runs fn for seeds 1..n, two at a time (the machine's cores).
func runSamplerSeeds(n int, fn func(seed int64) samplerRun) []samplerRun {
	out := make([]samplerRun, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = fn(int64(i + 1))
		}()
	}
	wg.Wait()
	return out
}

// TestSamplersAgainstOptuna is the side-by-side of BENCHMARKS.md
// ("Samplers against Optuna"): joint-slo, 100 trials, one worker, sampler
// seeds 1-10, the value the best feasible critical TTFT P99 as a ratio to
// the baseline's; Optuna (Debian's python3-optuna) drives the same
// simulator through evaluate and minimises the samplers' rank (the
// primary ratio plus 10 × the shortfall), as ours do. It asserts that the
// default sampler (gp) is ahead of Optuna's TPE at 25, 50 and 100 trials
// and reaches Optuna's 100-trial median in fewer trials, and issue 42's
// bars on its medians: at most 0.262, 0.245 and 0.240 after 25, 50 and
// 100 trials, and 20 or fewer trials to 0.27, and that its spread between
// seeds at 50 trials (the interquartile range) is no wider than Optuna
// TPE's.
func TestSamplersAgainstOptuna(t *testing.T) {
	const issueTarget = 0.27
	bin := buildBinary(t)
	py := optunaPython(t)
	const template, trials, seeds = "joint-slo", 100, 10
	rows := []sideBySide{}
	for _, s := range []string{"gp", "tpe", "random"} {
		rows = append(rows, sideBySide{"ours, " + s, runSamplerSeeds(seeds, func(seed int64) samplerRun {
			return oursRun(t, bin, template, "critical_ttft_p99", s, seed, trials)
		})})
	}
	for _, s := range []string{"tpe", "tpe-multivariate"} {
		rows = append(rows, sideBySide{"Optuna " + s, runSamplerSeeds(seeds, func(seed int64) samplerRun {
			return optunaRun(t, py, bin, template, s, seed, trials)
		})})
	}
	optunaTPE := rows[3]
	target, _ := optunaTPE.at(trials)
	var table strings.Builder
	fmt.Fprintf(&table, "| sampler (median of %d seeds) | best @25 | @50 | @100 | IQR @50 | trials to ≤ %.3f (Optuna TPE's @100) | trials to ≤ %.2f |\n|---|---|---|---|---|---|---|\n", seeds, target, issueTarget)
	for _, row := range rows {
		m25, _ := row.at(25)
		m50, iqr50 := row.at(50)
		m100, _ := row.at(100)
		to, never := row.to(target)
		to27, never27 := row.to(issueTarget)
		fmt.Fprintf(&table, "| %s | %.3f | %.3f | %.3f | %.3f | %.1f (never: %d) | %.1f (never: %d) |\n", row.name, m25, m50, m100, iqr50, to, never, to27, never27)
	}
	t.Logf("%s, %d trials, one worker, sampler seeds 1-%d (ratio to the baseline's %s, lower is better)\n%s", template, trials, seeds, "critical TTFT P99", table.String())
	if os.Getenv("OPTIMIZE_SIDE_BY_SIDE_NO_ASSERT") != "" {
		return
	}
	gp := rows[0]
	for _, n := range []int{25, 50, 100} {
		g, _ := gp.at(n)
		o, _ := optunaTPE.at(n)
		if g >= o {
			t.Errorf("@%d: gp's median best %.3f is not ahead of Optuna TPE's %.3f", n, g, o)
		}
	}
	for _, b := range []struct {
		n   int
		bar float64
	}{{25, 0.262}, {50, 0.245}, {100, 0.240}} {
		if g, _ := gp.at(b.n); g > b.bar {
			t.Errorf("@%d: gp's median best %.3f is above issue 42's bar %.3f", b.n, g, b.bar)
		}
	}
	if to27, _ := gp.to(issueTarget); to27 > 20 {
		t.Errorf("gp reaches %.2f in a median %.1f trials; issue 42's bar is 20", issueTarget, to27)
	}
	_, gIQR := gp.at(50)
	if _, oIQR := optunaTPE.at(50); gIQR > oIQR {
		t.Errorf("@50: gp's interquartile range %.3f is wider than Optuna TPE's %.3f", gIQR, oIQR)
	}
	gTo, _ := gp.to(target)
	oTo, _ := optunaTPE.to(target)
	if gTo >= oTo {
		t.Errorf("gp reaches %.3f in a median %.1f trials, Optuna TPE in %.1f", target, gTo, oTo)
	}
}
