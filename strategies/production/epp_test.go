package production

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"optimize/internal/testkit"
	"optimize/simcore"
	"optimize/simcore/cluster"
	"optimize/simcore/keys"
	"optimize/simcore/sched"
	"optimize/strategies"
	"optimize/strategies/settings"

	"gopkg.in/yaml.v3"
)

// exportImport writes c as an EndpointPickerConfig and vLLM arguments,
// reads both onto the standard configuration, adds ReproduceSets as
// simulate --set would, and returns the result checked.
func exportImport(t *testing.T, c *cluster.Config) (epp, args string, back cluster.Config) {
	t.Helper()
	var e, a bytes.Buffer
	if err := WriteEPPConfig(&e, c, nil); err != nil {
		t.Fatal(err)
	}
	if err := WriteVLLMArgs(&a, c, nil); err != nil {
		t.Fatal(err)
	}
	d, err := settings.Standard()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ApplyVLLMArgs("vllm-args.txt", a.Bytes(), &d); err != nil {
		t.Fatalf("%v\n%s", err, a.String())
	}
	if _, err := ApplyEPPConfig("epp-config.yaml", e.Bytes(), &d); err != nil {
		if eppOf(CarriedSettings(c)).note == "" {
			t.Fatalf("%v\n%s", err, e.String())
		}
		// The weighted profile has no llm-d plugin: the routing is given
		// as a settings file would give it (the whole profile).
		d.Routing.Policy, d.Routing.Scorers = c.Routing.Policy, c.Routing.Scorers
	}
	sets, _ := ReproduceSets(c)
	for _, kv := range sets {
		k, v, _ := strings.Cut(kv, "=")
		s, _ := settings.Lookup(k)
		if err := s.Set(&d, v); err != nil {
			t.Fatalf("--set %s: %v", kv, err)
		}
	}
	if err := settings.CheckConfig(&d); err != nil {
		t.Fatalf("imported: %v\n%s\n%s", err, e.String(), a.String())
	}
	return e.String(), a.String(), d
}

// Every built-in template at its defaults comes back from its exported
// files (plus the --set of what they do not carry) with every setting in
// effect at the same value.
func TestExportImportRoundTripsEveryTemplate(t *testing.T) {
	reg, err := strategies.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	base, err := settings.Standard()
	if err != nil {
		t.Fatal(err)
	}
	for _, tpl := range reg.Templates() {
		c, err := tpl.Config(base, tpl.Defaults())
		if err != nil {
			t.Fatal(err)
		}
		epp, args, back := exportImport(t, &c)
		want, got := settings.Map(&c), settings.Map(&back)
		if !maps.Equal(want, got) {
			var diff []string
			for _, k := range slices.Sorted(maps.Keys(want)) {
				if want[k] != got[k] {
					diff = append(diff, k+": "+want[k]+" → "+got[k])
				}
			}
			for k := range got {
				if _, ok := want[k]; !ok {
					diff = append(diff, k+": (inert) → "+got[k])
				}
			}
			t.Errorf("%s: round trip changed %s\n%s\n%s", tpl.Name, strings.Join(diff, "; "), epp, args)
		}
	}
}

