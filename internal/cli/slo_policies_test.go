package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// sloRun is the part of simulate's JSON the slo-deadline and probabilistic
// tests read.
type sloRun struct {
	Rejected   float64  `json:"rejected"`
	Attainment *float64 `json:"attainment"`
	Goodput    *float64 `json:"goodput"`
	PerSLO     map[string]struct {
		Count          float64  `json:"count"`
		Rejected       float64  `json:"rejected"`
		TTFTAttainment *float64 `json:"ttft_attainment"`
		TTFT           struct {
			P99 float64 `json:"p99"`
		} `json:"ttft_ms"`
	} `json:"per_slo"`
}

// sloRuns runs simulate with --output json on several seeds and returns
// the mean, each seed's run, and the raw output.
func sloRuns(t *testing.T, args ...string) (sloRun, []sloRun, string) {
	t.Helper()
	code, out, errs := run(t, append(append([]string{"simulate"}, args...), "--output", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var multi struct {
		Mean    sloRun   `json:"mean"`
		PerSeed []sloRun `json:"per_seed"`
	}
	if err := json.Unmarshal([]byte(out), &multi); err != nil {
		t.Fatal(err)
	}
	if len(multi.PerSeed) == 0 {
		t.Fatal("want several seeds")
	}
	return multi.Mean, multi.PerSeed, out
}

// Earliest deadline first, the deadline being arrival plus the class's
// TTFT target (orthogonal-slo: critical 200 ms, standard 300 ms,
// sheddable 1 s), serves each request by the time its target leaves it,
// so more requests meet their TTFT target than under FCFS. Measured on
// seeds 42-44 at the baseline: attainment 0.883 → 0.938 (+5.5 points;
// per seed +3.8, +5.8, +7.0), goodput 123.9 → 130.3 req/s (+5.2 %);
// TTFT attainment critical 0.693 → 1.000, standard 0.972 → 1.000,
// sheddable 1.000 → 1.000 (its P99 rises from 302 to 577 ms, inside its
// 1 s); critical TTFT P99 303 → 132 ms (−56 %).
func TestSLODeadlineRaisesAttainment(t *testing.T) {
	fcfs, fcfsSeeds, _ := sloRuns(t, baselineFlags...)
	edf, edfSeeds, _ := sloRuns(t, with(baselineFlags, "--scheduler", "slo-deadline")...)
	a, b := value(t, "fcfs attainment", fcfs.Attainment), value(t, "slo-deadline attainment", edf.Attainment)
	t.Logf("attainment %.4f → %.4f, goodput %.2f → %.2f", a, b, value(t, "goodput", fcfs.Goodput), value(t, "goodput", edf.Goodput))
	if b < a+0.03 {
		t.Errorf("attainment %.4f with slo-deadline, want ≥ fcfs's %.4f + 0.03", b, a)
	}
	for i := range fcfsSeeds {
		fa, ea := value(t, "attainment", fcfsSeeds[i].Attainment), value(t, "attainment", edfSeeds[i].Attainment)
		if ea < fa+0.02 {
			t.Errorf("seed %d: attainment %.4f with slo-deadline, want ≥ fcfs's %.4f + 0.02", i, ea, fa)
		}
	}
	if g, f := value(t, "goodput", edf.Goodput), value(t, "goodput", fcfs.Goodput); g < 1.03*f {
		t.Errorf("goodput %.2f with slo-deadline, want ≥ 1.03 × fcfs's %.2f", g, f)
	}
	for _, cl := range []string{"critical", "standard", "sheddable"} {
		f, e := fcfs.PerSLO[cl], edf.PerSLO[cl]
		fa, ea := value(t, cl+" TTFT attainment", f.TTFTAttainment), value(t, cl+" TTFT attainment", e.TTFTAttainment)
		t.Logf("%s: TTFT attainment %.4f → %.4f, TTFT P99 %.1f → %.1f ms", cl, fa, ea, f.TTFT.P99, e.TTFT.P99)
		if ea < fa || ea < 0.99 {
			t.Errorf("%s: TTFT attainment %.4f with slo-deadline, want ≥ 0.99 and ≥ fcfs's %.4f", cl, ea, fa)
		}
	}
	if c, f := edf.PerSLO["critical"].TTFT.P99, fcfs.PerSLO["critical"].TTFT.P99; c > 0.6*f {
		t.Errorf("critical TTFT P99 %.1f ms with slo-deadline, want ≤ 60%% of fcfs's %.1f", c, f)
	}
}

// Without any class TTFT target slo-deadline would be fcfs: simulate says
// so in one line naming --scheduler and where targets come from (the
// workload's slo_targets or the slo.ttft_target_ms settings), and a target
// given by flag makes it run.
func TestSLODeadlineNeedsATarget(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "untargeted.yaml")
	const text = `version: "2"
aggregate_rate: 100
num_requests: 50
clients:
  - {id: a, slo_class: critical, rate_fraction: 1, arrival: {process: poisson},
     input_distribution: {type: constant, params: {value: 30}}, output_distribution: {type: constant, params: {value: 5}}}
`
	if err := os.WriteFile(spec, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "simulate", "--workload-spec", spec, "--scheduler", "slo-deadline")
	if code != 2 || out != "" || strings.Count(strings.TrimRight(errs, "\n"), "\n") != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and one line", code, out, errs)
	}
	for _, want := range []string{"--scheduler: scheduler: slo-deadline", "slo_targets", "slo.ttft_target_ms.<class>"} {
		if !strings.Contains(errs, want) {
			t.Errorf("error %q does not name %q", errs, want)
		}
	}
	if code, _, errs := run(t, "simulate", "--workload-spec", spec, "--set", "scheduler=slo-deadline", "--slo-ttft", "critical=50ms"); code != 0 {
		t.Fatalf("with a target: exit %d: %s", code, errs)
	}
}

