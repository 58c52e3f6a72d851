package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goodputRun is the part of simulate's JSON the goodput tests read.
type goodputRun struct {
	MakespanMs float64  `json:"makespan_ms"`
	Attainment *float64 `json:"attainment"`
	Goodput    *float64 `json:"goodput"`
	PerSLO     map[string]struct {
		Count          float64  `json:"count"`
		Completed      float64  `json:"completed"`
		Rejected       float64  `json:"rejected"`
		TTFTAttainment *float64 `json:"ttft_attainment"`
		Attainment     *float64 `json:"attainment"`
		Goodput        *float64 `json:"goodput"`
	} `json:"per_slo"`
}

// goodputRuns runs simulate with --output json over several seeds and
// returns the mean and each seed's run.
func goodputRuns(t *testing.T, args ...string) (goodputRun, []goodputRun) {
	t.Helper()
	code, out, errs := run(t, append(append([]string{"simulate"}, args...), "--output", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var multi struct {
		Mean    goodputRun   `json:"mean"`
		PerSeed []goodputRun `json:"per_seed"`
	}
	if err := json.Unmarshal([]byte(out), &multi); err != nil {
		t.Fatal(err)
	}
	if len(multi.PerSeed) == 0 {
		t.Fatal("want several seeds")
	}
	return multi.Mean, multi.PerSeed
}

func value(t *testing.T, name string, p *float64) float64 {
	t.Helper()
	if p == nil {
		t.Fatalf("%s: absent", name)
	}
	return *p
}

// orthogonal-slo's slo_targets (critical TTFT 200 ms + ITL 30 ms, standard
// 300 ms + 40 ms, sheddable TTFT 1 s + E2E 5 s) reach the run without any
// flag: every class and the whole run report attainment and goodput.
// Measured at baseline, seeds 42-44: critical 0.622, standard 0.915,
// sheddable 0.982, overall 0.883. Per seed, goodput is attainment × count
// per second of makespan, and the overall figures pool the classes.
func TestWorkloadTargetsGiveAttainmentAndGoodput(t *testing.T) {
	mean, runs := goodputRuns(t, baselineFlags...)
	for _, c := range []struct {
		class     string
		low, high float64
	}{{"critical", 0.55, 0.70}, {"standard", 0.87, 0.96}, {"sheddable", 0.95, 1}} {
		cs := mean.PerSLO[c.class]
		a := value(t, c.class+" attainment", cs.Attainment)
		t.Logf("%s: attainment %.3f (TTFT alone %.3f), goodput %.1f/s", c.class, a, value(t, "ttft", cs.TTFTAttainment), value(t, "goodput", cs.Goodput))
		if a < c.low || a > c.high {
			t.Errorf("%s attainment %.3f, want in [%.2f, %.2f] (measured at baseline)", c.class, a, c.low, c.high)
		}
		if ttft := *cs.TTFTAttainment; a > ttft {
			t.Errorf("%s attainment %.3f above its TTFT attainment %.3f: TTFT is one of its targets", c.class, a, ttft)
		}
	}
	if a := value(t, "attainment", mean.Attainment); a < 0.83 || a > 0.93 {
		t.Errorf("overall attainment %.3f, want in [0.83, 0.93] (measured 0.883)", a)
	}
	for i, r := range runs {
		sec := r.MakespanMs / 1000
		var met, count float64
		for class, cs := range r.PerSLO {
			a, g := value(t, class+" attainment", cs.Attainment), value(t, class+" goodput", cs.Goodput)
			if want := a * cs.Count / sec; math.Abs(g-want) > 1e-9 {
				t.Errorf("seed %d %s: goodput %v, want attainment × count / makespan = %v", i, class, g, want)
			}
			met += a * cs.Count
			count += cs.Count
		}
		if a := value(t, "attainment", r.Attainment); math.Abs(a-met/count) > 1e-9 {
			t.Errorf("seed %d: attainment %v, want pooled %v", i, a, met/count)
		}
		if g := value(t, "goodput", r.Goodput); math.Abs(g-met/sec) > 1e-9 {
			t.Errorf("seed %d: goodput %v, want %v", i, g, met/sec)
		}
	}

	// multi-turn-kv's targets (critical, batch) reach the run too.
	code, out, errs := run(t, "simulate", "--workload", "multi-turn-kv", "--num-instances", "4", "--output", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var mt goodputRun
	if err := json.Unmarshal([]byte(out), &mt); err != nil {
		t.Fatal(err)
	}
	for _, class := range []string{"critical", "batch"} {
		value(t, "multi-turn-kv "+class+" attainment", mt.PerSLO[class].Attainment)
	}
}

// --slo-ttft overrides the workload's target for the class it names and
// only for it: a tighter critical TTFT target lowers critical attainment,
// a looser one raises it (measured 0.622 at the workload's 200 ms, 0.349
// at 150 ms, 0.901 at 300 ms), the other classes keep theirs exactly.
// --set gives the same run as the flag.
func TestSLOTTFTFlagOverridesWorkloadTarget(t *testing.T) {
	spec, _ := goodputRuns(t, baselineFlags...)
	tight, _ := goodputRuns(t, with(baselineFlags, "--slo-ttft", "critical=150ms")...)
	loose, _ := goodputRuns(t, with(baselineFlags, "--slo-ttft", "critical=0.3s")...)
	viaSet, _ := goodputRuns(t, with(baselineFlags, "--set", "slo.ttft_target_ms.critical=150")...)
	crit := func(r goodputRun) float64 { return value(t, "critical attainment", r.PerSLO["critical"].Attainment) }
	t.Logf("critical attainment: %.3f at 150 ms, %.3f at the workload's 200 ms, %.3f at 300 ms", crit(tight), crit(spec), crit(loose))
	if crit(tight) > crit(spec)-0.2 {
		t.Errorf("critical attainment %.3f at 150 ms, want ≤ %.3f − 0.2 (the workload's 200 ms)", crit(tight), crit(spec))
	}
	if crit(loose) < crit(spec)+0.2 {
		t.Errorf("critical attainment %.3f at 300 ms, want ≥ %.3f + 0.2", crit(loose), crit(spec))
	}
	if crit(viaSet) != crit(tight) {
		t.Errorf("--set slo.ttft_target_ms.critical=150 gives %.3f, --slo-ttft critical=150ms %.3f", crit(viaSet), crit(tight))
	}
	for _, class := range []string{"standard", "sheddable"} {
		s, o := spec.PerSLO[class].Attainment, tight.PerSLO[class].Attainment
		if value(t, class, s) != value(t, class, o) {
			t.Errorf("%s attainment %v with the critical override, %v without", class, *o, *s)
		}
	}
}

// Shedding cannot buy attainment: a rejected request counts as a miss.
// With sheddable gated at a queue depth of 20 (about 90% shed), sheddable
// attainment per seed is at most the admitted share, and exactly the
// completed share when the targets are so loose that every completed
// request meets them; it falls by at least 0.5 from always-admit's
// (measured 0.982 → 0.136) and the overall attainment by at least 0.1
// (0.883 → 0.718).
func TestSheddingCannotBuyAttainment(t *testing.T) {
	gate := []string{"--admission-policy", "slo-gated", "--slo-gate", "sheddable=20"}
	open, _ := goodputRuns(t, baselineFlags...)
	gated, runs := goodputRuns(t, with(baselineFlags, gate...)...)
	_, looseRuns := goodputRuns(t, with(baselineFlags, append(gate, "--slo-ttft", "sheddable=1000s", "--slo-e2e", "sheddable=1000s")...)...)
	for i, r := range runs {
		cs := r.PerSLO["sheddable"]
		a := value(t, "sheddable attainment", cs.Attainment)
		if cs.Rejected < 0.5*cs.Count {
			t.Fatalf("seed %d: %v of %v sheddable shed; the test needs most shed", i, cs.Rejected, cs.Count)
		}
		if admitted := (cs.Count - cs.Rejected) / cs.Count; a > admitted+1e-12 {
			t.Errorf("seed %d: sheddable attainment %.4f above the admitted share %.4f", i, a, admitted)
		}
		lc := looseRuns[i].PerSLO["sheddable"]
		if la := value(t, "loose sheddable attainment", lc.Attainment); math.Abs(la-lc.Completed/lc.Count) > 1e-12 {
			t.Errorf("seed %d: sheddable attainment %.4f with loose targets, want completed/count = %.4f", i, la, lc.Completed/lc.Count)
		}
	}
	o, g := value(t, "open", open.PerSLO["sheddable"].Attainment), value(t, "gated", gated.PerSLO["sheddable"].Attainment)
	t.Logf("sheddable attainment: %.3f always-admit, %.3f gated; overall %.3f → %.3f", o, g, *open.Attainment, *gated.Attainment)
	if g > o-0.5 {
		t.Errorf("gated sheddable attainment %.3f, want ≤ always-admit's %.3f − 0.5", g, o)
	}
	if ga, oa := value(t, "gated", gated.Attainment), value(t, "open", open.Attainment); ga > oa-0.1 {
		t.Errorf("gated overall attainment %.3f, want ≤ always-admit's %.3f − 0.1", ga, oa)
	}
}

// A template can hold a study to an attainment floor: the constraint
// loads, the baseline reports critical attainment (measured 0.622, below
// the 0.99 floor), and every trial is scored as violating it, since
// routing weights alone leave critical attainment under 0.9.
func TestTemplateAttainmentConstraint(t *testing.T) {
	dir := t.TempDir()
	writeAttainmentFloorTemplate(t, dir, "goodput-floor", "The baseline's queue-depth weight tuned for goodput, holding critical attainment to 0.99.")
	dsn := filepath.Join(t.TempDir(), "s.db")
	code, out, errs := run(t, "--templates-dir", dir, "study", "create", "goodput-floor", "--trials", "2",
		"--name", "g", "--storage", dsn, "--workers", "1")
	if code != 0 {
		t.Fatalf("create: exit %d: %s", code, errs)
	}
	if progress := out + errs; !strings.Contains(progress, "(violates a constraint)") {
		t.Errorf("no trial reported as violating the attainment floor:\n%s", progress)
	}
	// With every trial infeasible the report says so, the front is empty,
	// and validating the front is a usage error.
	code, out, errs = run(t, "--templates-dir", dir, "study", "show", "g", "--storage", dsn)
	if code != 0 || !strings.Contains(out, "no trial meets every constraint: trial ") ||
		!strings.Contains(out, "misses per_slo.critical.attainment ≥ 0.99") || !strings.Contains(out, "Pareto front: 0 trials · hypervolume 0.0000") {
		t.Errorf("show: exit %d, want the missed constraint named and an empty front:\n%s%s", code, out, errs)
	}
	if code, out, errs = run(t, "--templates-dir", dir, "study", "list", "--storage", dsn); code != 0 || !strings.Contains(out, "), misses a constraint") {
		t.Errorf("list: exit %d, want the best marked as missing a constraint:\n%s%s", code, out, errs)
	}
	page := filepath.Join(t.TempDir(), "g.html")
	code, _, errs = run(t, "--templates-dir", dir, "study", "report", "g", "--storage", dsn, "-o", page)
	if html, err := os.ReadFile(page); code != 0 || err != nil || !strings.Contains(string(html), "misses per_slo.critical.attainment ≥ 0.99.") {
		t.Errorf("report: exit %d (%s), read %v; want the missed constraint named", code, errs, err)
	}
	code, _, errs = run(t, "--templates-dir", dir, "study", "validate", "g", "--pareto", "--storage", dsn)
	if code != 2 || !strings.Contains(errs, "--pareto: study g has no trial within its constraints, so its Pareto front is empty") {
		t.Errorf("validate --pareto on an empty front: exit %d, stderr %q", code, errs)
	}
	code, out, errs = run(t, "--templates-dir", dir, "study", "show", "g", "--storage", dsn, "--output", "json")
	if code != 0 {
		t.Fatalf("show: exit %d: %s", code, errs)
	}
	var doc struct {
		Baseline goodputRun
		Best     struct {
			Metrics  goodputRun
			Violates string
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	base := value(t, "baseline critical attainment", doc.Baseline.PerSLO["critical"].Attainment)
	best := value(t, "best critical attainment", doc.Best.Metrics.PerSLO["critical"].Attainment)
	t.Logf("critical attainment: baseline %.3f, best trial %.3f", base, best)
	if base < 0.55 || base > 0.70 || best > 0.9 {
		t.Errorf("critical attainment %.3f at baseline (want in [0.55, 0.70]), %.3f at the best trial (want < 0.9)", base, best)
	}
	value(t, "best goodput", doc.Best.Metrics.Goodput)
	if doc.Best.Violates != "per_slo.critical.attainment ≥ 0.99" {
		t.Errorf("best.violates %q, want the attainment floor named", doc.Best.Violates)
	}
}

// Bad slo_targets in a spec file stop simulate with one line naming the
// file and the field.
func TestBadWorkloadTargetsAreOneLine(t *testing.T) {
	dir := t.TempDir()
	const spec = `version: "2"
aggregate_rate: 10
num_requests: 5
clients:
  - {id: a, slo_class: critical, rate_fraction: 1, arrival: {process: poisson},
     input_distribution: {type: constant, params: {value: 30}}, output_distribution: {type: constant, params: {value: 5}}}
slo_targets:
`
	for _, c := range []struct{ name, targets, want string }{
		{"unknown class", "  vip: {ttft_ms: 100}", `slo_targets.vip: unknown SLO class "vip"`},
		{"negative", "  critical: {e2e_ms: -1}", "slo_targets.critical.e2e_ms: must be a finite number > 0 (ms), got -1"},
		{"unknown key", "  critical: {ttft_p99_ms: 100}", "slo_targets.critical.ttft_p99_ms: line 8: unknown key (allowed: ttft_ms, itl_ms, e2e_ms)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".yaml")
			if err := os.WriteFile(file, []byte(spec+c.targets+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errs := run(t, "simulate", "--workload-spec", file)
			if code != 2 || out != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
			}
			if !strings.Contains(errs, file+": "+c.want) || strings.Count(strings.TrimRight(errs, "\n"), "\n") != 0 {
				t.Fatalf("error %q must be one line with %q", errs, file+": "+c.want)
			}
		})
	}
}

// writeAttainmentFloorTemplate writes a user template NAME.yaml into dir:
// the baseline's queue-depth weight tuned for goodput under a 0.99 floor
// on critical attainment, which routing weights alone cannot reach.
func writeAttainmentFloorTemplate(t *testing.T, dir, name, description string) {
	t.Helper()
	tpl := "name: " + name + "\ndescription: " + description + `
base: baseline
parameters:
  - {name: queue_depth_weight, type: float, low: 1, high: 5, default: 2, knob: routing.weight.queue-depth}
objectives:
  - {name: goodput, metric: goodput, direction: maximize}
  - {name: critical_attainment, metric: per_slo.critical.attainment, direction: maximize}
constraints:
  - {metric: per_slo.critical.attainment, min: 0.99}
`
	if err := os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(tpl), 0o644); err != nil {
		t.Fatal(err)
	}
}
