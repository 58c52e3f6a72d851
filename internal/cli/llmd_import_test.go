package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"optimize/internal/testkit"
)

func writeTemp(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const eppHead = "apiVersion: llm-d.ai/v1alpha1\nkind: EndpointPickerConfig\n"

// A plugin, parameter or argument the simulator does not model, a bad
// value and a contradiction with a flag are each one line naming the
// file and it; a bad value reads as the same setting's from --set.
func TestProductionImportErrors(t *testing.T) {
	_, _, setErr := run(t, "simulate", "--set", "admission.probabilistic.power=-1")
	_, want, _ := strings.Cut(strings.TrimSpace(setErr), "power=-1: ")
	_, _, seqsErr := run(t, "simulate", "--set", "batch.max_num_running_reqs=0")
	_, wantSeqs, _ := strings.Cut(strings.TrimSpace(seqsErr), "=0: ")
	if want == "" || wantSeqs == "" {
		t.Fatalf("--set errors: %q, %q", setErr, seqsErr)
	}
	rr := writeTemp(t, "rr.yaml", eppHead+"plugins:\n- type: approx-prefix-cache-producer\n  parameters:\n    maxPrefixTokensToMatch: 1\n- type: no-hit-lru-scorer\n- type: max-score-picker\n")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown plugin", []string{"--epp-config", writeTemp(t, "p.yaml", eppHead+"plugins:\n- type: lora-affinity-scorer\n")},
			"p.yaml: plugin type lora-affinity-scorer is not modelled (modelled: "},
		{"unknown parameter", []string{"--epp-config", writeTemp(t, "q.yaml", eppHead+"plugins:\n- type: no-hit-lru-scorer\n- type: probabilistic-admitter\n  parameters:\n    burst: 2\n")},
			"q.yaml: plugin probabilistic-admitter: parameter burst is not modelled (modelled: k, kvCacheUtilThreshold, power, queueDepthThreshold)"},
		{"bad plugin value", []string{"--epp-config", writeTemp(t, "r.yaml", eppHead+"plugins:\n- type: no-hit-lru-scorer\n- type: probabilistic-admitter\n  parameters:\n    power: -1\n")},
			"r.yaml: plugin probabilistic-admitter, parameter power: " + want},
		{"unknown field", []string{"--epp-config", writeTemp(t, "f.yaml", eppHead+"gates: [x]\nplugins:\n- type: no-hit-lru-scorer\n")},
			"f.yaml: line 3: field gates not found"},
		{"unknown feature gate", []string{"--epp-config", writeTemp(t, "g.yaml", eppHead+"featureGates: [x]\nplugins:\n- type: no-hit-lru-scorer\n")},
			"g.yaml: featureGates: x is not modelled (modelled: flowControl)"},
		{"prefill filter alone", []string{"--epp-config", writeTemp(t, "pdf.yaml", eppHead+"plugins:\n- type: prefill-filter\n- type: queue-scorer\nschedulingProfiles:\n- name: p\n  plugins:\n  - pluginRef: prefill-filter\n  - pluginRef: queue-scorer\n")},
			"pdf.yaml: schedulingProfiles[0]: prefill-filter without a P/D profile handler (disagg-profile-handler) routes every request to the prefill pods, which is not modelled"},
		{"two profiles", []string{"--epp-config", writeTemp(t, "pd.yaml", eppHead+"plugins:\n- type: no-hit-lru-scorer\nschedulingProfiles:\n- name: prefill\n- name: decode\n")},
			"pd.yaml: 2 schedulingProfiles and no P/D profile handler (disagg-profile-handler): one profile is modelled without it"},
		{"P/D profiles differ", []string{"--epp-config", writeTemp(t, "pdd.yaml", eppHead+"plugins:\n- type: queue-scorer\n- type: prefix-cache-scorer\n- type: prefill-filter\n- type: decode-filter\n- type: always-disagg-pd-decider\n- type: disagg-profile-handler\n  parameters:\n    deciders: {prefill: always-disagg-pd-decider}\nschedulingProfiles:\n- name: prefill\n  plugins:\n  - pluginRef: prefill-filter\n  - pluginRef: queue-scorer\n- name: decode\n  plugins:\n  - pluginRef: decode-filter\n  - pluginRef: prefix-cache-scorer\n")},
			"pdd.yaml: profiles prefill and decode weigh different plugins (queue-scorer:1; prefix-cache-scorer:1): the simulator's prefill and decode pools route with one profile"},
		{"P/D decider parameter", []string{"--epp-config", writeTemp(t, "pdp.yaml", eppHead+"plugins:\n- type: queue-scorer\n- type: prefill-filter\n- type: decode-filter\n- type: prefix-based-pd-decider\n  parameters:\n    nonCachedTokens: 8\n    promptTokens: 100\n- type: disagg-profile-handler\n  parameters:\n    deciders: {prefill: prefix-based-pd-decider}\nschedulingProfiles:\n- name: prefill\n  plugins:\n  - pluginRef: queue-scorer\n- name: decode\n  plugins:\n  - pluginRef: queue-scorer\n"), "--num-instances", "2"},
			"pdp.yaml: plugin prefix-based-pd-decider: parameter promptTokens is not modelled (modelled: nonCachedTokens)"},
		{"flow control queue", []string{"--epp-config", writeTemp(t, "fc.yaml", eppHead+"plugins:\n- type: no-hit-lru-scorer\n- type: utilization-detector\n  parameters:\n    queueDepthThreshold: 5\n    kvCacheUtilThreshold: 0.8\n")},
			"fc.yaml: plugin utilization-detector: "},
		{"unknown argument", []string{"--vllm-args", writeTemp(t, "a.txt", "--max-num-seqs 64\n--enforce-eager\n")},
			"a.txt: line 2: vLLM argument --enforce-eager is not modelled (accepted: "},
		{"bad argument value", []string{"--vllm-args", writeTemp(t, "b.txt", "--max-num-seqs=0\n")},
			"b.txt: line 1: --max-num-seqs: " + wantSeqs},
		{"negated assumption", []string{"--vllm-args", writeTemp(t, "c.txt", "--no-enable-prefix-caching\n")},
			"c.txt: line 1: --no-enable-prefix-caching is not modelled: the simulator always reuses cached prefix blocks"},
		{"argument twice", []string{"--vllm-args", writeTemp(t, "d.txt", "--max-num-seqs 8 --max-num-seqs=9\n")},
			"d.txt: line 1: --max-num-seqs is also given on line 1; give it once"},
		{"contradicting flag", []string{"--epp-config", rr, "--routing-policy", "least-loaded"},
			"--routing-policy: routing.policy is also set by --epp-config " + rr + " (scheduling profile of no-hit-lru-scorer alone, its prefix producer hashing nothing); give it in one place"},
	} {
		code, _, errs := run(t, append([]string{"simulate", "--workload", "orthogonal-slo"}, c.args...)...)
		if code == 0 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%s: exit %d, %q; want an error, one line, with %q", c.name, code, errs, c.want)
		}
	}
}

