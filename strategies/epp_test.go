package strategies

import (
	"bytes"
	"maps"
	"slices"
	"strings"
	"testing"

	"optimize/simcore/cluster"
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
	d, err := Standard()
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
	for _, kv := range ReproduceSets(c) {
		k, v, _ := strings.Cut(kv, "=")
		s, _ := LookupSetting(k)
		if err := s.Set(&d, v); err != nil {
			t.Fatalf("--set %s: %v", kv, err)
		}
	}
	if err := CheckConfig(&d); err != nil {
		t.Fatalf("imported: %v\n%s\n%s", err, e.String(), a.String())
	}
	return e.String(), a.String(), d
}

// Every built-in template at its defaults comes back from its exported
// files (plus the --set of what they do not carry) with every setting in
// effect at the same value.
func TestExportImportRoundTripsEveryTemplate(t *testing.T) {
	reg, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	base, err := Standard()
	if err != nil {
		t.Fatal(err)
	}
	for _, tpl := range reg.Templates() {
		c, err := tpl.Config(base, tpl.Defaults())
		if err != nil {
			t.Fatal(err)
		}
		epp, args, back := exportImport(t, &c)
		want, got := SettingsMap(&c), SettingsMap(&back)
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
