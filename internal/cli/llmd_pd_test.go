package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"optimize/studies/report"
)

// pdStudy is a study of llm-d's default profile on 8 instances split 3
// prefill, 5 decode, with the prefix-threshold decider at 32 tokens and
// prefill pods at TP 1 (the decode pods at the template's TP 2).
func pdStudy(t *testing.T) string {
	t.Helper()
	dsn := filepath.Join(t.TempDir(), "pd.db")
	if code, _, errs := run(t, "study", "create", "llm-d-default", "--trials", "2", "--name", "pd", "--storage", dsn, "--workers", "1",
		"--set", "num_instances=8", "--set", "pd.prefill_instances=3", "--set", "pd.decode_instances=5",
		"--set", "pd.decider=prefix-threshold", "--set", "pd.prefix_threshold_tokens=32", "--set", "pd.prefill_tp=1"); code != 0 {
		t.Fatal(errs)
	}
	return dsn
}

// A P/D trial's llm-d export: llm-d's P/D profile handler with the
// prefix decider at the threshold + 1 (llm-d splits at ≥, BLIS at >), a
// prefill and a decode profile each behind its role's filter with the
// trial's scorers, one vLLM file per role (the prefill pods at TP 1, both
// with NIXL), a kustomization patching both Deployments, and a MAPPING.md
// row for every pd.* setting; run again with MAPPING.md's command, the
// files reproduce the trial byte for byte, as the aggregated exports do.
func TestLLMDExportPDRoundTripReproducesTrials(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a study")
	}
	dsn := pdStudy(t)
	for n := range 2 {
		dir, mapping := exportLLMD(t, dsn, "pd", n)
		read := func(name string) string {
			data, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			return string(data)
		}
		epp := read(report.EPPConfigFile)
		for _, want := range []string{
			"- type: prefix-based-pd-decider\n  parameters:\n    nonCachedTokens: 33\n",
			"- type: disagg-profile-handler\n  parameters:\n    deciders: {prefill: prefix-based-pd-decider}\n",
			"- name: prefill\n  plugins:\n  - pluginRef: prefill-filter\n  - pluginRef: max-score-picker\n  - pluginRef: queue-scorer\n",
			"- name: decode\n  plugins:\n  - pluginRef: decode-filter\n  - pluginRef: max-score-picker\n  - pluginRef: queue-scorer\n",
		} {
			if !strings.Contains(epp, want) {
				t.Errorf("trial %d: epp-config.yaml lacks %q:\n%s", n, want, epp)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, report.VLLMArgsFile)); err == nil {
			t.Errorf("trial %d: a P/D export wrote %s beside the role files", n, report.VLLMArgsFile)
		}
		nixl := `--kv-transfer-config={"kv_connector":"NixlConnector","kv_role":"kv_both"}`
		prefill, decode := read(report.VLLMArgsPrefillFile), read(report.VLLMArgsDecodeFile)
		if !strings.Contains(prefill, "\n--tensor-parallel-size=1\n") || !strings.Contains(decode, "\n--tensor-parallel-size=2\n") ||
			!strings.Contains(prefill, nixl) || !strings.Contains(decode, nixl) {
			t.Errorf("trial %d: want TP 1 prefill, TP 2 decode, both with NIXL:\n%s\n%s", n, prefill, decode)
		}
		kust := read(report.KustomizeFile)
		if !strings.Contains(kust, "    name: vllm-p\n  patch: |-\n    - op: add\n      path: /spec/template/metadata/labels/llm-d.ai~1role\n      value: prefill\n") ||
			!strings.Contains(kust, "    name: vllm-d\n  patch: |-\n    - op: add\n      path: /spec/template/metadata/labels/llm-d.ai~1role\n      value: decode\n") ||
			strings.Count(kust, strconv.Quote(nixl)) != 2 {
			t.Errorf("trial %d: the kustomization does not patch vllm-p and vllm-d with their roles and NIXL:\n%s", n, kust)
		}
		for _, key := range []string{"pd.prefill_instances", "pd.decode_instances", "pd.shared_instances", "pd.decider", "pd.prefix_threshold_tokens",
			"pd.transfer_bandwidth_gbps", "pd.transfer_base_latency_ms", "pd.transfer_contention", "pd.prefill_tp", "pd.decode_tp"} {
			if !strings.Contains(mapping, "| `"+key+"` |") {
				t.Errorf("trial %d: MAPPING.md has no row for %s", n, key)
			}
		}
		if !strings.Contains(mapping, "| `pd.prefix_threshold_tokens` | 32 | llm-d `prefix-based-pd-decider` nonCachedTokens 33 | approximated") {
			t.Errorf("trial %d: the threshold's row does not say nonCachedTokens 33:\n%s", n, mapping)
		}
		want, _ := trialRuns(t, dsn, "pd", n)
		args := reproduceArgs(t, dir, mapping)
		if !strings.Contains(strings.Join(args, " "), "--vllm-args-prefill "+filepath.Join(dir, report.VLLMArgsPrefillFile)) {
			t.Fatalf("trial %d: MAPPING.md's command does not read the prefill pods' arguments: %v", n, args)
		}
		got := simulateRuns(t, args...)
		if len(got) != len(want) || len(want) != 3 {
			t.Fatalf("trial %d: %d runs, want %d", n, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("trial %d, seed %d: the exported P/D configs simulate differently:\n%s\nwant\n%s\nMAPPING.md:\n%s", n, 42+i, got[i], want[i], mapping)
			}
		}
		if !bytes.Contains(want[0], []byte(`"pd":{"disaggregated":`)) {
			t.Errorf("trial %d: the trial split no request: %s", n, want[0])
		}
	}
}

