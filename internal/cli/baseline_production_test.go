package cli

import (
	"bytes"
	"encoding/json"
	"optimize/internal/testkit"
	"path/filepath"
	"strings"
	"testing"
)

// A study whose baseline is a production deployment (study create
// --baseline-epp --baseline-vllm-args): its baseline metrics equal a
// simulate of the same configs in the study's world, byte for byte; show
// says where the baseline came from; and the baseline differs from the
// template baseline's (the configs are what ran).
func TestBaselineFromProductionConfigs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a study")
	}
	epp := writeTemp(t, "epp.yaml", eppHead+`plugins:
- type: no-hit-lru-scorer
- type: probabilistic-admitter
  parameters:
    queueDepthThreshold: 3
    power: 2
schedulingProfiles:
- name: default
  plugins:
  - pluginRef: no-hit-lru-scorer
`)
	args := writeTemp(t, "vllm.txt", "--max-num-seqs 48\n--max-num-batched-tokens=1024\n--scheduling-policy fcfs\n--kv-offloading-size 2\n")
	dsn := filepath.Join(t.TempDir(), "p.db")
	if code, _, errs := run(t, "study", "create", "round-robin", "--trials", "1", "--seeds", "42,43", "--name", "p",
		"--baseline-epp", epp, "--baseline-vllm-args", args, "--storage", dsn, "--workers", "1"); code != 0 {
		t.Fatalf("create: %s", errs)
	}
	tdsn := filepath.Join(t.TempDir(), "t.db")
	if code, _, errs := run(t, "study", "create", "round-robin", "--trials", "1", "--seeds", "42,43", "--name", "t", "--storage", tdsn, "--workers", "1"); code != 0 {
		t.Fatalf("create: %s", errs)
	}
	baseline := func(dsn, name string) ([]byte, []string) {
		_, out, errs := run(t, "study", "show", name, "--output", "json", "--storage", dsn)
		var doc struct {
			Baseline     json.RawMessage `json:"baseline"`
			BaselineFrom []string        `json:"baseline_from"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%v: %s", err, errs)
		}
		return compact(t, doc.Baseline), doc.BaselineFrom
	}
	got, from := baseline(dsn, "p")
	template, none := baseline(tdsn, "t")
	// The study's world (round-robin's: pressure-baseline's cluster and
	// host link) with the configs on the standard configuration.
	code, out, errs := run(t, "simulate", "--output", "json", "--epp-config", epp, "--vllm-args", args,
		"--workload", "multi-turn-kv", "--seeds", "42,43", "--set", "num_instances=4", "--set", "kv.total_blocks=2000",
		"--set", "kv.transfer_bandwidth=10", "--set", "kv.transfer_base_latency_us=100")
	if code != 0 {
		t.Fatalf("simulate: %s", errs)
	}
	var sim struct {
		Mean json.RawMessage `json:"mean"`
	}
	if err := json.Unmarshal([]byte(out), &sim); err != nil {
		t.Fatal(err)
	}
	if want := compact(t, sim.Mean); !bytes.Equal(got, want) {
		t.Errorf("the study's baseline differs from simulate of the same configs:\n%s\nwant\n%s", got, want)
	}
	if bytes.Equal(got, template) {
		t.Error("the production baseline equals the template baseline")
	}
	if len(from) != 2 || from[0] != "--baseline-vllm-args "+args || from[1] != "--baseline-epp "+epp || none != nil {
		t.Errorf("baseline_from %q (template study: %q)", from, none)
	}
	_, text, _ := run(t, "study", "show", "p", "--storage", dsn)
	if !strings.Contains(text, "baseline from production configs: --baseline-vllm-args "+args+", --baseline-epp "+epp) {
		t.Errorf("show does not say where the baseline came from:\n%s", text)
	}
	bad := writeTemp(t, "bad.yaml", eppHead+"plugins:\n- type: lora-affinity-scorer\n")
	code, _, errs = run(t, "study", "create", "round-robin", "--trials", "1", "--name", "q", "--baseline-epp", bad, "--storage", dsn)
	if code != 2 || !strings.Contains(errs, "--baseline-epp: "+bad+": plugin type lora-affinity-scorer is not modelled") {
		t.Errorf("a bad --baseline-epp: exit %d, %q", code, errs)
	}
	// llm-d's P/D sample on a study whose world has no pools: its profiles
	// would route aggregated without a word.
	pd := filepath.Join(testkit.SharedData(t, "llm-d/deploy-config"), "pd-epp-config.yaml")
	code, _, errs = run(t, "study", "create", "round-robin", "--trials", "1", "--name", "r", "--baseline-epp", pd, "--storage", dsn)
	if code == 0 || !strings.Contains(errs, "split requests between prefill and decode pools, and the study's world has none") {
		t.Errorf("a P/D --baseline-epp on a world without pools: exit %d, %q", code, errs)
	}
}
