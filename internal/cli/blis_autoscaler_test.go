package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const autoscalerDir = "testdata/blis_f90a1e3a/autoscaler"

// autoscalerParity is testdata/blis_f90a1e3a/autoscaler/expected.json:
// BLIS f90a1e3a's figures on three autoscaler command lines, seeds 42–44.
type autoscalerParity struct {
	OursExtra map[string]string `json:"ours_extra"`
	OursSpec  map[string]string `json:"ours_spec"`
	Runs      []struct {
		Case        string   `json:"case"`
		Seed        int64    `json:"seed"`
		What        string   `json:"what"`
		Command     string   `json:"blis_command"`
		Completed   float64  `json:"completed"`
		Rejected    float64  `json:"rejected_routing"`
		TTFTMean    *float64 `json:"ttft_mean_ms"`
		TTFTP99     *float64 `json:"ttft_p99_ms"`
		E2EMean     *float64 `json:"e2e_mean_ms"`
		E2EP99      *float64 `json:"e2e_p99_ms"`
		PerInstance []struct {
			ID        string `json:"id"`
			Completed int64  `json:"completed"`
		} `json:"per_instance"`
	} `json:"runs"`
}

// autoscalerArgs turns a BLIS command line of expected.json into
// simulate's arguments: `blis` replaced by `optimize simulate`, the files
// read from autoscalerDir (the ours_spec copy where there is one), plus
// the case's ours_extra flags and JSON output.
func autoscalerArgs(p *autoscalerParity, kase, command string) []string {
	fields := strings.Fields(command)[1:] // "run", then BLIS's flags
	args := []string{"simulate"}
	for i, f := range fields {
		if i > 0 && (fields[i-1] == "--workload-spec" || fields[i-1] == "--policy-config") {
			if f == "as-gap.yaml" && p.OursSpec[kase] != "" {
				f = p.OursSpec[kase]
			}
			f = filepath.Join(autoscalerDir, f)
		}
		args = append(args, f)
	}
	args = append(args, strings.Fields(p.OursExtra[kase])...)
	return append(args, "--output", "json")
}

func readAutoscalerParity(t *testing.T) *autoscalerParity {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(autoscalerDir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p autoscalerParity
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Runs) != 9 {
		t.Fatalf("%d runs in expected.json; want 3 command lines × 3 seeds", len(p.Runs))
	}
	return &p
}

