package strategies_test

import (
	"slices"
	"strings"
	"testing"

	"optimize/strategies"
)

// joint-slo restricted to what production carries: the parameters of
// settings with no counterpart go (the slo-priority scorer, aging, the
// per-class chunk, the SLO gate's), categoricals keep the choices
// production carries (no sjf or slo-deadline order, no slo-gated
// admission), a categorical left with one choice is fixed (priority_policy
// at slo-class), and the parameters conditioned on a choice that went
// (sheddable_gate) go with it.
func TestForProductionRestrictsJointSLO(t *testing.T) {
	reg, err := strategies.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	tpl, _ := reg.Get("joint-slo")
	d, err := tpl.ForProduction()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	choices := map[string][]string{}
	for _, p := range d.Params {
		names = append(names, p.Name)
		choices[p.Name] = p.Choices
	}
	want := []string{"prefix_affinity_weight", "queue_depth_weight", "kv_utilization_weight", "token_load_weight", "scheduler", "priority_policy",
		"critical_base", "standard_base", "token_budget", "admission", "probabilistic_k", "probabilistic_power"}
	if !slices.Equal(names, want) || len(tpl.Params) != 17 {
		t.Fatalf("parameters %v (of %d), want %v", names, len(tpl.Params), want)
	}
	if !slices.Equal(choices["scheduler"], []string{"fcfs", "priority-fcfs"}) || !slices.Equal(choices["admission"], []string{"always-admit", "probabilistic"}) {
		t.Errorf("choices: scheduler %v, admission %v", choices["scheduler"], choices["admission"])
	}
	// slo-tiered is carried as its class base priorities (flow control's
	// bands); its ageing parameters are not.
	if !slices.Equal(choices["priority_policy"], []string{"slo-class", "slo-tiered"}) || slices.Contains(names, "age_weight_per_ms") {
		t.Errorf("priority_policy choices %v, parameters %v", choices["priority_policy"], names)
	}
	if !d.Deployable || len(d.Space()) != len(d.Params) {
		t.Errorf("deployable %v, space of %d for %d parameters", d.Deployable, len(d.Space()), len(d.Params))
	}
	kps, _ := reg.Get("kv-pressure-slo")
	if _, err := kps.ForProduction(); err == nil || !strings.Contains(err.Error(), "nothing left to search that production carries") {
		t.Errorf("kv-pressure-slo restricted: %v", err)
	}
}
