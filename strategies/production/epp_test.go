package production

import (
	"bytes"
	"maps"
	"slices"
	"strings"
	"testing"

	"optimize/simcore/cluster"
	"optimize/strategies"
	"optimize/strategies/settings"
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

// A profile of no-hit-lru-scorer alone is round-robin only without a
// prefix producer: with one, requests can hit, and it is that scorer.
func TestRoundRobinProfileNeedsNoPrefixProducer(t *testing.T) {
	rr := "apiVersion: llm-d.ai/v1alpha1\nkind: EndpointPickerConfig\nplugins:\n- type: no-hit-lru-scorer\n"
	c, _ := settings.Standard()
	c.Routing.Policy = "weighted"
	if _, err := ApplyEPPConfig("rr.yaml", []byte(rr), &c); err != nil || c.Routing.Policy != "round-robin" {
		t.Fatalf("no-hit-lru-scorer alone: policy %q, %v", c.Routing.Policy, err)
	}
	_, err := ApplyEPPConfig("p.yaml", []byte(rr+"- type: approx-prefix-cache-producer\n"), &c)
	if _, modelled := weightSetting(settings.RoundRobinScorer); !modelled && (err == nil || !strings.Contains(err.Error(), "not modelled")) {
		t.Fatalf("with a prefix producer: %v, policy %q", err, c.Routing.Policy)
	}
}

// llm-d-default without the CPU tier it keeps from the baseline exports
// exactly: every setting in effect is exact or the world, so the
// reproduce line sets only the world, and its files read back to the
// same settings.
func TestLLMDDefaultWithoutCPUTierExportsExactly(t *testing.T) {
	reg, err := strategies.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	base, err := settings.Standard()
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := reg.Get("llm-d-default")
	if err != nil {
		t.Fatal(err)
	}
	c, err := tpl.Config(base, tpl.Defaults())
	if err != nil {
		t.Fatal(err)
	}
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