// The P/D import's own errors and defaults: the prefill pods' arguments
// must be the decode pods' but for the TP; a decider off (nonCachedTokens
// 0) splits nothing, with a note; always-disagg-pd-decider is always; the
// pools default to halves, and with one instance there are none to give.
func TestLLMDPDImport(t *testing.T) {
	const profiles = "schedulingProfiles:\n- name: prefill\n  plugins:\n  - pluginRef: prefill-filter\n  - pluginRef: queue-scorer\n- name: decode\n  plugins:\n  - pluginRef: decode-filter\n  - pluginRef: queue-scorer\n"
	pd := func(name, decider string) string {
		return writeTemp(t, name, eppHead+"plugins:\n- type: queue-scorer\n- type: prefill-filter\n- type: decode-filter\n"+decider+
			"- type: disagg-profile-handler\n  parameters:\n    deciders:\n      prefill: d\n"+profiles)
	}
	always := pd("always.yaml", "- type: always-disagg-pd-decider\n  name: d\n")
	code, out, errs := run(t, "simulate", "--epp-config", always, "--num-instances", "5", "--num-requests", "50")
	if code != 0 || !strings.Contains(out, "P/D 2 prefill + 3 decode + 0 shared, decider always") ||
		!strings.Contains(errs, "the first half of the 5 instances prefill, the rest decode") {
		t.Errorf("always-disagg-pd-decider: exit %d:\n%s%s", code, out, errs)
	}
	off := pd("off.yaml", "- type: prefix-based-pd-decider\n  name: d\n  parameters:\n    nonCachedTokens: 0\n")
	code, out, errs = run(t, "simulate", "--epp-config", off, "--prefill-instances", "1", "--decode-instances", "3", "--num-instances", "4", "--num-requests", "50")
	if code != 0 || !strings.Contains(out, "decider never") || !strings.Contains(errs, "nonCachedTokens 0 (or not given) turns llm-d's decider off") {
		t.Errorf("nonCachedTokens 0: exit %d:\n%s%s", code, out, errs)
	}
	_, _, errs = run(t, "simulate", "--epp-config", always, "--num-requests", "50")
	if !strings.Contains(errs, "P/D profiles need a prefill and a decode pool: give --num-instances ≥ 2") {
		t.Errorf("one instance: %q", errs)
	}
	decode := writeTemp(t, "d.txt", "--max-num-seqs=64\n--tensor-parallel-size=2\n")
	for _, c := range []struct{ prefill, want string }{
		{"--max-num-seqs=32\n--tensor-parallel-size=1\n", "p.txt: line 1: --max-num-seqs 32 differs from the decode pods' 64"},
		{"--tensor-parallel-size=1\n", "p.txt: --max-num-seqs (line 1 of " + decode + ", the decode pods' arguments) is not given"},
	} {
		code, _, errs := run(t, "simulate", "--vllm-args", decode, "--vllm-args-prefill", writeTemp(t, "p.txt", c.prefill), "--epp-config", always, "--num-instances", "4")
		if code == 0 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("prefill args %q: exit %d, %q; want one line with %q", c.prefill, code, errs, c.want)
		}
	}
	code, out, errs = run(t, "simulate", "--vllm-args", decode, "--vllm-args-prefill", writeTemp(t, "p.txt", "--max-num-seqs=64\n--tensor-parallel-size=1\n"), "--epp-config", always, "--num-instances", "4", "--num-requests", "50")
	if code != 0 || !strings.Contains(out, "P/D 2 prefill + 2 decode") || !strings.Contains(out, "TP2") {
		t.Errorf("matching prefill args: exit %d: %s%s", code, out, errs)
	}
}

