package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"optimize/data"
)

var update = flag.Bool("update", false, "rewrite golden files")

// baselineArgs is the llm-d-parity baseline: weighted pa:3,qd:2,kv:2 on 8
// instances with 256-token chunked prefill.
var baselineArgs = []string{
	"simulate", "--workload", "orthogonal-slo", "--seeds", "42,43,44", "--num-instances", "8",
	"--routing-policy", "weighted", "--routing-scorers", "prefix-affinity:3,queue-depth:2,kv-utilization:2",
	"--long-prefill-token-threshold", "256", "--output", "json",
}

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Execute(args, Streams{Out: &out, Err: &errb})
	return code, out.String(), errb.String()
}

func TestBaselineGoldenAndDeterminism(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var outputs []string
	for _, procs := range []int{1, 2, 2} {
		runtime.GOMAXPROCS(procs)
		code, out, errs := run(t, baselineArgs...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		outputs = append(outputs, out)
	}
	for i := 1; i < len(outputs); i++ {
		if outputs[i] != outputs[0] {
			t.Fatalf("run %d differs from run 0 (GOMAXPROCS 1 vs 2 or repeat)", i)
		}
	}
	golden := filepath.Join("testdata", "simulate_baseline.golden.json")
	if *update {
		if err := os.WriteFile(golden, []byte(outputs[0]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != outputs[0] {
		t.Fatalf("baseline summary changed; inspect and run `go test ./internal/cli -update` if intended")
	}
}

// TestBaselineMatchesBLIS checks the acceptance figures: means over seeds
// 42–44 within 15% of what BLIS measured on the same workload and flags.
func TestBaselineMatchesBLIS(t *testing.T) {
	code, out, errs := run(t, baselineArgs...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res struct {
		Mean struct {
			TTFT struct{ P99 float64 } `json:"ttft_ms"`
			E2E  struct{ P99 float64 } `json:"e2e_ms"`
			TPS  float64               `json:"tokens_per_sec"`
		} `json:"mean"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, blis float64
	}{
		{"TTFT P99 ms", res.Mean.TTFT.P99, 314.0},
		{"E2E P99 ms", res.Mean.E2E.P99, 5404.5},
		{"tokens/s", res.Mean.TPS, 17687},
	} {
		if dev := (c.got - c.blis) / c.blis; dev > 0.15 || dev < -0.15 {
			t.Errorf("%s = %.1f, BLIS %.1f: %+.1f%% (allowed ±15%%)", c.name, c.got, c.blis, 100*dev)
		} else {
			t.Logf("%s = %.1f vs BLIS %.1f (%+.1f%%)", c.name, c.got, c.blis, 100*dev)
		}
	}
}

func TestBadInputIsOneLineExit2(t *testing.T) {
	dir := t.TempDir()
	badSpec := filepath.Join(dir, "bad.yaml")
	os.WriteFile(badSpec, []byte("version: \"2\"\naggregate_rate: 10\nnum_requests: 5\nclientz: []\n"), 0o644)
	cases := []struct {
		name    string
		args    []string
		mention string
	}{
		{"unknown workload key", []string{"simulate", "--workload-spec", badSpec}, "clientz"},
		{"unknown scorer", []string{"simulate", "--routing-policy", "weighted", "--routing-scorers", "prefix-afinity:3"}, "prefix-afinity"},
		{"negative weight", []string{"simulate", "--routing-policy", "weighted", "--routing-scorers", "queue-depth:-2"}, "queue-depth"},
		{"malformed int", []string{"simulate", "--num-instances", "eight"}, "num-instances"},
		{"zero instances", []string{"simulate", "--num-instances", "0"}, "--num-instances"},
		{"unknown routing policy", []string{"simulate", "--routing-policy", "random"}, "random"},
		{"unknown scheduler", []string{"simulate", "--scheduler", "lifo"}, "lifo"},
		{"unknown workload", []string{"simulate", "--workload", "nope"}, "nope"},
		{"missing workload file", []string{"simulate", "--workload-spec", filepath.Join(dir, "none.yaml")}, "none.yaml"},
		{"bad output", []string{"simulate", "--output", "xml"}, "--output"},
		{"alpha arity", []string{"simulate", "--alpha-coeffs", "1,2"}, "--alpha-coeffs"},
		{"negative beta", []string{"simulate", "--beta-coeffs", "1,-2,3"}, "beta"},
		{"unknown flag", []string{"simulate", "--bogus"}, "bogus"},
		{"two workloads", []string{"simulate", "--workload", "orthogonal-slo", "--trace", "x.yaml"}, "exclusive"},
		{"scorers without weighted", []string{"simulate", "--routing-scorers", "queue-depth:2"}, "--routing-scorers sets routing.weight.queue-depth, which has no effect unless routing.policy is weighted (it is round-robin)"},
		{"scorer knob without its scorer", []string{"simulate", "--routing-policy", "weighted", "--cache-signal-delay", "5"}, "--cache-signal-delay"},
		{"slo-base under constant", []string{"simulate", "--slo-base", "critical=7"}, "--slo-base"}, // critical=10 restates the default: no error
		{"slo-gate without slo-gated", []string{"simulate", "--slo-gate", "standard=3"}, "--slo-gate"},
		{"transfer knob without a CPU tier", []string{"simulate", "--kv-transfer-bandwidth", "10"}, "unless kv.cpu_blocks > 0 (it is 0)"},
		{"unknown --set key", []string{"simulate", "--set", "schedular=fcfs"}, `--set schedular=fcfs: unknown setting "schedular" (settings: admission.policy,`},
		{"--set without =", []string{"simulate", "--set", "scheduler"}, "--set scheduler: want KEY=VALUE"},
		{"--set and its flag", []string{"simulate", "--scheduler", "sjf", "--set", "scheduler=fcfs"}, "--set scheduler=fcfs: scheduler is also given by --scheduler; give it once"},
		{"the bridge", []string{"simulate", "--priority-bridge"}, "--priority-bridge sets priority.bridge, which has no effect: the scheduler rescores"},
		{"inactive --param", []string{"simulate", "--template", "precise-routing", "--param", "prefix_index_capacity=1000"},
			"--param: prefix_index_capacity: has no effect unless parameter prefix_affinity_weight is 1, 2, 3, 4 or 5 (it is 0)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := run(t, c.args...)
			if code != 2 {
				t.Fatalf("exit code %d, want 2 (stderr %q)", code, errs)
			}
			if out != "" {
				t.Fatalf("nothing may reach stdout on error, got %q", out)
			}
			if lines := strings.Count(strings.TrimRight(errs, "\n"), "\n"); lines != 0 {
				t.Fatalf("error must be one line, got %q", errs)
			}
			if !strings.Contains(errs, c.mention) {
				t.Fatalf("error %q does not name %q", errs, c.mention)
			}
		})
	}
}

// Every flag of the SLO and tiered-KV mechanisms rejects bad values with
// exit code 2 and a line naming it.
func TestMechanismFlagsRejectBadValues(t *testing.T) {
	for _, c := range []struct{ flag, value string }{
		{"--kv-cpu-blocks", "-1"},
		{"--kv-offload-threshold", "1.5"},
		{"--kv-transfer-bandwidth", "0"},
		{"--kv-transfer-base-latency", "-5"},
		{"--priority-policy", "urgent"},
		{"--slo-base", "critical=high"},
		{"--slo-age-weight", "-1"},
		{"--slo-urgency-threshold-ms", "vip=3"},
		{"--slo-prefill-threshold", "critical=-1"},
		{"--preemption-policy", "random"},
		{"--slo-gate", "standard"},
		{"--slo-ttft", "critical=0"},
		{"--slo-itl", "critical=-1ms"},
		{"--slo-e2e", "batch=fast"},
		{"--cache-signal-delay", "-1"},
		{"--slo-priority-blend", "critical=2"},
		{"--kv-pressure-transfer-scale", "-3"},
		{"--kv-pressure-slo-scale", "critical=x"},
	} {
		t.Run(c.flag, func(t *testing.T) {
			args := []string{"simulate", "--num-requests", "10", c.flag, c.value}
			if c.flag == "--slo-gate" {
				args = append(args, "--admission-policy", "slo-gated")
			}
			if c.flag == "--slo-priority-blend" || c.flag == "--kv-pressure-transfer-scale" || c.flag == "--kv-pressure-slo-scale" || c.flag == "--cache-signal-delay" {
				args = append(args, "--routing-policy", "weighted")
			}
			code, out, errs := run(t, args...)
			if code != 2 || out != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
			}
			if !strings.Contains(errs, c.flag) || strings.Count(strings.TrimRight(errs, "\n"), "\n") != 0 {
				t.Fatalf("error %q must be one line naming %s", errs, c.flag)
			}
		})
	}
}

// The text report shows per-class TTFT attainment for the classes given a
// TTFT target, SLO attainment and goodput for the classes given any
// target and for the run, and none of them without targets. The spec here
// has no slo_targets, so only the flags give targets.
func TestTextReportShowsAttainment(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "two.yaml")
	os.WriteFile(spec, []byte(`version: "2"
aggregate_rate: 200
num_requests: 200
clients:
  - {id: a, slo_class: critical, rate_fraction: 0.5, arrival: {process: poisson},
     input_distribution: {type: constant, params: {value: 100}}, output_distribution: {type: constant, params: {value: 20}}}
  - {id: b, slo_class: standard, rate_fraction: 0.5, arrival: {process: poisson},
     input_distribution: {type: constant, params: {value: 100}}, output_distribution: {type: constant, params: {value: 20}}}
`), 0o644)
	code, out, errs := run(t, "simulate", "--workload-spec", spec, "--slo-ttft", "critical=100ms", "--slo-e2e", "standard=5s")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	hasRow := func(out, name string) bool {
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), name+"  ") {
				return true
			}
		}
		return false
	}
	for _, row := range []string{"critical TTFT attainment", "critical SLO attainment", "critical goodput req/s",
		"standard SLO attainment", "standard goodput req/s", "SLO attainment", "goodput req/s"} {
		if !hasRow(out, row) {
			t.Errorf("no %q row:\n%s", row, out)
		}
	}
	if hasRow(out, "standard TTFT attainment") {
		t.Errorf("a standard TTFT attainment row without a standard TTFT target:\n%s", out)
	}
	code, out, errs = run(t, "simulate", "--workload-spec", spec)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if strings.Contains(out, "attainment") || strings.Contains(out, "goodput") {
		t.Errorf("attainment or goodput rows without targets:\n%s", out)
	}
}

// A run that would generate more requests than --max-requests is refused
// before it starts, naming the limit, whether the count came from a flag
// or from a spec file; raising the limit lets it run.
func TestSimulateRequestLimit(t *testing.T) {
	spec, err := fs.ReadFile(data.Workloads, "workloads/orthogonal-slo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(file, []byte(strings.Replace(string(spec), "num_requests: 1000", "num_requests: 20000000", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		say  string
	}{
		{[]string{"simulate", "--num-requests", "1000000000000"}, "--num-requests: 1000000000000 is over the limit of 10000000 requests per simulated run (--max-requests raises it)"},
		{[]string{"simulate", "--workload-spec", file}, file + ": num_requests: 20000000 is over the limit of 10000000 requests per simulated run (--max-requests raises it)"},
		{[]string{"simulate", "--seeds", "1-1001"}, "--seeds: 1001 is over the limit of 1000 seeds per study or command (--max-seeds raises it)"},
	} {
		code, out, errs := run(t, c.args...)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.say) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line saying %q", c.args, code, out, errs, c.say)
		}
	}
	if code, _, errs := run(t, "simulate", "--num-requests", "20", "--max-requests", "20"); code != 0 {
		t.Errorf("20 requests at a limit of 20: exit %d, %s", code, errs)
	}
}
