package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// blisExplicitDefaults are BLIS 7fd7a88d's defaults of `blis run` flags,
// written out as BLIS users often do, plus f90a1e3a's defaults of the
// mechanisms we do not model and BLIS's workload-synthesis flags (which a
// workload spec makes BLIS ignore). A line gets those it does not set.
var blisExplicitDefaults = [][2]string{
	{"--scheduler", "fcfs"},
	{"--priority-policy", "constant"},
	{"--admission-policy", "always-admit"},
	{"--routing-policy", "round-robin"},
	{"--routing-scorers", "prefix-affinity:3,queue-depth:2,kv-utilization:2"},
	{"--max-num-running-reqs", "256"},
	{"--max-num-scheduled-tokens", "2048"},
	{"--long-prefill-token-threshold", "0"},
	{"--block-size-in-tokens", "16"},
	{"--kv-cpu-blocks", "0"},
	{"--kv-offload-threshold", "0.9"},
	{"--kv-transfer-bandwidth", "100.0"},
	{"--kv-transfer-base-latency", "0"},
	{"--snapshot-refresh-interval", "0"},
	{"--token-bucket-capacity", "10000"},
	{"--token-bucket-refill-rate", "1000"},
	{"--max-model-len", "0"},
	{"--latency-model", "blackbox"},
	{"--gpu-memory-utilization", "0.9"},
	{"--preemption-policy", "fcfs"},
	{"--admission-latency", "0"},
	{"--routing-latency", "0"},
	{"--workload", "distribution"},
	{"--rate", "1.0"},
	{"--prompt-tokens", "512"},
	{"--output-tokens", "512"},
	{"--trace-level", "none"},
	{"--counterfactual-k", "0"},
	{"--summarize-trace=false"},
	{"--log", "warn"},
	{"--defaults-filepath", "defaults.yaml"},
	{"--policy-config", ""},
	{"--flow-control=false"},
	{"--pd-decider", "never"},
	{"--prefill-instances", "0"},
	{"--dp", "1"},
	{"--timeout", "300"},
}

// blisLine turns a recorded `blis run` command into simulate's arguments:
// the verb and every flag as BLIS was given them, the workload path moved
// to our copy of the spec, and the explicit defaults the line lacks.
func blisLine(t *testing.T, cmd, blisWorkload, oursWorkload string) []string {
	t.Helper()
	fields := strings.Fields(cmd)
	if len(fields) < 2 || fields[0] != "blis" || fields[1] != "run" {
		t.Fatalf("not a blis run line: %q", cmd)
	}
	args := append([]string{"simulate"}, fields[1:]...)
	for i, a := range args {
		if strings.HasSuffix(a, "/"+blisWorkload) {
			args[i] = filepath.Join(blisParityDir, oursWorkload)
		}
	}
	for _, d := range blisExplicitDefaults {
		name, _, _ := strings.Cut(d[0], "=")
		if !slices.ContainsFunc(args, func(a string) bool { return a == name || strings.HasPrefix(a, name+"=") }) {
			args = append(args, d[0])
			if len(d) > 1 && !strings.Contains(d[0], "=") {
				args = append(args, d[1])
			}
		}
	}
	return args
}

// TestBLISCommandLinesRunUnchanged: every BLIS 7fd7a88d command line of
// the parity matrix (seed 42), pasted with `blis` replaced by `optimize
// simulate` and BLIS's defaults written out, runs and prints byte for byte
// what our own arguments of that configuration print.
func TestBLISCommandLinesRunUnchanged(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(blisParityDir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp struct {
		Configs map[string]struct {
			Workload     string   `json:"workload"`
			OursWorkload string   `json:"ours_workload"`
			OursArgs     []string `json:"ours_args"`
			Seeds        map[string]struct {
				BLISCommand string `json:"blis_command"`
			} `json:"seeds"`
		} `json:"configs"`
	}
	if err := json.Unmarshal(data, &exp); err != nil {
		t.Fatal(err)
	}
	if len(exp.Configs) < 15 {
		t.Fatalf("%d configurations in expected.json, want the parity matrix", len(exp.Configs))
	}
	for name, c := range exp.Configs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			line := blisLine(t, c.Seeds["42"].BLISCommand, c.Workload, c.OursWorkload)
			wantArgs := append([]string{"simulate", "--workload-spec", filepath.Join(blisParityDir, c.OursWorkload), "--seed", "42"}, c.OursArgs...)
			code, want, errs := run(t, wantArgs...)
			if code != 0 {
				t.Fatalf("ours: exit %d: %s", code, errs)
			}
			code, got, errs := run(t, line...)
			if code != 0 {
				t.Fatalf("BLIS line %q: exit %d: %s", strings.Join(line, " "), code, errs)
			}
			if got != want {
				t.Errorf("BLIS line prints\n%s\nours prints\n%s", got, want)
			}
			// The ignored flags say so, one line each, and nothing else is said.
			for _, flag := range []string{"--vllm-version", "--results-path", "--log", "--rate"} {
				if !strings.Contains(errs, "optimize: note: "+flag+" ignored") {
					t.Errorf("no note on %s in stderr:\n%s", flag, errs)
				}
			}
			for _, l := range strings.Split(strings.TrimSpace(errs), "\n") {
				if !strings.HasPrefix(l, "optimize: note: ") {
					t.Errorf("stderr line %q is not a note", l)
				}
			}
		})
	}
}