// An approximated value is one note line on stderr and runs; --set
// overrides an imported value; an ignored argument is a note too.
func TestProductionImportNotesAndOverride(t *testing.T) {
	args := writeTemp(t, "v.txt", "vllm serve meta-llama/llama-3.1-8b-instruct \\\n  --scheduling-policy=priority --port 8000 # the gateway's port\n")
	code, out, errs := run(t, "simulate", "--workload", "orthogonal-slo", "--vllm-args", args, "--set", "priority.policy=slo-class")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	notes := strings.Split(strings.TrimSpace(errs), "\n")
	if len(notes) != 2 || !strings.Contains(notes[0], "v.txt: line 2: --scheduling-policy → scheduler=priority-fcfs, approximated: ") ||
		!strings.Contains(notes[1], "--port ignored") {
		t.Errorf("notes %q: want the approximated scheduler and the ignored --port, one line each", notes)
	}
	if !strings.Contains(out, "scheduler priority-fcfs/slo-class") {
		t.Errorf("the run does not show the imported scheduler:\n%s", out)
	}
	rr := writeTemp(t, "rr.yaml", eppHead+"plugins:\n- type: no-hit-lru-scorer\n")
	code, out, errs = run(t, "simulate", "--workload", "orthogonal-slo", "--epp-config", rr, "--set", "routing.policy=least-loaded")
	if code != 0 || !strings.Contains(out, "routing least-loaded") {
		t.Errorf("--set over an imported routing.policy: exit %d, %s%s", code, errs, out)
	}
}

// llm-d's default profile given as an EndpointPickerConfig, on the
// template's 8 instances with its prefill chunk of 256 tokens, runs
// exactly as the llm-d-default template (whose
// spread on the seeds' burst simcore/cluster checks against a hand
// computation): the import is llm-d's scorers and picker, not BLIS's.
func TestLLMDDefaultProfileFromEPPConfigRunsAsTheTemplate(t *testing.T) {
	epp := writeTemp(t, "llm-d-default.yaml", eppHead+`plugins:
- type: queue-scorer
- type: kv-cache-utilization-scorer
- type: prefix-cache-scorer
- type: max-score-picker
- type: single-profile-handler
schedulingProfiles:
- name: default
  plugins:
  - pluginRef: max-score-picker
  - pluginRef: queue-scorer
    weight: 2
  - pluginRef: kv-cache-utilization-scorer
    weight: 2
  - pluginRef: prefix-cache-scorer
    weight: 3
`)
	want := simulateRuns(t, "--template", "llm-d-default", "--seeds", "42,43")
	got := simulateRuns(t, "--epp-config", epp, "--num-instances", "8", "--long-prefill-token-threshold", "256", "--workload", "orthogonal-slo", "--seeds", "42,43")
	blis := simulateRuns(t, "--template", "baseline", "--seeds", "42,43")
	if len(got) != 2 || !bytes.Equal(got[0], want[0]) || !bytes.Equal(got[1], want[1]) {
		t.Errorf("baseline with llm-d's default EndpointPickerConfig differs from llm-d-default:\n%s\nwant\n%s", got, want)
	}
	if bytes.Equal(got[0], blis[0]) {
		t.Error("the imported profile runs as the baseline's BLIS scorers")
	}
}

