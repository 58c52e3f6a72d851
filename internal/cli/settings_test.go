package cli

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"optimize/simcore/workload"
	"optimize/studies"
)

// The same mistake gets the same message whether it comes from a flag,
// from --set or from a template: only the part naming the source differs.
func TestSameMistakeSameMessage(t *testing.T) {
	after := func(msg, source string) string {
		t.Helper()
		rest, ok := strings.CutPrefix(strings.TrimSpace(strings.TrimPrefix(msg, "optimize: ")), source)
		if !ok {
			t.Fatalf("%q does not start with %q", msg, source)
		}
		return rest
	}
	// A value out of range.
	_, _, flagErr := run(t, "simulate", "--num-instances", "0")
	_, _, setErr := run(t, "simulate", "--set", "num_instances=0")
	if a, b := after(flagErr, "--num-instances"), after(setErr, "--set num_instances=0"); a != b || !strings.Contains(a, "num_instances: 0 is out of range (allowed: whole numbers in [1, 4096])") {
		t.Errorf("flag %q and --set %q differ", a, b)
	}
	// A choice that does not exist.
	_, _, flagErr = run(t, "simulate", "--scheduler", "lifo")
	_, _, setErr = run(t, "simulate", "--set", "scheduler=lifo")
	if a, b := after(flagErr, "--scheduler"), after(setErr, "--set scheduler=lifo"); a != b || !strings.Contains(a, `scheduler: "lifo" is not allowed (allowed: fcfs, priority-fcfs, sjf, slo-deadline)`) {
		t.Errorf("flag %q and --set %q differ", a, b)
	}

	// A setting with no effect: a template tuning the age weight under the
	// constant policy, and the same combination from the command line.
	dir := t.TempDir()
	tpl := `name: slo-x
description: Ages requests under a policy that ignores age.
base: baseline
mechanism:
  scheduler: priority-fcfs
parameters:
  - {name: age_w, type: float, low: 0, high: 1, default: 0.1, knob: priority.age_weight_per_ms}
`
	if err := os.WriteFile(filepath.Join(dir, "slo-x.yaml"), []byte(tpl), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, tplErr := run(t, "template", "show", "slo-x", "--templates-dir", dir)
	if code != 2 {
		t.Fatalf("exit %d, want 2: %s", code, tplErr)
	}
	want := "sets priority.age_weight_per_ms, which has no effect unless priority.policy is slo-tiered or slo-adaptive and " +
		"(scheduler is priority-fcfs or preemption.policy is priority) (priority.policy is constant)"
	if !strings.Contains(tplErr, "slo-x.yaml: parameter age_w "+want) {
		t.Errorf("template: %q", tplErr)
	}
	_, _, setErr = run(t, "simulate", "--set", "scheduler=priority-fcfs", "--set", "priority.age_weight_per_ms=0.1")
	if !strings.Contains(setErr, "--set priority.age_weight_per_ms=0.1 "+want) {
		t.Errorf("--set: %q", setErr)
	}
	_, _, flagErr = run(t, "simulate", "--scheduler", "priority-fcfs", "--slo-age-weight", "0.1")
	if !strings.Contains(flagErr, "--slo-age-weight "+want) {
		t.Errorf("flag: %q", flagErr)
	}
}

// --set reaches any setting and overrides what the template set: it
// equals the BLIS-named flag, and it changes the run.
func TestSetOverridesTheTemplateLikeItsFlag(t *testing.T) {
	sim := func(extra ...string) string {
		t.Helper()
		args := append([]string{"simulate", "--template", "slo-cascade", "--seeds", "42", "--output", "json", "--num-requests", "400"}, extra...)
		code, out, errs := run(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, errs)
		}
		return out
	}
	cascade, viaSet, viaFlag := sim(), sim("--set", "scheduler=fcfs"), sim("--scheduler", "fcfs")
	if viaSet != viaFlag {
		t.Error("--set scheduler=fcfs and --scheduler fcfs give different runs")
	}
	crit := func(out string) float64 {
		var s struct {
			PerSLO map[string]struct {
				TTFT struct{ P99 float64 } `json:"ttft_ms"`
			} `json:"per_slo"`
		}
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatal(err)
		}
		return s.PerSLO["critical"].TTFT.P99
	}
	// Reverting the scheduler to FCFS drops the class priority the cascade
	// gives critical requests: their TTFT P99 grows by half at least.
	if c, f := crit(cascade), crit(viaSet); !(f > 1.5*c) {
		t.Errorf("critical TTFT P99: cascade %.1f ms, with fcfs %.1f ms; want fcfs ≥ 1.5×", c, f)
	}
}