// The autoscaler as BLIS f90a1e3a runs it: a ramp (instances added as the
// load grows, loading for 10 s), the same ramp jittered (random loading
// and HPA delays, short windows: instances added and drained), and the
// degenerate drain (an idle cluster drained to zero at the 1 s tick, every
// later request rejected). Completed and rejected requests and each
// instance's completed requests are BLIS's exactly; means within 1 % and
// P99s within 3 % (they agree to the last digit today).
func TestBLISf90a1e3aAutoscaler(t *testing.T) {
	p := readAutoscalerParity(t)
	for _, want := range p.Runs {
		args := autoscalerArgs(p, want.Case, want.Command)
		code, out, errs := run(t, args...)
		if code != 0 {
			t.Fatalf("%s seed %d: exit %d: %s", want.Case, want.Seed, code, errs)
		}
		var got struct {
			Completed, Rejected float64
			TTFT                struct{ Mean, P99 float64 } `json:"ttft_ms"`
			E2E                 struct{ Mean, P99 float64 } `json:"e2e_ms"`
			Autoscaler          struct {
				Instances []struct {
					Name      string
					Completed int64
				}
			}
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		name := want.Case + " seed " + strings.Fields(strings.SplitAfter(want.Command, "--seed ")[1])[0]
		if got.Completed != want.Completed || got.Rejected != want.Rejected {
			t.Errorf("%s: completed %v, rejected %v; BLIS %v, %v (%s)", name, got.Completed, got.Rejected, want.Completed, want.Rejected, want.Command)
		}
		for _, c := range []struct {
			what      string
			got       float64
			want      *float64
			tolerance float64
		}{{"TTFT mean", got.TTFT.Mean, want.TTFTMean, 0.01}, {"TTFT P99", got.TTFT.P99, want.TTFTP99, 0.03},
			{"E2E mean", got.E2E.Mean, want.E2EMean, 0.01}, {"E2E P99", got.E2E.P99, want.E2EP99, 0.03}} {
			if c.want != nil && math.Abs(c.got-*c.want) > c.tolerance**c.want {
				t.Errorf("%s: %s %.3f ms, BLIS %.3f ms (more than %.0f %% apart)", name, c.what, c.got, *c.want, 100*c.tolerance)
			}
		}
		if len(got.Autoscaler.Instances) != len(want.PerInstance) {
			t.Errorf("%s: %d instances, BLIS %d", name, len(got.Autoscaler.Instances), len(want.PerInstance))
			continue
		}
		for i, w := range want.PerInstance {
			if g := got.Autoscaler.Instances[i]; g.Name != w.ID || g.Completed != w.Completed {
				t.Errorf("%s: instance %d is %s with %d completed, BLIS %s with %d", name, i, g.Name, g.Completed, w.ID, w.Completed)
			}
		}
	}
}

// Our default on the degenerate command line (the blackbox world, era
// 7fd7a88d, where BLIS's behaviour is not reproduced): the autoscaler
// keeps one instance routable, so no request is rejected, and the idle
// instances it drains terminate at once.
func TestAutoscalerKeepsMinReplicas(t *testing.T) {
	p := readAutoscalerParity(t)
	for _, want := range p.Runs {
		if want.Case != "c" {
			continue
		}
		args := autoscalerArgs(p, want.Case, want.Command)
		args = append(slicesWithout(args, "--era", "f90a1e3a"), "--snapshot-refresh-interval", "50000")
		code, out, errs := run(t, args...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		if !strings.Contains(errs, "at least 1 instance") {
			t.Errorf("no note on the autoscaler's minimum in %q", errs)
		}
		var got struct {
			Completed, Rejected float64
			Autoscaler          struct {
				Replicas  []struct{ Routable int }
				Instances []struct {
					Terminated bool
					EndedMs    float64 `json:"ended_ms"`
				}
				MinReplicas int `json:"min_replicas"`
			}
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		if got.Rejected != 0 || got.Completed != want.Rejected {
			t.Errorf("seed %d: completed %v, rejected %v; want all %v completed", want.Seed, got.Completed, got.Rejected, want.Rejected)
		}
		for _, r := range got.Autoscaler.Replicas {
			if r.Routable < 1 {
				t.Errorf("seed %d: %d routable instances at some point; want ≥ 1 (%+v)", want.Seed, r.Routable, got.Autoscaler.Replicas)
				break
			}
		}
		terminated := 0
		for _, in := range got.Autoscaler.Instances {
			if in.Terminated {
				terminated++
				if in.EndedMs != 1000 {
					t.Errorf("seed %d: an idle instance drained at the 1 s tick ended at %v ms", want.Seed, in.EndedMs)
				}
			}
		}
		if got.Autoscaler.MinReplicas != 1 || terminated != 3 {
			t.Errorf("seed %d: min replicas %d, %d instances terminated; want 1 and 3", want.Seed, got.Autoscaler.MinReplicas, terminated)
		}
	}
}

// slicesWithout returns args without the given values (each removed once).
func slicesWithout(args []string, drop ...string) []string {
	var out []string
	for _, a := range args {
		if i := slices.Index(drop, a); i >= 0 {
			drop = slices.Delete(drop, i, i+1)
			continue
		}
		out = append(out, a)
	}
	return out
}

// The jittered command line (both autoscaler streams drawn, instances
// added and drained) over three seeds run in parallel: byte-identical
// output at GOMAXPROCS 1 and 2, run after run.
func TestAutoscalerDeterminism(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	p := readAutoscalerParity(t)
	var args []string
	for _, r := range p.Runs {
		if r.Case == "b" {
			args = append(autoscalerArgs(p, r.Case, r.Command), "--seeds", "42,43,44")
			break
		}
	}
	var outputs []string
	for _, procs := range []int{1, 2, 2} {
		runtime.GOMAXPROCS(procs)
		code, out, errs := run(t, args...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		outputs = append(outputs, out)
	}
	for i := 1; i < len(outputs); i++ {
		if outputs[i] != outputs[0] {
			t.Fatalf("run %d differs from run 0 (GOMAXPROCS 1 vs 2, or a repeat)", i)
		}
	}
}

// --policy-config errors are one line naming the file and the field.
func TestPolicyConfigErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ yaml, want string }{
		{"autoscaler: {interval_us: 1000000, bogus: 1}\n", "field bogus not found"},
		{"admission: {policy: token-bucket}\n", "admission: not read here: give it as --admission-policy"},
		{"routing: {policy: always-busiest}\n", `routing.policy: unknown value "always-busiest"`},
		{"autoscaler: {interval_us: 1000000}\nnode_pools: [{name: a, gpu_type: A100, gpus_per_node: 8, gpu_memory_gib: 80, initial_nodes: 1, max_nodes: 1}]\n", "node_pools[0].gpu_type"},
		{"autoscaler: {interval_us: 1000000, analyzer: {scale_down_boundary: 0.9}}\n", "autoscaler.scale_down_boundary: must be below the scale-up threshold"},
		{"node_pools: [{name: a, gpu_type: H100, gpus_per_node: 8, gpu_memory_gib: 80, initial_nodes: 1, max_nodes: 1}]\n", "only with the autoscaler on"},
	} {
		path := filepath.Join(dir, "p.yaml")
		if err := os.WriteFile(path, []byte(c.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errs := run(t, "simulate", "run", "--num-requests", "5", "--policy-config", path)
		if code == 0 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%q: exit %d, %q; want one line with %q", c.yaml, code, errs, c.want)
		}
	}
}

// Without node pools, our default adds instances up to
// autoscaler.max_replicas (BLIS adds none), and GPU-hours are the sum of
// each instance's GPUs × its life: here TP1, so Σ (ended − created).
func TestAutoscalerWithoutPools(t *testing.T) {
	code, out, errs := run(t, "simulate", "--tp", "1", "--num-instances", "2", "--workload-spec", filepath.Join(autoscalerDir, "as-ramp.yaml"),
		"--total-kv-blocks", "4000", "--model-autoscaler-interval-us", "1000000", "--autoscaler-max-replicas", "6",
		"--autoscaler-loading-delay-s", "10", "--routing-policy", "weighted", "--output", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got struct {
		GPUHours   float64 `json:"gpu_hours"`
		Autoscaler struct {
			ScaleUps  int `json:"scale_ups"`
			Replicas  []struct{ Routable, Loading int }
			Instances []struct {
				CreatedMs float64 `json:"created_ms"`
				EndedMs   float64 `json:"ended_ms"`
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Autoscaler.ScaleUps == 0 {
		t.Errorf("no instance added")
	}
	for _, r := range got.Autoscaler.Replicas {
		if r.Routable+r.Loading > 6 || r.Routable < 1 {
			t.Errorf("%d routable + %d loading: want 1 to 6 placed (%+v)", r.Routable, r.Loading, got.Autoscaler.Replicas)
			break
		}
	}
	var ms float64
	for _, in := range got.Autoscaler.Instances {
		ms += in.EndedMs - in.CreatedMs
	}
	if math.Abs(got.GPUHours-ms/3.6e6) > 1e-9 {
		t.Errorf("gpu_hours %v; Σ lives %v ms = %v GPU-hours at TP1", got.GPUHours, ms, ms/3.6e6)
	}
}