// llm-d's own sample EndpointPickerConfigs (the llm-d Router's
// deploy/config/ at ebab68792, in the shared test data): every one of the
// 19 either imports and runs with the routing it configures (including
// the probabilistic admitter's, whose profile is random-picker alone, the
// precise prefix producer's, bound to a prefix-cache-scorer, and the three
// P/D ones, nonCachedTokens 16 being a threshold of 15), or
// stops on one line naming the one construct the simulator does not model
// and why.
func TestLLMDSampleConfigsRun(t *testing.T) {
	samples := testkit.SharedData(t, "llm-d/deploy-config")
	// The P/D samples size no pools: the 4 instances split in halves.
	const pd = "routing weighted(prefix-cache-scorer:2,queue-scorer:1) max-score-picker · scheduler fcfs/constant · admission always-admit · P/D 2 prefill + 2 decode + 0 shared, decider prefix-threshold 15"
	want := map[string]string{
		"epp-config.yaml":                         "routing weighted(prefix-cache-scorer:2) max-score-picker · scheduler fcfs/constant · admission always-admit",
		"epp-estimate-prefix-cache-config.yaml":   "routing weighted(prefix-cache-scorer:1,load-aware-scorer:1) max-score-picker ·",
		"sim-epp-config.yaml":                     "routing weighted(prefix-cache-scorer:2) max-score-picker ·",
		"probabilistic-admitter-epp-config.yaml":  "routing weighted(no scorer) random-picker · scheduler fcfs/constant · admission probabilistic",
		"epp-precise-prefix-cache-config.yaml":    "routing weighted(precise-prefix-cache-scorer:2,kv-cache-utilization-scorer:1,queue-scorer:1) max-score-picker ·",
		"sim-epp-kvcache-config.yaml":             "routing weighted(precise-prefix-cache-scorer:10) max-score-picker ·",
		"sim-epp-tokenizer-vllm-http-config.yaml": "routing weighted(precise-prefix-cache-scorer:10) max-score-picker ·",
		"sim-epp-no-hit-lru.yaml":                 "routing weighted(precise-prefix-cache-scorer:2,no-hit-lru-scorer:1) max-score-picker ·",
		"dp-epp-config.yaml":                      "plugin type data-parallel-profile-handler: routing to vLLM's data-parallel ranks",
		"epp-burst-prefix-cache-config.yaml":      "plugin type burst-prefix-cache-producer: burst co-location",
		"epp-mm-embeddings-cache-config.yaml":     "plugin type mm-embeddings-cache-producer: multimodal embedding caches are not modelled",
		"pd-epp-config.yaml":                      pd,
		"pd-topology-epp-config.yaml":             pd,
		"sim-pd-epp-config.yaml":                  pd,
		"sim-e-p-d-epp-config.yaml":               "plugin type encode-filter: encode disaggregation",
		"sim-e-pd-epp-config.yaml":                "plugin type encode-filter: encode disaggregation",
		"sim-epp-gpu-config.yaml":                 "plugin type dcgm-data-source: scoring by GPU attributes",
		"sim-program-aware-config.yaml":           "plugin type program-aware-fairness: flow control's fairness between programs is not modelled",
		"soft-reflective-ceiling-epp-config.yaml": "plugin type soft-reflective-ceiling-policy: flow control's adaptive usage-limit policies are not modelled",
	}
	files, err := filepath.Glob(filepath.Join(samples, "*.yaml"))
	if err != nil || len(files) != 19 {
		t.Fatalf("%d samples (%v), want llm-d's 19", len(files), err)
	}
	imported := 0
	for _, path := range files {
		file := filepath.Base(path)
		w, ok := want[file]
		if !ok {
			t.Errorf("%s: a sample this test does not know", file)
			continue
		}
		code, out, errs := run(t, "simulate", "--epp-config", path, "--num-instances", "4", "--num-requests", "200", "--seeds", "42")
		if strings.HasPrefix(w, "routing ") {
			imported++
			if code != 0 || !strings.Contains(out, w) {
				t.Errorf("%s: exit %d, want %q in\n%s%s", file, code, w, out, errs)
			}
			continue
		}
		if code == 0 || !strings.Contains(errs, file+": "+w) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%s: exit %d, want one line with %q, got %q", file, code, w, errs)
		}
	}
	if imported != 11 {
		t.Errorf("%d samples import, want 11 (8 refused)", imported)
	}
}