// llm-d's sample default EndpointPickerConfig (the llm-d Router's
// deploy/config/epp-config.yaml: prefix-cache-scorer weight 2, the decode
// filter, max-score-picker, single-profile-handler) imports as the
// weighted profile of prefix-cache-scorer alone, weight 2, once the
// settings table models that scorer; until then it is the one-line error
// naming it.
func TestLLMDSampleDefaultConfigImports(t *testing.T) {
	sample := `apiVersion: llm-d.ai/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: prefix-cache-scorer
- type: decode-filter
- type: max-score-picker
- type: single-profile-handler
schedulingProfiles:
- name: default
  plugins:
  - pluginRef: decode-filter
  - pluginRef: max-score-picker
  - pluginRef: prefix-cache-scorer
    weight: 2
`
	c, err := settings.Standard()
	if err != nil {
		t.Fatal(err)
	}
	_, err = ApplyEPPConfig("epp-config.yaml", []byte(sample), &c)
	w, modelled := weightSetting("prefix-cache-scorer")
	if !modelled {
		if err == nil || !strings.Contains(err.Error(), "epp-config.yaml: plugin type prefix-cache-scorer is not modelled") {
			t.Fatalf("unmodelled prefix-cache-scorer: %v", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if c.Routing.Policy != "weighted" || len(c.Routing.Scorers) != 1 || w.Value(&c) != "2" {
		t.Fatalf("imported routing %+v", c.Routing)
	}
}

// A profile of no-hit-lru-scorer alone is round-robin only when its
// prefix producer hashes nothing: with none, llm-d's loader adds
// approx-prefix-cache-producer at its defaults, requests can be warm, and
// it is the weighted no-hit-lru-scorer reading that index.
func TestRoundRobinProfileNeedsAProducerThatHashesNothing(t *testing.T) {
	head := "apiVersion: llm-d.ai/v1alpha1\nkind: EndpointPickerConfig\nplugins:\n- type: no-hit-lru-scorer\n"
	for _, c := range []struct {
		extra, policy string
	}{
		{"", "weighted"},
		{"- type: approx-prefix-cache-producer\n", "weighted"},
		{"- type: approx-prefix-cache-producer\n  parameters:\n    maxPrefixTokensToMatch: 64\n", "weighted"},
		{"- type: approx-prefix-cache-producer\n  parameters:\n    maxPrefixTokensToMatch: 1\n", "round-robin"},
		{"- type: approx-prefix-cache-producer\n  parameters:\n    maxPrefixTokensToMatch: 63\n", "round-robin"},
	} {
		cfg, _ := settings.Standard()
		if _, err := ApplyEPPConfig("rr.yaml", []byte(head+c.extra), &cfg); err != nil || cfg.Routing.Policy != c.policy {
			t.Errorf("no-hit-lru-scorer alone with %q: policy %q (%v), want %s", c.extra, cfg.Routing.Policy, err, c.policy)
		}
	}
	// The export of round-robin writes that producer.
	cfg, _ := settings.Standard()
	cfg.Routing.Policy = "round-robin"
	var b bytes.Buffer
	if err := WriteEPPConfig(&b, &cfg, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "- type: approx-prefix-cache-producer\n  parameters:\n    maxPrefixTokensToMatch: 1\n") {
		t.Errorf("round-robin's export lacks the producer that hashes nothing:\n%s", b.String())
	}
}

// llm-d-default without the CPU tier it keeps from the baseline exports
// exactly: every setting in effect is exact or the world, so the
// reproduce line sets only the world, and its files read back to the
// same settings.
func TestLLMDDefaultWithoutCPUTierExportsExactly(t *testing.T) {
	c := templateConfig(t, "llm-d-default")
	tier, _ := settings.Lookup("kv.cpu_blocks")
	if err := tier.Set(&c, "0"); err != nil {
		t.Fatal(err)
	}
	if err := settings.CheckConfig(&c); err != nil {
		t.Fatal(err)
	}
	exact := 0
	for _, cr := range CarriedSettings(&c) {
		if cr.Blocks() {
			t.Errorf("%s=%s blocks exactness: %s", cr.Setting.Key, cr.Value, cr.Note)
		}
		if cr.Fidelity == settings.Exact {
			exact++
		}
	}
	sets, inOrder := ReproduceSets(&c)
	for _, kv := range sets {
		k, _, _ := strings.Cut(kv, "=")
		// The world: a world setting, or a value carried as the world (the
		// profile's 132,139 KV blocks, more than vLLM can hold, are not
		// written as --num-gpu-blocks-override).
		if s, _ := settings.Lookup(k); s.Production.Fidelity != settings.WorldFact && Carry(s, &c).Fidelity != settings.WorldFact {
			t.Errorf("reproduce sets %s, which is not the world", kv)
		}
	}
	if exact < 20 || !inOrder {
		t.Errorf("%d exact settings (want at least 20), in order %v", exact, inOrder)
	}
	_, _, back := exportImport(t, &c)
	if want, got := settings.Map(&c), settings.Map(&back); !maps.Equal(want, got) {
		t.Errorf("round trip changed the settings:\n%v\n%v", want, got)
	}
}

// templateConfig is built-in template name's configuration at its
// defaults.
func templateConfig(t *testing.T, name string) cluster.Config {
	t.Helper()
	reg, base := testkit.Builtins(t)
	tpl, err := reg.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tpl.Config(base, tpl.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// slo-cascade orders the wait queue by class priority: its export turns
// on llm-d's flow control with one band per distinct class priority,
// highest first, each the priority objectives.yaml gives the class, so
// critical is served before standard before sheddable; without the
// feature gate the EPP would run its legacy admission, which orders
// nothing.
func TestSLOCascadeExportOrdersClassesWithFlowControl(t *testing.T) {
	c := templateConfig(t, "slo-cascade")
	if ok, why := OrdersByClass(&c); !ok {
		t.Fatalf("slo-cascade does not order by class: %s", why)
	}
	var b bytes.Buffer
	if err := WriteEPPConfig(&b, &c, nil); err != nil {
		t.Fatal(err)
	}
	epp := b.String()
	if !strings.Contains(epp, "featureGates:\n- flowControl\n") {
		t.Fatalf("no flowControl feature gate:\n%s", epp)
	}
	prio, used := ClassPriorities(&c)
	if !used || !(prio[simcore.SLOCritical] > prio[simcore.SLOStandard] && prio[simcore.SLOStandard] > prio[simcore.SLOSheddable]) {
		t.Fatalf("class priorities %v: want critical > standard > sheddable", prio)
	}
	// The bands in the file, in order: each class's priority once.
	var bands []int
	for _, line := range strings.Split(epp, "\n") {
		var p int
		if _, err := fmt.Sscanf(strings.TrimSpace(line), "- priority: %d", &p); err == nil {
			bands = append(bands, p)
		}
	}
	pos := func(class simcore.SLOClass) int { return slices.Index(bands, prio[class]) }
	if !slices.IsSortedFunc(bands, func(a, b int) int { return b - a }) || len(slices.Compact(slices.Clone(bands))) != len(bands) ||
		!(pos(simcore.SLOCritical) < pos(simcore.SLOStandard) && pos(simcore.SLOStandard) < pos(simcore.SLOSheddable)) {
		t.Errorf("bands %v for priorities %v: want distinct, highest first, critical before standard before sheddable", bands, prio)
	}
	if strings.Contains(epp, utilizationDetector) {
		t.Errorf("flow control ordering needs a detector that reports saturation; the export wrote the one that never does:\n%s", epp)
	}
}

// The precise prefix scorer exports as llm-d's current form: a
// precise-prefix-cache-producer fed by the pods' KV events through the
// data layer, with a vLLM token-producer, read by a prefix-cache-scorer;
// vLLM publishes its KV events on the port the producer subscribes to.
func TestPrecisePrefixExportWiresKVEvents(t *testing.T) {
	c := templateConfig(t, "precise-routing")
	var b bytes.Buffer
	if err := WriteEPPConfig(&b, &c, nil); err != nil {
		t.Fatal(err)
	}
	epp := b.String()
	for _, want := range []string{
		"- type: token-producer\n  parameters:\n    modelName: ",
		"- type: precise-prefix-cache-producer\n  parameters:\n    tokenProcessorConfig: {blockSize: 16}\n    kvEventsConfig: {discoverPods: true, podDiscoveryConfig: {socketPort: 5557}}\n",
		"- type: prefix-cache-scorer\n  name: precise-prefix-cache-scorer\n  parameters:\n    prefixMatchInfoProducerName: precise-prefix-cache-producer\n",
		"dataLayer:\n  sources:\n",
		"    - pluginRef: precise-prefix-cache-producer\n",
		"  - pluginRef: precise-prefix-cache-scorer\n    weight: ",
	} {
		if !strings.Contains(epp, want) {
			t.Errorf("export lacks %q:\n%s", want, epp)
		}
	}
	args := strings.Join(VLLMArgs(&c), "\n")
	if !strings.Contains(args, `--kv-events-config={"enable_kv_cache_events":true,"publisher":"zmq","endpoint":"tcp://*:5557","topic":"kv@$(POD_IP)@`) {
		t.Errorf("vLLM args lack the KV events publisher:\n%s", args)
	}
}

// kustomization.yaml regenerates the EPP's ConfigMap from the exported
// config and appends every exported vLLM argument, in order, to the vllm
// container of llm-d's vllm-d Deployment.
func TestKustomizationPatchesLLMDsDeployment(t *testing.T) {
	c := templateConfig(t, "slo-cascade")
	var b bytes.Buffer
	if err := WriteKustomization(&b, &c, []string{"header"}, "epp-config.yaml", "objectives.yaml"); err != nil {
		t.Fatal(err)
	}
	var k struct {
		APIVersion, Kind   string
		Resources          []string
		ConfigMapGenerator []struct {
			Name  string
			Files []string
		} `yaml:"configMapGenerator"`
		Patches []struct {
			Target struct{ Kind, Name string }
			Patch  string
		}
	}
	if err := yaml.Unmarshal(b.Bytes(), &k); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if k.Kind != "Kustomization" || !slices.Equal(k.Resources, []string{"base", "objectives.yaml"}) ||
		len(k.ConfigMapGenerator) != 1 || k.ConfigMapGenerator[0].Name != EPPConfigMap || !slices.Equal(k.ConfigMapGenerator[0].Files, []string{"epp-config.yaml"}) {
		t.Fatalf("kustomization %+v", k)
	}
	if len(k.Patches) != 1 || k.Patches[0].Target.Kind != "Deployment" || k.Patches[0].Target.Name != VLLMDeployment {
		t.Fatalf("patches %+v", k.Patches)
	}
	var ops []struct{ Op, Path, Value string }
	if err := yaml.Unmarshal([]byte(k.Patches[0].Patch), &ops); err != nil {
		t.Fatal(err)
	}
	var values []string
	for _, op := range ops {
		if op.Op != "add" || op.Path != "/spec/template/spec/containers/0/args/-" {
			t.Errorf("op %+v", op)
		}
		values = append(values, op.Value)
	}
	if want := VLLMArgs(&c); !slices.Equal(values, want) || len(want) < 5 {
		t.Errorf("patched args %q, want the exported %q", values, want)
	}
}

// A profile naming no picker gets the one llm-d's loader inserts: the
// picker the plugins define (random-picker, defined but not referenced,
// is the one that runs), max-score-picker when they define none, and an
// error when they define several, since the loader takes the first of a
// Go map, any of them.
func TestProfileWithoutAPickerGetsTheLoadersPicker(t *testing.T) {
	head := "apiVersion: llm-d.ai/v1alpha1\nkind: EndpointPickerConfig\nplugins:\n- type: queue-scorer\n"
	profile := "schedulingProfiles:\n- name: default\n  plugins:\n  - pluginRef: queue-scorer\n"
	for _, c := range []struct{ extra, picker, err string }{
		{"", "max-score-picker", ""},
		{"- type: random-picker\n", "random-picker", ""},
		{"- type: random-picker\n- type: weighted-random-picker\n", "", "names no picker and plugins define 2 (random-picker, weighted-random-picker)"},
	} {
		cfg, _ := settings.Standard()
		_, err := ApplyEPPConfig("p.yaml", []byte(head+c.extra+profile), &cfg)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: %v, want %q", c.extra, err, c.err)
		case c.err == "" && (err != nil || cfg.Routing.Picker != c.picker):
			t.Errorf("%q: picker %q (%v), want %s", c.extra, cfg.Routing.Picker, err, c.picker)
		}
	}
}

// slo-cascade's files read back give the class order production runs:
// flow control's priority bands are the simulator's priority-fcfs under
// slo-class, and objectives.yaml gives each class the priority its band
// has; an objective naming no class, or a field not modelled, is one line.
func TestFlowControlAndObjectivesImportAsClassOrder(t *testing.T) {
	c := templateConfig(t, "slo-cascade")
	var epp, args, obj bytes.Buffer
	if WriteEPPConfig(&epp, &c, nil) != nil || WriteVLLMArgs(&args, &c, nil) != nil || WriteObjectives(&obj, &c, "pool", nil) != nil {
		t.Fatal("export failed")
	}
	d, _ := settings.Standard()
	if _, err := ApplyVLLMArgs("vllm-args.txt", args.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	if _, err := ApplyEPPConfig("epp-config.yaml", epp.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	res, err := ApplyObjectives("objectives.yaml", obj.Bytes(), &d)
	if err != nil {
		t.Fatal(err)
	}
	if d.Priority.Name != sched.ByClass || settingValue(&d, keys.Scheduler) != sched.PriorityFCFS || len(res.Given) != int(simcore.NumSLOClasses)-1 {
		t.Fatalf("imported policy %q, scheduler %q, %d objectives", d.Priority.Name, settingValue(&d, keys.Scheduler), len(res.Given))
	}
	want, _ := ClassPriorities(&c)
	for class := simcore.SLOCritical; class < simcore.NumSLOClasses; class++ {
		if got := settingValue(&d, keys.PriorityBase+"."+class.String()); got != strconv.Itoa(want[class]) {
			t.Errorf("%s: priority.base %s, want %d", class, got, want[class])
		}
	}
	// Read without the class order, the priorities are said to order nothing.
	hasNote := func(r ImportResult) bool {
		return slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "priorities order nothing") })
	}
	plain, _ := settings.Standard()
	alone, err := ApplyObjectives("objectives.yaml", obj.Bytes(), &plain)
	if err != nil || !hasNote(alone) || hasNote(res) {
		t.Errorf("the note that priorities order nothing: alone %v, with flow control %v (%v)", hasNote(alone), hasNote(res), err)
	}
	// A class no objective names has llm-d's priority 0, whatever the
	// configuration read onto held.
	one := "apiVersion: llm-d.ai/v1alpha2\nkind: InferenceObjective\nmetadata:\n  name: critical\nspec:\n  priority: 7\n"
	if _, err := ApplyObjectives("one.yaml", []byte(one), &d); err != nil {
		t.Fatal(err)
	}
	if got, other := settingValue(&d, keys.PriorityBase+".critical"), settingValue(&d, keys.PriorityBase+".standard"); got != "7" || other != "0" {
		t.Errorf("one objective: critical %s (want 7), standard %s (want 0, it was %d)", got, other, want[simcore.SLOStandard])
	}
	for text, want := range map[string]string{
		"apiVersion: llm-d.ai/v1alpha2\nkind: InferenceObjective\nmetadata:\n  name: gold\nspec:\n  priority: 3\n":                          `o.yaml: document 1: InferenceObjective "gold" names no SLO class`,
		"apiVersion: llm-d.ai/v1alpha2\nkind: InferenceObjective\nmetadata:\n  name: critical\nspec:\n  priority: 3\n  criticality: high\n": "o.yaml: document 1: line 7: field criticality not found",
	} {
		if _, err := ApplyObjectives("o.yaml", []byte(text), &d); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v, want one line with %q", err, want)
		}
	}
}
