package strategies

import (
	"slices"
	"testing"
)

// Pinning a categorical parameter drops the parameters that are active
// only on its other choices (joint-slo's SLO-gated admission settings once
// admission is probabilistic) and keeps those active on the pinned one, so
// the space stays valid for the sampler.
func TestPinnedChoiceDropsUnreachableParameters(t *testing.T) {
	reg, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := reg.Get("joint-slo")
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := tpl.Pinned("admission.policy", "probabilistic")
	if err != nil {
		t.Fatal(err)
	}
	if err := pinned.Space().Validate(); err != nil {
		t.Fatalf("pinned space: %v", err)
	}
	names := func(tp *Template) (out []string) {
		for _, p := range tp.Params {
			out = append(out, p.Name)
		}
		return out
	}
	var gated, prob int
	for _, p := range tpl.Params {
		if p.When != nil && p.When.Param == "admission" {
			if slices.Contains(p.When.Choices, "probabilistic") {
				prob++
			} else {
				gated++
			}
		}
	}
	if gated == 0 || prob == 0 || len(pinned.Params) != len(tpl.Params)-gated {
		t.Errorf("joint-slo %v; pinned %v: want the %d parameters of other admission choices gone, the %d of probabilistic kept", names(tpl), names(pinned), gated, prob)
	}
	if len(tpl.Space()) != len(tpl.Params) || tpl.Space().Validate() != nil {
		t.Error("pinning changed the original template")
	}
}