// A trial with the simulated gateway queue exports it as llm-d's flow
// control — the detector and its thresholds, every band with the
// trial's capacity and policies (a band listed in priorityBands does not
// take defaultPriorityBand's), the global capacity, the TTL, the usage
// limit — with objectives.yaml giving each class its band (the one class
// map), and the files re-run the trial byte for byte.
func TestLLMDExportFlowControlRoundTripReproducesTrials(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a study")
	}
	dsn := filepath.Join(t.TempDir(), "fc.db")
	if code, _, errs := run(t, "study", "create", "llm-d-default", "--trials", "2", "--name", "fc", "--storage", dsn, "--workers", "1",
		"--set", "flow_control.enabled=true", "--set", "flow_control.saturation_detector=utilization", "--set", "flow_control.per_band_capacity=50",
		"--set", "flow_control.max_queue_depth=200", "--set", "flow_control.fairness_policy=round-robin", "--set", "flow_control.request_ttl_us=2000000",
		"--set", "flow_control.usage_limit_threshold=0.9"); code != 0 {
		t.Fatal(errs)
	}
	for n := range 2 {
		dir, mapping := exportLLMD(t, dsn, "fc", n)
		epp, _ := os.ReadFile(filepath.Join(dir, report.EPPConfigFile))
		objectives, _ := os.ReadFile(filepath.Join(dir, report.ObjectivesFile))
		policies := "maxRequests: 50, fairnessPolicyRef: round-robin-fairness-policy, orderingPolicyRef: fcfs-ordering-policy}"
		for _, want := range []string{"featureGates:\n- flowControl\n", "  maxRequests: 200\n", "  defaultRequestTTL: 2s\n",
			"  usageLimitPolicyPluginRef: static-usage-limit-policy\n", "  - {priority: 4, " + policies + "  # critical\n",
			"  - {priority: -3, " + policies + "  # background\n", "    queueDepthThreshold: 5\n    kvCacheUtilThreshold: 0.8\n"} {
			if !strings.Contains(string(epp), want) {
				t.Errorf("trial %d: epp-config.yaml lacks %q:\n%s", n, want, epp)
			}
		}
		for _, want := range []string{"name: critical\nspec:\n  priority: 4\n", "name: standard\nspec:\n  priority: 3\n", "name: background\nspec:\n  priority: -3\n"} {
			if !strings.Contains(string(objectives), want) {
				t.Errorf("trial %d: objectives.yaml lacks the band %q:\n%s", n, want, objectives)
			}
		}
		want, _ := trialRuns(t, dsn, "fc", n)
		args := reproduceArgs(t, dir, mapping)
		for i, a := range args {
			if a == report.ObjectivesFile {
				args[i] = filepath.Join(dir, a)
			}
		}
		got := simulateRuns(t, args...)
		if len(got) != 3 || len(want) != 3 {
			t.Fatalf("trial %d: %d runs, want 3", n, len(got))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("trial %d, seed %d: the exported flow control simulates differently:\n%s\nwant\n%s\nMAPPING.md:\n%s", n, 42+i, got[i], want[i], mapping)
			}
		}
	}
}