var overloadFlags = []string{
	"--workload", "orthogonal-slo@sustained-overload", "--seeds", "42,43,44", "--num-instances", "8",
	"--routing-policy", "weighted", "--routing-scorers", "prefix-affinity:3,queue-depth:2,kv-utilization:2",
	"--long-prefill-token-threshold", "256",
}

// In sustained overload (10,000 single-turn requests at 2000 req/s on a
// cluster that serves about 1,100) probabilistic admission sheds almost
// every sheddable request and nothing else, and the queue it keeps off
// the instances is the critical class's wait. Measured on seeds 42-44:
// sheddable 2969.7 of 3005.7 rejected (98.8 %), critical and standard 0;
// critical TTFT P99 4621 → 1609 ms (−65 %), standard 4639 → 1595 ms;
// overall attainment 0.136 → 0.271.
func TestProbabilisticAdmissionInOverload(t *testing.T) {
	open, _, _ := sloRuns(t, overloadFlags...)
	prob, perSeed, out := sloRuns(t, with(overloadFlags, "--admission-policy", "probabilistic")...)
	if open.Rejected != 0 {
		t.Errorf("always-admit rejected %v requests", open.Rejected)
	}
	shed := prob.PerSLO["sheddable"]
	t.Logf("sheddable: %.1f of %.1f rejected", shed.Rejected, shed.Count)
	if shed.Rejected < 0.9*shed.Count {
		t.Errorf("probabilistic rejected %.1f of %.1f sheddable requests, want ≥ 90 %%", shed.Rejected, shed.Count)
	}
	for _, s := range perSeed {
		for _, cl := range []string{"critical", "standard"} {
			if r := s.PerSLO[cl].Rejected; r != 0 {
				t.Errorf("%s: %v rejected; probabilistic never sheds it", cl, r)
			}
		}
	}
	for _, cl := range []string{"critical", "standard"} {
		p, o := prob.PerSLO[cl].TTFT.P99, open.PerSLO[cl].TTFT.P99
		t.Logf("%s: TTFT P99 %.1f → %.1f ms (%+.1f%%)", cl, o, p, 100*(p/o-1))
		if p > 0.5*o {
			t.Errorf("%s: TTFT P99 %.1f ms with probabilistic, want ≤ half of always-admit's %.1f", cl, p, o)
		}
	}
	if a, o := value(t, "attainment", prob.Attainment), value(t, "attainment", open.Attainment); a < o+0.08 {
		t.Errorf("attainment %.4f with probabilistic, want ≥ always-admit's %.4f + 0.08", a, o)
	}
	procs := runtime.GOMAXPROCS(1)
	_, _, again := sloRuns(t, with(overloadFlags, "--admission-policy", "probabilistic")...)
	runtime.GOMAXPROCS(procs)
	if again != out {
		t.Error("the same seeds again, at GOMAXPROCS 1, gave different output")
	}
	// Saturation stays far past the cap ((1/100)^(1/5) ≈ 0.40 for k 100)
	// through most of the run, so k 100 sheds nearly as much (measured
	// 2961.7).
	gentle, _, _ := sloRuns(t, with(overloadFlags, "--admission-policy", "probabilistic", "--probabilistic-k", "100")...)
	g := gentle.PerSLO["sheddable"]
	t.Logf("k 100: %.1f sheddable rejected", g.Rejected)
	if g.Rejected > shed.Rejected || g.Rejected < 0.9*g.Count {
		t.Errorf("k 100 rejected %.1f of %.1f sheddable requests, want ≥ 90 %% and ≤ k 300's %.1f", g.Rejected, g.Count, shed.Rejected)
	}
}

