package strategies

import (
	"strings"
	"testing"

	"optimize/search"
)

// pd-split's every point is a cluster of exactly 8 GPUs: the decode pool
// takes the GPUs the prefill pool leaves, at the decode TP, and
// aggregated is 8 instances at TP1.
func TestPDSplitKeepsItsGPUs(t *testing.T) {
	tpl, err := builtin(t).Get("pd-split")
	if err != nil {
		t.Fatal(err)
	}
	base := profileBase(t)
	cases := []struct {
		params                     []string
		prefill, decode, instances int
	}{
		{nil, 0, 0, 8},
		{[]string{"serving=disaggregated", "prefill_p1_d1=3"}, 3, 5, 8},
		{[]string{"serving=disaggregated", "prefill_tp_d1=2", "prefill_p2_d1=3"}, 3, 2, 5},
		{[]string{"serving=disaggregated", "decode_tp=2", "prefill_p1_d2=6"}, 6, 1, 7},
		{[]string{"serving=disaggregated", "decode_tp=2", "prefill_tp_d2=2", "prefill_p2_d2=1"}, 1, 3, 4},
	}
	for _, tc := range cases {
		values, err := tpl.ParseParams(tc.params)
		if err != nil {
			t.Fatal(err)
		}
		c, err := tpl.Config(base, values)
		if err != nil {
			t.Fatalf("%v: %v", tc.params, err)
		}
		if c.PD.Prefill != tc.prefill || c.PD.Decode != tc.decode || c.NumInstances != tc.instances {
			t.Errorf("%v: %d prefill + %d decode of %d instances, want %d + %d of %d", tc.params, c.PD.Prefill, c.PD.Decode, c.NumInstances, tc.prefill, tc.decode, tc.instances)
		}
		w, err := c.Resolve()
		if err != nil {
			t.Fatal(err)
		}
		if gpus, _ := c.ClusterCost(w); gpus != 8 {
			t.Errorf("%v: %d GPUs, want 8", tc.params, gpus)
		}
	}
}

// Without a GPU total, a prefill pool goes in front of the instances,
// which become the decode pool: capacity-pd's 4 A100s with 2 prefill
// instances are 6 instances, 2 + 4, and cost 6 GPUs.
func TestPrefillPoolInFrontOfTheInstances(t *testing.T) {
	tpl, err := builtin(t).Get("capacity-pd")
	if err != nil {
		t.Fatal(err)
	}
	values, err := tpl.ParseParams([]string{"serving=disaggregated", "prefill_instances=2"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := tpl.Config(profileBase(t), values)
	if err != nil {
		t.Fatal(err)
	}
	if c.PD.Prefill != 2 || c.PD.Decode != 4 || c.NumInstances != 6 || c.PD.Decider != "always" {
		t.Errorf("%d prefill + %d decode of %d instances, decider %q; want 2 + 4 of 6, always", c.PD.Prefill, c.PD.Decode, c.NumInstances, c.PD.Decider)
	}
	if v, ok := ConfigMetric(&c, "gpu_count"); !ok || v != 6 {
		t.Errorf("gpu_count %v (%v), want 6", v, ok)
	}
}

// A switch tunes no setting: applying it changes nothing but which
// parameters apply; one that conditions nothing is an error, and so is a
// numeric parameter without a setting, a setting a GPU total derives, a
// GPU total that is not a whole number, or one the pools cannot fill.
func TestSwitchesAndGPUTotals(t *testing.T) {
	const head = "name: t\ndescription: x\nbase: baseline\n"
	cases := []struct{ name, body, want string }{
		{"switch conditioning nothing", head + "parameters:\n  - {name: mode, type: categorical, choices: [a, b], default: a}\n",
			"user/t.yaml: parameters[0].setting: parameter mode tunes no setting and no parameter is conditioned on it"},
		{"numeric without a setting", head + "parameters:\n  - {name: n, type: int, low: 1, high: 3, default: 1}\n",
			"user/t.yaml: parameters[0].setting: line 5: required for a int parameter"},
		{"switch choice not a name", head + "parameters:\n  - {name: mode, type: categorical, choices: [a, B c], default: a}\n",
			`user/t.yaml: parameters[0].choices[1]: line 5: a switch's choice "B c" must be lower_snake_case`},
		{"gpus and num_instances", head + "gpus: 8\nmechanism:\n  num_instances: 4\n",
			"user/t.yaml: mechanism.num_instances: line 6: setting num_instances follows from the template's gpus (8): neither fix nor search it"},
		{"gpus not whole", head + "gpus: 7.5\n", `user/t.yaml: gpus: line 4: the GPU total must be a whole number in [1, 4096], got 7.5`},
		{"gpus the pools cannot fill", head + "gpus: 4\nmechanism:\n  pd.decider: always\n  pd.prefill_tp: 2\n  tp: 1\nparameters:\n  - {name: p, type: int, low: 1, high: 2, default: 1, setting: pd.prefill_instances}\n",
			"user/t.yaml: parameters: template t: gpus 4: 2 prefill instances at TP 2 leave 0 GPUs, not a whole number ≥ 1 of decode instances at TP 1 (pd.prefill_instances) when p=2 (its high end)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := addOne(t, tc.body)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("got %v\nwant prefix %s", err, tc.want)
			}
		})
	}
}

// Two parameters under conditions on different categoricals may share a
// setting when a condition's own parameter is conditioned apart:
// pd-split's prefill counts (under prefill_tp_d1 and prefill_tp_d2, which
// are under the two choices of decode_tp) are never active together.
func TestChainedConditionsAreExclusive(t *testing.T) {
	tpl, err := builtin(t).Get("pd-split")
	if err != nil {
		t.Fatal(err)
	}
	cond := func(name string) *search.When { return tpl.Params[tpl.Space().Index(name)].When }
	if !tpl.exclusive(cond("prefill_p1_d1"), cond("prefill_p1_d2")) || !tpl.exclusive(cond("prefill_p2_d2"), cond("prefill_p1_d1")) {
		t.Error("prefill counts under the two decode TPs are not exclusive")
	}
	if tpl.exclusive(cond("decider"), cond("prefill_p1_d1")) {
		t.Error("decider (serving=disaggregated) and prefill_p1_d1 (under it) reported exclusive")
	}
}