// TestInertNonDefaultStaysAnError: restating a default where it has no
// effect passes; an inert value that is not the default is the one message
// it was.
func TestInertNonDefaultStaysAnError(t *testing.T) {
	spec := filepath.Join(blisParityDir, "poisson-noprefix.yaml")
	base := []string{"simulate", "run", "--workload-spec", spec, "--num-instances", "2", "--num-requests", "50", "--output", "json"}
	code, want, errs := run(t, base...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, restated := range [][]string{
		{"--priority-policy", "constant"},
		{"--slo-age-weight", "0.01"},
		{"--routing-scorers", "prefix-affinity:3,queue-depth:2,kv-utilization:2"},
		{"--gpu-memory-utilization", "0.9"},
		{"--set", "admission.token_bucket.capacity=10000"},
	} {
		code, got, errs := run(t, append(slices.Clone(base), restated...)...)
		if code != 0 || got != want {
			t.Errorf("%v: exit %d, output equal %v: %s", restated, code, got == want, errs)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--priority-policy", "slo-based"}, "--priority-policy sets priority.policy, which has no effect unless scheduler is priority-fcfs or preemption.policy is priority (scheduler is fcfs; preemption.policy is fcfs)"},
		{[]string{"--routing-scorers", "queue-depth:2"}, "--routing-scorers sets routing.weight.queue-depth, which has no effect unless routing.policy is weighted (it is round-robin)"},
		{[]string{"--gpu-memory-utilization", "0.8"}, "--gpu-memory-utilization sets gpu_memory_utilization, which has no effect unless latency.model is trained-physics or roofline (it is blackbox)"},
		{[]string{"--set", "admission.token_bucket.capacity=20000"}, "--set admission.token_bucket.capacity=20000 sets admission.token_bucket.capacity, which has no effect unless admission.policy is token-bucket (it is always-admit)"},
		{[]string{"--in-flight-eviction"}, "--in-flight-eviction sets flow_control.in_flight_eviction, which has no effect unless flow_control.enabled is true (it is false)"},
	} {
		code, _, errs := run(t, append(slices.Clone(base), c.args...)...)
		if code != 2 || strings.TrimSpace(errs) != "optimize: "+c.want {
			t.Errorf("%v: exit %d, stderr %q, want exit 2 and %q", c.args, code, errs, c.want)
		}
	}
}

// TestBLISFlagsRejectedAndVerb: a mechanism we do not model is a one-line
// error naming the flag and why, unless given at BLIS's default; the verb
// is the one argument simulate takes.
func TestBLISFlagsRejectedAndVerb(t *testing.T) {
	base := []string{"simulate", "--num-requests", "20"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--prefill-hardware", "A100-80"}, "optimize: --prefill-hardware A100-80: " + whyPD + ` (BLIS's default, "", is accepted)`},
		{[]string{"--enable-expert-parallel"}, "optimize: --enable-expert-parallel true: " + whyMoE + " (BLIS's default, false, is accepted)"},
		{[]string{"--era", "f90a1e3a", "--routing-scorers", "queue-depth:2,kv-utilization:1"}, "optimize: --routing-scorers: queue-depth under --era f90a1e3a: BLIS f90a1e3a's reads the waiting queue alone; name it queue-scorer (llm-d's, the same arithmetic); queue-depth here is 7fd7a88d's (waiting + running + in-flight requests)"},
		{[]string{"--concurrency", "5"}, "optimize: --concurrency 5: " + whyDistribution + " (BLIS's default, 0, is accepted)"},
		{[]string{"--rate", "0"}, "optimize: --rate: must be a finite number > 0 requests/s, got 0"},
		{[]string{"--prompt-tokens-min", "600"}, "optimize: --prompt-tokens: must be in [--prompt-tokens-min, --prompt-tokens-max] = [600, 7000], got 512"},
		{[]string{"--output-tokens-max", "1"}, "optimize: --output-tokens-max: must be ≥ --output-tokens-min (2), got 1"},
		{[]string{"--workload", "orthogonal-slo", "--rate", "5"}, "optimize: --rate: it shapes BLIS's distribution workload, and --workload orthogonal-slo names a built-in one; drop one (--workload distribution, or no --workload, synthesises BLIS's)"},
		{[]string{"--max-num-seqs", "8", "--max-num-running-reqs", "8"}, "optimize: --max-num-seqs: --max-num-running-reqs is given too, its other name; give one"},
		{[]string{"walk"}, `optimize: invalid argument "walk" for "optimize simulate"`},
	} {
		code, _, errs := run(t, append(slices.Clone(base), c.args...)...)
		if code != 2 || strings.TrimSpace(errs) != c.want {
			t.Errorf("%v: exit %d, stderr %q, want exit 2 and %q", c.args, code, errs, c.want)
		}
	}
	// An alias sets our flag's setting: --max-num-seqs 8 runs as
	// --max-num-running-reqs 8, and differs from the default run.
	_, def, _ := run(t, append(slices.Clone(base), "--output", "json")...)
	_, ours, _ := run(t, append(slices.Clone(base), "--output", "json", "--max-num-running-reqs", "1")...)
	code, alias, errs := run(t, append(slices.Clone(base), "--output", "json", "run", "--max-num-seqs", "1")...)
	if code != 0 || alias != ours || alias == def {
		t.Errorf("--max-num-seqs 1: exit %d (%s), equal to --max-num-running-reqs 1: %v, to the default: %v", code, errs, alias == ours, alias == def)
	}
}

// TestBLISFlagsTable: the list names each flag once, in order; what it
// calls ours is a flag of simulate, what it binds is not.
func TestBLISFlagsTable(t *testing.T) {
	cmd := newSimulateCommand(Streams{}, new(string))
	fs := cmd.Flags()
	ours := pflag.NewFlagSet("ours", pflag.ContinueOnError)
	var o simulateOptions
	o.flags.bind(ours)
	o.wl.bind(ours)
	for _, n := range []string{"seed", "seeds", "output", "template", "param", "prefill-routing-scorers", "decode-routing-scorers"} {
		ours.String(n, "", "")
	}
	for i, f := range blisFlags {
		if i > 0 && blisFlags[i-1].name >= f.name {
			t.Errorf("blisFlags: %s after %s: keep them sorted, each once", f.name, blisFlags[i-1].name)
		}
		if f.in != blisOld && f.in != blisNew && f.in != blisBoth {
			t.Errorf("--%s: in %q", f.name, f.in)
		}
		mine := ours.Lookup(f.name) != nil
		switch f.do {
		case blisOurs, blisDiffers:
			if !mine {
				t.Errorf("--%s is listed as ours but simulate has no such flag", f.name)
			}
		case blisAlias:
			if mine || ours.Lookup(f.target) == nil {
				t.Errorf("--%s: an alias of --%s must name one of ours and not be one", f.name, f.target)
			}
		default:
			if mine {
				t.Errorf("--%s is simulate's own flag: list it as ours", f.name)
			}
			if f.reason == "" {
				t.Errorf("--%s: no reason", f.name)
			}
		}
		if fs.Lookup(f.name) == nil {
			t.Errorf("--%s is not bound", f.name)
		}
	}
}

// TestREADMEBLISFlags: the README's section on BLIS command lines is the
// one blisREADME generates; until the README has it, README_SECTION.md
// holds it (-update rewrites whichever holds it).
func TestREADMEBLISFlags(t *testing.T) {
	want := blisREADME()
	path := "../../docs/fidelity.md"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), blisSectionHeading) {
		path = "../../README_SECTION.md"
		data, _ = os.ReadFile(path) // absent: empty, rewritten by -update
	}
	text := string(data)
	start := strings.Index(text, blisSectionHeading)
	end := len(text)
	if start < 0 {
		start = end
	} else if i := strings.Index(text[start+len(blisSectionHeading):], "\n#"); i >= 0 {
		end = start + len(blisSectionHeading) + i + 1
	}
	if strings.TrimRight(text[start:end], "\n") == strings.TrimRight(want, "\n") {
		return
	}
	if *update {
		if end < len(text) {
			want += "\n"
		}
		if err := os.WriteFile(path, []byte(text[:start]+want+text[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's %q section differs from blisREADME (go test ./internal/cli -run TestREADMEBLISFlags -update rewrites it)", path, strings.TrimSpace(blisSectionHeading))
}