// A trial with the autoscaler exports its WVA thresholds as the WVA's
// saturation-scaling ConfigMap (analyzerName saturation, the V2 analyzer
// the simulator models), which the kustomization applies; MAPPING.md
// names the ConfigMap's fields and says the HPA's are not exported.
func TestLLMDExportWVAConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a study")
	}
	dsn := filepath.Join(t.TempDir(), "w.db")
	if code, _, errs := run(t, "study", "create", "llm-d-default", "--trials", "1", "--name", "w", "--storage", dsn, "--workers", "1",
		"--set", "autoscaler.interval_us=1000000", "--set", "autoscaler.scale_up_threshold=0.7", "--set", "autoscaler.scale_down_boundary=0.3"); code != 0 {
		t.Fatal(errs)
	}
	dir, mapping := exportLLMD(t, dsn, "w", 0)
	wva, err := os.ReadFile(filepath.Join(dir, report.WVAConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(wva), "kind: ConfigMap\nmetadata:\n  name: wva-saturation-scaling-config\ndata:\n  default: |\n    analyzerName: saturation\n    kvCacheThreshold: 0.8\n    scaleDownBoundary: 0.3\n    scaleUpThreshold: 0.7\n") {
		t.Errorf("wva-config.yaml:\n%s", wva)
	}
	kust, _ := os.ReadFile(filepath.Join(dir, report.KustomizeFile))
	if !strings.Contains(string(kust), "resources:\n- base\n- wva-config.yaml\n") {
		t.Errorf("the kustomization does not apply wva-config.yaml:\n%s", kust)
	}
	for _, want := range []string{"| `autoscaler.scale_up_threshold` | 0.7 | wva-config.yaml `scaleUpThreshold: 0.7` | approximated",
		"| `autoscaler.max_replicas` | 0 | HPA maxReplicas (not exported) |"} {
		if !strings.Contains(mapping, want) {
			t.Errorf("MAPPING.md lacks %q:\n%s", want, mapping)
		}
	}
}

// The other deciders re-run byte for byte too: always (llm-d's
// always-disagg-pd-decider) and never (one profile behind decode-filter,
// no handler).
func TestLLMDExportPDDecidersReproduceTrials(t *testing.T) {
	if testing.Short() {
		t.Skip("runs studies")
	}
	for _, c := range []struct{ decider, want string }{
		{"always", "- type: always-disagg-pd-decider\n- type: disagg-profile-handler\n  parameters:\n    deciders: {prefill: always-disagg-pd-decider}\n"},
		{"never", "- type: decode-filter\n- type: single-profile-handler\n"},
	} {
		dsn := filepath.Join(t.TempDir(), c.decider+".db")
		if code, _, errs := run(t, "study", "create", "llm-d-default", "--trials", "1", "--name", "d", "--storage", dsn, "--workers", "1",
			"--set", "num_instances=8", "--set", "pd.prefill_instances=2", "--set", "pd.decode_instances=6", "--set", "pd.decider="+c.decider); code != 0 {
			t.Fatal(errs)
		}
		dir, mapping := exportLLMD(t, dsn, "d", 0)
		epp, _ := os.ReadFile(filepath.Join(dir, report.EPPConfigFile))
		if !strings.Contains(string(epp), c.want) {
			t.Errorf("%s: epp-config.yaml lacks %q:\n%s", c.decider, c.want, epp)
		}
		want, _ := trialRuns(t, dsn, "d", 0)
		got := simulateRuns(t, reproduceArgs(t, dir, mapping)...)
		if len(got) != 3 || len(want) != 3 {
			t.Fatalf("%s: %d runs, want 3", c.decider, len(got))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("%s, seed %d: the export simulates differently:\n%s\nwant\n%s\nMAPPING.md:\n%s", c.decider, 42+i, got[i], want[i], mapping)
			}
		}
	}
}