// template settings lists every setting, with the fields the dashboard and
// ablation read, and every simulate flag that sets a setting.
func TestTemplateSettingsListsEverySettingAndFlag(t *testing.T) {
	code, out, errs := run(t, "template", "settings", "--output", "json")
	if code != 0 {
		t.Fatal(errs)
	}
	// The command's first name, knobs, still answers, with the same list.
	if code, old, errs := run(t, "template", "knobs", "--output", "json"); code != 0 || old != out {
		t.Errorf("template knobs: exit %d, %d bytes against settings' %d: %s", code, len(old), len(out), errs)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	flags := map[string]bool{}
	for _, r := range rows {
		for _, k := range []string{"key", "flag", "kind", "default", "component", "active"} {
			if s, _ := r[k].(string); s == "" {
				t.Errorf("%v: no %s", r["key"], k)
			}
		}
		if r["range"] == nil && r["choices"] == nil {
			t.Errorf("%v: neither range nor choices", r["key"])
		}
		// Every row states its production counterpart (the column the
		// llm-d export reads): a fidelity, and a system unless it is none
		// or the world.
		prod, _ := r["production"].(map[string]any)
		fid, _ := prod["fidelity"].(string)
		if sys, _ := prod["system"].(string); fid == "" || (sys == "" && fid != "no counterpart" && fid != "world") {
			t.Errorf("%v: production %v", r["key"], prod)
		}
		if r["key"] == "batch.max_num_running_reqs" && (prod["name"] != "--max-num-seqs" || fid != "exact") {
			t.Errorf("batch.max_num_running_reqs: production %v, want vLLM's --max-num-seqs, exact", prod)
		}
		flag, _ := r["flag"].(string)
		flags[strings.Fields(flag)[0]] = true
	}
	// Every simulate flag is a setting's, or one of the few that are not
	// simulator settings.
	notSettings := []string{"model-config", "hardware-config", "world-file", "set", "settings", "epp-config", "vllm-args", "vllm-args-prefill", "objectives", "policy-config", "seed", "seeds", "output", "requests-out", "template", "param", "templates-dir", "help",
		"workload", "workload-spec", "trace", "trace-data", "trace-format", "num-requests",
		"prefill-routing-scorers", "decode-routing-scorers"} // a P/D pool's own profile: routing.weight.*'s spelling, not a setting of its own
	for _, c := range workload.ReplayControls() {
		notSettings = append(notSettings, c.Flag) // a workload's replay control
	}
	for _, l := range studies.AllLimits() {
		notSettings = append(notSettings, l.Flag()) // what one command may ask for, not how the cluster runs
	}
	for _, f := range blisFlags {
		if f.do != blisOurs && f.do != blisDiffers {
			notSettings = append(notSettings, f.name) // BLIS's name of one of ours, or a BLIS flag we note or reject
		}
	}
	cmd := newSimulateCommand(Streams{}, new(string))
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !flags["--"+f.Name] && !slices.Contains(notSettings, f.Name) {
			t.Errorf("simulate flag --%s is not in template settings", f.Name)
		}
	})
}

// A study on a template with a conditional parameter (precise-routing's
// index capacity, active only while the approximate prefix scorer is on)
// leaves the parameter empty exactly where it was inactive, in the export
// and in the stored proposals.
func TestConditionalParameterInAStudy(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "c.db")
	if code, _, errs := run(t, "study", "create", "precise-routing", "--trials", "12", "--name", "c", "--storage", dsn, "--workers", "2"); code != 0 {
		t.Fatalf("create: %s", errs)
	}
	code, out, errs := run(t, "study", "export", "c", "--storage", dsn, "--format", "csv")
	if code != 0 {
		t.Fatal(errs)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	weight, capacity := slices.Index(rows[0], "prefix_affinity_weight"), slices.Index(rows[0], "prefix_index_capacity")
	if weight < 0 || capacity < 0 || len(rows) != 13 {
		t.Fatalf("header %v, %d rows", rows[0], len(rows))
	}
	off := 0
	for _, r := range rows[1:] {
		if (r[weight] == "0") != (r[capacity] == "") {
			t.Errorf("trial %s: approximate weight %s, index capacity %q", r[0], r[weight], r[capacity])
		}
		if r[weight] == "0" {
			off++
		}
	}
	t.Logf("%d of 12 trials had the approximate scorer off", off)
}
