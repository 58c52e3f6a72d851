package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"optimize/internal/testkit"
)

// The operator's question in one command: the cheapest cluster for the
// Azure conversation trace at given SLOs, in a calibrated world. The
// world file gives the GPU and TP the capacity template tunes, so those
// are pinned and the instances searched; the SLO targets the trace lacks
// are given with --set, and a study missing one is refused before its
// baseline runs, leaving nothing behind. The answer names the cluster
// and its price; the headroom comes from validate --max-rate on the
// held-out windows; study list shows the answer's world; cost is not
// graded seed by seed.
func TestCapacityPlanForATraceInACalibratedWorld(t *testing.T) {
	testkit.Datasets(t)
	dir := t.TempDir()
	world := filepath.Join(dir, "world.yaml")
	if err := os.WriteFile(world, []byte(worldFileText("1.43")), 0o644); err != nil {
		t.Fatal(err)
	}
	dsn := filepath.Join(dir, "cap.db")
	create := []string{"study", "create", "capacity", "--trials", "10", "--name", "plan", "--storage", dsn, "--world-file", world,
		"--workload", "azure-conv-2023?slo-mix=critical=0.2,standard=0.5,sheddable=0.3",
		"--set", "slo.ttft_target_ms.critical=500", "--set", "slo.ttft_target_ms.sheddable=10000"}
	code, _, errs := run(t, create...)
	if code == 0 || !strings.Contains(errs, "template capacity reads per_slo.standard.attainment, which needs a latency target for standard: give --slo-ttft standard=MS") {
		t.Fatalf("a study without standard's target: exit %d, %s", code, errs)
	}
	if _, out, _ := run(t, "study", "list", "--storage", dsn); strings.Contains(out, "plan") {
		t.Errorf("the refused create left a study behind:\n%s", out)
	}
	for _, c := range []struct{ set, want string }{
		{"slo.ttft_target_ms.nobody=3", `--set slo.ttft_target_ms.nobody=3: unknown setting`},
		{"slo.ttft_target_ms.critical=-1", "--set slo.ttft_target_ms.critical=-1:"},
		{"critical", "--set critical: want KEY=VALUE"},
	} {
		code, _, errs := run(t, append(create, "--set", c.set)...)
		if code != 2 || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("--set %s: exit %d, %q; want %q", c.set, code, errs, c.want)
		}
	}
	if code, _, errs := run(t, "study", "create", "capacity", "--slo-ttft", "standard=2000", "--name", "x", "--storage", dsn, "--slo-ttft", "standard=fast"); code != 2 || !strings.Contains(errs, "--slo-ttft: ") {
		t.Errorf("--slo-ttft standard=fast: exit %d, %s", code, errs)
	}
	if code, _, errs = run(t, append(create, "--slo-ttft", "standard=2s")...); code != 0 {
		t.Fatalf("create: %s", errs)
	}
	if code, _, errs = run(t, "study", "validate", "plan", "--max-rate", "--windows", "11-14", "--storage", dsn); code != 0 {
		t.Fatalf("validate --max-rate: %s", errs)
	}
	_, text, _ := run(t, "study", "show", "plan", "--storage", dsn)
	for _, want := range []string{"it pins gpu=H100, tp=1, which the template tunes", "answer: ", "× H100 at TP1", "serving qwen/qwen3-14b", "USD/h",
		"headroom: it sustains", "× the trace's rate at its targets on held-out windows 11–14", "cost_per_hour: set by the cluster, the same on every seed",
		"settings given at create: slo.ttft_target_ms.standard=2000, slo.ttft_target_ms.critical=500, slo.ttft_target_ms.sheddable=10000"} {
		if !strings.Contains(text, want) {
			t.Errorf("show lacks %q:\n%s", want, text)
		}
	}
	_, js, _ := run(t, "study", "list", "--storage", dsn, "--output", "json")
	var list []struct {
		World     struct{ Instances int } `json:"world"`
		BestWorld *struct {
			Instances int
			Model     string
		} `json:"best_world"`
		BestTrial *int `json:"best_trial"`
	}
	if err := json.Unmarshal([]byte(js), &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].BestWorld == nil || list[0].BestWorld.Model != "qwen/qwen3-14b" || list[0].BestWorld.Instances >= list[0].World.Instances {
		t.Errorf("study list: %s", js)
	}
}

// A user's template may take a public trace as its workload and set the
// SLO targets in its mechanism (the baseline is judged by them too); a
// study of a template reading a class its trace has no requests of is
// refused before the baseline runs, saying how to give the trace a mix.
func TestTemplateOnATraceWithItsOwnTargets(t *testing.T) {
	testkit.Datasets(t)
	dir := t.TempDir()
	tpl := `name: mycap
description: capacity at my SLOs
base: capacity
base_parameters: search
workload: azure-conv-2023?slo-mix=critical=0.2,standard=0.5,sheddable=0.3
mechanism:
  slo.ttft_target_ms.critical: 500
  slo.ttft_target_ms.standard: 2000
  slo.ttft_target_ms.sheddable: 10000
`
	if err := os.WriteFile(filepath.Join(dir, "mycap.yaml"), []byte(tpl), 0o644); err != nil {
		t.Fatal(err)
	}
	dsn := filepath.Join(dir, "u.db")
	if code, _, errs := run(t, "study", "create", "mycap", "--templates-dir", dir, "--trials", "2", "--name", "u", "--storage", dsn); code != 0 {
		t.Fatalf("a template on a trace with its own targets: %s", errs)
	}
	code, _, errs := run(t, "study", "create", "slo-cascade", "--workload", "mooncake-conversation?rate=5", "--trials", "2", "--name", "s", "--storage", dsn)
	if code != 2 || !strings.Contains(errs, "has no critical requests (its rows carry none: give the trace an slo-mix, e.g. mooncake-conversation?rate=5") {
		t.Errorf("slo-cascade on a trace without classes: exit %d, %s", code, errs)
	}
}