// The flowControl block's import errors: gateway-queue settings without
// the feature gate, and bands whose policies differ (the simulator's
// bands share one template).
func TestLLMDFlowControlImportErrors(t *testing.T) {
	base := eppHead + "plugins:\n- type: queue-scorer\n- type: utilization-detector\n"
	for _, c := range []struct{ name, text, want string }{
		{"no gate", eppHead + "plugins:\n- type: queue-scorer\nflowControl:\n  maxRequests: 10\n", "ng.yaml: flowControl holds the gateway queue's settings but featureGates does not list flowControl"},
		{"bands differ", "featureGates: [flowControl]\n" + base + "flowControl:\n  defaultPriorityBand: {maxRequests: 10}\n  priorityBands:\n  - {priority: 4, maxRequests: 20}\n",
			"bd.yaml: flowControl.priorityBands[0].maxRequests 20: the simulator's bands share one template, flowControl.defaultPriorityBand's (maxRequests 10)"},
	} {
		file := map[string]string{"no gate": "ng.yaml", "bands differ": "bd.yaml"}[c.name]
		code, _, errs := run(t, "simulate", "--epp-config", writeTemp(t, file, c.text), "--num-requests", "20")
		if code == 0 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%s: exit %d, %q; want one line with %q", c.name, code, errs, c.want)
		}
	}
	ok := writeTemp(t, "ok.yaml", "featureGates: [flowControl]\n"+base+"- type: round-robin-fairness-policy\n- type: fcfs-ordering-policy\nflowControl:\n  maxRequests: 10\n  defaultRequestTTL: 1500ms\n  defaultPriorityBand: {maxRequests: 3, fairnessPolicyRef: round-robin-fairness-policy, orderingPolicyRef: fcfs-ordering-policy}\n  saturationDetector:\n    pluginRef: utilization-detector\n")
	code, out, errs := run(t, "simulate", "--epp-config", ok, "--num-requests", "20")
	if code != 0 || !strings.Contains(out, "admission flow control (utilization detector)") ||
		!strings.Contains(errs, "flowControl.defaultRequestTTL → flow_control.request_ttl_us=1500000") {
		t.Errorf("a gateway queue: exit %d:\n%s%s", code, out, errs)
	}
}

// Topology affinity changes nothing among equally near simulated
// instances, with a note; beside a weighted-random-picker its constant
// score would change the odds, and the import refuses it.
func TestLLMDTopologyPlugins(t *testing.T) {
	profile := "schedulingProfiles:\n- name: default\n  plugins:\n  - pluginRef: %s\n  - pluginRef: queue-scorer\n  - pluginRef: topology-affinity-scorer\n"
	for _, c := range []struct {
		picker string
		ok     bool
	}{{"max-score-picker", true}, {"weighted-random-picker", false}} {
		epp := writeTemp(t, "t.yaml", eppHead+"plugins:\n- type: queue-scorer\n- type: topology-extractor\n- type: topology-affinity-scorer\n- type: "+c.picker+"\n"+fmt.Sprintf(profile, c.picker))
		code, out, errs := run(t, "simulate", "--epp-config", epp, "--num-requests", "20")
		switch {
		case c.ok && (code != 0 || !strings.Contains(out, "routing weighted(queue-scorer:1) max-score-picker") || !strings.Contains(errs, "plugin topology-affinity-scorer taken as changing nothing")):
			t.Errorf("%s: exit %d:\n%s%s", c.picker, code, out, errs)
		case !c.ok && (code == 0 || !strings.Contains(errs, "t.yaml: schedulingProfiles[0]: topology-affinity-scorer with a weighted-random-picker")):
			t.Errorf("%s: exit %d, %q", c.picker, code, errs)
		}
	}
}