// A probabilistic setting under another admission policy is the standard
// inert-setting error; a bad value names the flag.
func TestProbabilisticSettingsNeedTheirPolicy(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"simulate", "--probabilistic-k", "100"},
			"--probabilistic-k sets admission.probabilistic.k, which has no effect unless admission.policy is probabilistic (it is always-admit)"},
		{[]string{"simulate", "--admission-policy", "slo-gated", "--slo-gate", "sheddable=5", "--set", "admission.probabilistic.power=3"},
			"--set admission.probabilistic.power=3 sets admission.probabilistic.power, which has no effect unless admission.policy is probabilistic (it is slo-gated)"},
		{[]string{"simulate", "--admission-policy", "probabilistic", "--probabilistic-kv-util-threshold", "0"},
			"--probabilistic-kv-util-threshold: admission.probabilistic.kv_util_threshold: 0 is out of range (allowed: numbers in [0.001, 1])"},
	}
	for _, c := range cases {
		code, out, errs := run(t, c.args...)
		if code != 2 || out != "" || !strings.Contains(errs, c.want) || strings.Count(strings.TrimRight(errs, "\n"), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, errs, c.want)
		}
	}
}

// template settings lists the new scheduler and the four probabilistic
// settings, with their defaults and the rule that makes them active.
func TestKnobsListSLODeadlineAndProbabilistic(t *testing.T) {
	code, out, errs := run(t, "template", "settings", "--output", "json")
	if code != 0 {
		t.Fatal(errs)
	}
	var rows []struct {
		Key, Flag, Default, Component, Active string
		Choices                               []string
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{
		"admission.probabilistic.queue_depth_threshold": {"--probabilistic-queue-depth-threshold", "5"},
		"admission.probabilistic.kv_util_threshold":     {"--probabilistic-kv-util-threshold", "0.8"},
		"admission.probabilistic.power":                 {"--probabilistic-power", "5"},
		"admission.probabilistic.k":                     {"--probabilistic-k", "300"},
	}
	found := 0
	for _, r := range rows {
		switch w, ok := want[r.Key]; {
		case ok:
			found++
			if r.Flag != w[0] || r.Default != w[1] || r.Component != "admission" || r.Active != "admission.policy is probabilistic" {
				t.Errorf("%s: flag %q, default %q, component %q, active %q", r.Key, r.Flag, r.Default, r.Component, r.Active)
			}
		case r.Key == "scheduler":
			if !slices.Contains(r.Choices, "slo-deadline") {
				t.Errorf("scheduler choices %v lack slo-deadline", r.Choices)
			}
		case r.Key == "admission.policy":
			if !slices.Contains(r.Choices, "probabilistic") {
				t.Errorf("admission.policy choices %v lack probabilistic", r.Choices)
			}
		}
	}
	if found != len(want) {
		t.Errorf("found %d of the %d probabilistic settings", found, len(want))
	}
}
