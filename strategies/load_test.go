package strategies

import (
	"slices"
	"strings"
	"testing"

	"optimize/simcore"
)

// A minimal valid template; the malformed cases below each break one thing.
const validTemplate = `
name: t
description: A valid template.
base: baseline
mechanism:
  scheduler: priority-fcfs
parameters:
  - {name: age, type: log-float, low: 0.001, high: 1, default: 0.01, setting: priority.age_weight_per_ms}
  - {name: chunk, type: int, low: 0, high: 512, default: 256, setting: batch.prefill_threshold.critical}
  - {name: policy, type: categorical, choices: [slo-adaptive, slo-tiered], default: slo-tiered, setting: priority.policy}
objectives:
  - {name: crit, metric: per_slo.critical.ttft_ms.p99, direction: minimize}
  - {name: tps, metric: tokens_per_sec, direction: maximize}
primary: crit
constraints:
  - {metric: tokens_per_sec, min_ratio_to_baseline: 0.98}
`

// addOne loads one file as user/t.yaml into the built-in registry.
func addOne(t *testing.T, body string) (*Registry, error) {
	t.Helper()
	r := builtin(t)
	return r, loadErr(r.add([]sourceFile{{label: "user/t.yaml", data: []byte(body)}}))
}

// loadErr is the first broken file's error, or nil.
func loadErr(broken []BrokenTemplate) error {
	if len(broken) == 0 {
		return nil
	}
	return broken[0].Err
}

func TestValidTemplate(t *testing.T) {
	r, err := addOne(t, validTemplate)
	if err != nil {
		t.Fatal(err)
	}
	tpl, _ := r.Get("t")
	if tpl.Primary != 0 || len(tpl.Objectives) != 2 || !tpl.Objectives[0].Minimize || tpl.Objectives[1].Minimize {
		t.Errorf("objectives %+v primary %d", tpl.Objectives, tpl.Primary)
	}
	if want := (Constraint{Metric: "tokens_per_sec", MinRatioToBaseline: 0.98}); len(tpl.Constraints) != 1 || tpl.Constraints[0] != want {
		t.Errorf("constraints %+v", tpl.Constraints)
	}
	if got := tpl.Defaults(); got[0].Number != 0.01 || got[1].Number != 256 || got[2].Choice != "slo-tiered" {
		t.Errorf("defaults %v", got)
	}
}

// A template written before the field was named setting, with knob:,
// still reads as the same template.
func TestKnobIsTheOldSpellingOfSetting(t *testing.T) {
	r, err := addOne(t, strings.ReplaceAll(validTemplate, "setting: ", "knob: "))
	if err != nil {
		t.Fatal(err)
	}
	tpl, _ := r.Get("t")
	if len(tpl.Params) != 3 || tpl.Params[0].SettingKey != "priority.age_weight_per_ms" || tpl.Params[2].SettingKey != "priority.policy" {
		t.Errorf("parameters %+v", tpl.Params)
	}
}

// 0 is a bound like any other: "no dropped requests at all".
func TestConstraintBoundZero(t *testing.T) {
	r, err := addOne(t, strings.Replace(validTemplate, "{metric: tokens_per_sec, min_ratio_to_baseline: 0.98}", "{metric: dropped, max: 0}", 1))
	if err != nil {
		t.Fatal(err)
	}
	tpl, _ := r.Get("t")
	if want := (Constraint{Metric: "dropped", Max: 0, HasMax: true}); len(tpl.Constraints) != 1 || tpl.Constraints[0] != want {
		t.Errorf("constraints %+v, want %+v", tpl.Constraints, want)
	}
}

// A delta of 0 is a bound too ("no worse than the baseline"), and it
// reaches the JSON a client reads.
func TestConstraintDeltaZero(t *testing.T) {
	r, err := addOne(t, strings.Replace(validTemplate, "{metric: tokens_per_sec, min_ratio_to_baseline: 0.98}", "{metric: tokens_per_sec, min_delta_to_baseline: 0}", 1))
	if err != nil {
		t.Fatal(err)
	}
	tpl, _ := r.Get("t")
	if want := (Constraint{Metric: "tokens_per_sec", HasMinDelta: true}); len(tpl.Constraints) != 1 || tpl.Constraints[0] != want {
		t.Fatalf("constraints %+v, want %+v", tpl.Constraints, want)
	}
	if cj := tpl.JSON().Constraints[0]; cj.MinDeltaToBaseline == nil || *cj.MinDeltaToBaseline != 0 {
		t.Errorf("JSON constraint %+v: want min_delta_to_baseline 0", cj)
	}
	if got, want := tpl.Constraints[0].Words(), "tokens_per_sec ≥ baseline +0"; got != want {
		t.Errorf("Words() = %q, want %q", got, want)
	}
}

// Every malformed template is rejected with one line naming the file, the
// field and what is allowed; the registry is left unchanged.
func TestMalformedTemplates(t *testing.T) {
	edit := func(old, new string) string {
		if !strings.Contains(validTemplate, old) {
			t.Fatalf("fixture lacks %q", old)
		}
		return strings.Replace(validTemplate, old, new, 1)
	}
	cases := []struct {
		name, body, want string
	}{
		{"yaml syntax", "name: [t", "user/t.yaml: line 1: did not find expected"},
		{"empty file", "", "user/t.yaml: empty file"},
		{"two documents", validTemplate + "---\nname: u\n", "user/t.yaml: only one YAML document is allowed"},
		{"not a mapping", "- a\n- b\n", "user/t.yaml: line 1: expected a mapping, got a list"},
		{"unknown key", edit("primary: crit", "primary: crit\nprimery: crit"),
			"user/t.yaml: primery: line 15: unknown key (allowed: name, description, base, workload, mechanism, parameters, objectives, primary, constraints, regimes, sampler, robust_regimes, robust_worlds, robust_aggregate, robust_prune, base_parameters, deployable, gpus)"},
		{"unknown sampler", edit("primary: crit", "primary: crit\nsampler: tpee"),
			`user/t.yaml: sampler: unknown sampler "tpee" (allowed: gp, tpe, parego, random, grid)`},
		{"unknown robust regime", edit("primary: crit", "primary: crit\nrobust_regimes: [base, calm]"),
			`user/t.yaml: robust_regimes: unknown regime "calm" (regimes: base, rate-0.5x`},
		{"robust_prune not a boolean", edit("primary: crit", "primary: crit\nrobust_regimes: [base, near-capacity]\nrobust_prune: sometimes"),
			`user/t.yaml: robust_prune: line 16: "sometimes" is not true or false`},
		{"robust_prune without scenarios", edit("primary: crit", "primary: crit\nrobust_prune: true"),
			`user/t.yaml: robust_prune: a study of one scenario has nothing to prune (a trial's scenarios are what it stops between): give robust_regimes or robust_worlds too`},
		{"unknown robust world", edit("primary: crit", "primary: crit\nrobust_worlds: [physics]"),
			`user/t.yaml: robust_worlds: unknown world "physics" (latency models: blackbox, trained-physics, roofline; built-in worlds: qwen3-14b-h100-vllm0.23)`},
		{"unknown regime", edit("primary: crit", "primary: crit\nregimes: [moderate, calm]"),
			"user/t.yaml: regimes[1]: unknown regime \"calm\" (regimes: rate-0.5x,"},
		{"regime given twice", edit("primary: crit", "primary: crit\nregimes: [moderate, moderate]"), `user/t.yaml: regimes[1]: regime "moderate" given twice`},
		{"unknown workload regime", edit("base: baseline", "base: baseline\nworkload: orthogonal-slo@calm"), `user/t.yaml: workload: unknown regime "calm"`},
		{"setting given twice, once by its old field name knob", edit("setting: priority.age_weight_per_ms", "setting: priority.age_weight_per_ms, knob: priority.age_weight_per_ms"),
			"user/t.yaml: parameters[0].knob: line 8: the setting is given as setting too; give it once, as setting"},
		{"unknown setting under the old field name knob", edit("setting: priority.age_weight_per_ms", "knob: priority.age_weight"),
			`user/t.yaml: parameters[0].knob: line 8: unknown setting "priority.age_weight" (settings:`},
		{"unknown parameter key", edit("{name: age, type", "{name: age, kind: float, type"),
			"user/t.yaml: parameters[0].kind: line 8: unknown key (allowed: name, type, low, high, choices, default, setting, knob, when)"},
		{"repeated key", edit("primary: crit", "primary: crit\nprimary: tps"), "user/t.yaml: primary: line 15: key given twice"},
		{"missing name", edit("name: t\n", ""), `user/t.yaml: name: required (the file name without .yaml: "t")`},
		{"name differs from file", edit("name: t\n", "name: u\n"), `user/t.yaml: name: "u" must match the file name "t"`},
		{"missing description", edit("description: A valid template.\n", ""), "user/t.yaml: description: required"},
		{"unknown base", edit("base: baseline", "base: baseline2"), `user/t.yaml: base: unknown template "baseline2" (available: autoscale, baseline,`},
		{"unknown workload", edit("base: baseline", "base: baseline\nworkload: mystery"),
			`user/t.yaml: workload: unknown built-in workload "mystery" (available: decode-heavy, multi-turn-kv, orthogonal-slo, prefill-heavy, ramp-chat, steady-chat; traces: mooncake-conversation, mooncake-synthetic, azure-conv-2023, azure-code-2023)`},
		{"unknown mechanism setting", edit("scheduler: priority-fcfs", "schedular: priority-fcfs"),
			`user/t.yaml: mechanism.schedular: line 6: unknown setting "schedular" (settings: admission.policy, admission.probabilistic.k,`},
		{"mechanism value the knob rejects", edit("scheduler: priority-fcfs", "scheduler: lifo"),
			`user/t.yaml: mechanism.scheduler: line 6: scheduler: "lifo" is not allowed (allowed: fcfs, priority-fcfs, sjf, slo-deadline)`},
		{"mechanism value out of knob range", edit("scheduler: priority-fcfs", "kv.offload_threshold: 1.5"),
			"user/t.yaml: mechanism.kv.offload_threshold: line 6: kv.offload_threshold: 1.5 is out of range (allowed: numbers in [0, 1])"},
		{"mechanism list value", edit("scheduler: priority-fcfs", "scheduler: [fcfs]"),
			"user/t.yaml: mechanism.scheduler: line 6: expected a single value, got a list"},
		{"unknown parameter setting", edit("setting: priority.age_weight_per_ms", "setting: priority.age_weight"),
			`user/t.yaml: parameters[0].setting: line 8: unknown setting "priority.age_weight" (settings:`},
		{"bad type", edit("type: log-float", "type: logfloat"),
			`user/t.yaml: parameters[0].type: line 8: "logfloat" is not a type (allowed: float, int, log-float, categorical)`},
		{"inverted bounds", edit("low: 0, high: 512", "low: 512, high: 0"),
			"user/t.yaml: parameters[1].low: line 9: bounds inverted: low 512 > high 0"},
		{"equal bounds", edit("low: 0, high: 512", "low: 5, high: 5"),
			"user/t.yaml: parameters[1].high: line 9: low and high are both 5: fix the value in the mechanism instead"},
		{"missing high", edit("low: 0, high: 512,", "low: 0,"), "user/t.yaml: parameters[1].high: line 9: required for a int parameter"},
		{"default out of range", edit("default: 256", "default: 600"),
			"user/t.yaml: parameters[1].default: line 9: chunk: 600 is out of range (allowed: whole numbers in [0, 512])"},
		{"default not a number", edit("default: 256", "default: lots"),
			`user/t.yaml: parameters[1].default: line 9: "lots" is not a number (range [0, 512])`},
		{"missing default", edit(", default: 256", ""), "user/t.yaml: parameters[1].default: line 9: required: a value in [0, 512]"},
		{"bounds outside knob range", edit("low: 0, high: 512", "low: -1, high: 512"),
			"user/t.yaml: parameters[1].low: line 9: batch.prefill_threshold.critical: -1 is out of range (allowed: whole numbers in [0, 2147483647])"},
		{"log-float from zero", edit("low: 0.001, high: 1", "low: 0, high: 1"),
			"user/t.yaml: parameters[0].low: line 8: a log-float parameter needs low > 0, got 0"},
		{"float parameter on int knob", edit("{name: chunk, type: int", "{name: chunk, type: float"),
			"user/t.yaml: parameters[1].type: line 9: setting batch.prefill_threshold.critical takes whole numbers: use type int (or categorical)"},
		{"numeric parameter on categorical knob", edit("type: categorical, choices: [slo-adaptive, slo-tiered], default: slo-tiered", "type: float, low: 0, high: 1, default: 0"),
			"user/t.yaml: parameters[2].type: line 10: setting priority.policy takes one of constant, slo-based, slo-class, slo-tiered, slo-adaptive: use type categorical"},
		{"choice the knob rejects", edit("choices: [slo-adaptive, slo-tiered]", "choices: [slo-adaptive, fifo]"),
			`user/t.yaml: parameters[2].choices[1]: line 10: priority.policy: "fifo" is not allowed (allowed: constant, slo-based, slo-class, slo-tiered, slo-adaptive)`},
		{"numeric choice the knob rejects", edit("{name: chunk, type: int, low: 0, high: 512, default: 256,", "{name: chunk, type: categorical, choices: [0, 0.5], default: 0,"),
			"user/t.yaml: parameters[1].choices[1]: line 9: batch.prefill_threshold.critical: 0.5 is not a whole number (allowed: whole numbers in [0, 2147483647])"},
		{"default not a choice", edit("default: slo-tiered", "default: constant"),
			`user/t.yaml: parameters[2].default: line 10: "constant" is not one of the choices {slo-adaptive, slo-tiered}`},
		{"single choice", edit("choices: [slo-adaptive, slo-tiered], default: slo-tiered", "choices: [slo-tiered], default: slo-tiered"),
			"user/t.yaml: parameters[2].choices: line 10: a categorical parameter needs at least 2 choices"},
		{"duplicate choice", edit("choices: [slo-adaptive, slo-tiered]", "choices: [slo-tiered, slo-tiered]"),
			`user/t.yaml: parameters[2].choices[1]: line 10: choice "slo-tiered" given twice`},
		{"duplicate parameter name", edit("{name: chunk,", "{name: age,"), `user/t.yaml: parameters[1].name: line 9: duplicate parameter name "age"`},
		{"bad parameter name", edit("{name: chunk,", "{name: Chunk-Size,"),
			`user/t.yaml: parameters[1].name: line 9: "Chunk-Size" must be lower_snake_case (letters, digits, _)`},
		{"two parameters on one setting", edit("setting: batch.prefill_threshold.critical", "setting: priority.age_weight_per_ms"),
			"user/t.yaml: parameters[1].setting: line 9: setting priority.age_weight_per_ms is already tuned by parameter age"},
		{"parameter on a mechanism setting", edit("scheduler: priority-fcfs", "priority.policy: slo-tiered"),
			"user/t.yaml: parameters[2].setting: line 10: setting priority.policy is also fixed in this template's mechanism; drop one"},
		{"unknown objective metric", edit("metric: tokens_per_sec, direction", "metric: tokens_per_second, direction"),
			`user/t.yaml: objectives[1].metric: unknown metric "tokens_per_second" (allowed: completed, rejected,`},
		{"bad statistic", edit("ttft_ms.p99", "ttft_ms.p95"),
			`user/t.yaml: objectives[0].metric: unknown metric "per_slo.critical.ttft_ms.p95": statistic "p95" is not one of mean, p50, p90, p99`},
		{"bad class", edit("per_slo.critical", "per_slo.premium"),
			`user/t.yaml: objectives[0].metric: unknown metric "per_slo.premium.ttft_ms.p99": want per_slo.<class>.<field> with <class> one of critical, standard, sheddable, batch, background, default`},
		{"bad direction", edit("direction: maximize", "direction: up"),
			`user/t.yaml: objectives[1].direction: line 13: "up" is not a direction (allowed: minimize, maximize)`},
		{"missing direction", edit(", direction: maximize", ""), "user/t.yaml: objectives[1].direction: line 13: required (allowed: minimize, maximize)"},
		{"duplicate objective", edit("{name: tps,", "{name: crit,"), `user/t.yaml: objectives[1].name: duplicate objective name "crit"`},
		{"no objectives", edit("objectives:\n  - {name: crit, metric: per_slo.critical.ttft_ms.p99, direction: minimize}\n  - {name: tps, metric: tokens_per_sec, direction: maximize}\n", "objectives: []\n"),
			"user/t.yaml: objectives: give at least one objective"},
		{"primary not an objective", edit("primary: crit", "primary: e2e"), `user/t.yaml: primary: "e2e" is not an objective (objectives: crit, tps)`},
		{"unknown constraint metric", edit("{metric: tokens_per_sec, min_ratio", "{metric: tps, min_ratio"),
			`user/t.yaml: constraints[0].metric: line 16: unknown metric "tps"`},
		{"repeated constraint key", edit("min_ratio_to_baseline: 0.98", "metric: x"), "user/t.yaml: constraints[0].metric: line 16: key given twice"},
		{"constraint with no bound", edit(", min_ratio_to_baseline: 0.98", ""),
			"user/t.yaml: constraints[0]: line 16: give at least one of min_ratio_to_baseline, max_ratio_to_baseline, min_delta_to_baseline, min, max"},
		{"constraint zero ratio", edit("min_ratio_to_baseline: 0.98", "max_ratio_to_baseline: 0"),
			"user/t.yaml: constraints[0].max_ratio_to_baseline: line 16: a ratio to the baseline must be > 0, got 0"},
		{"constraint inverted around zero", edit("min_ratio_to_baseline: 0.98", "min: 0, max: -1"), "user/t.yaml: constraints[0].min: line 16: min 0 > max -1"},
		{"constraint inverted", edit("min_ratio_to_baseline: 0.98", "min: 5, max: 1"), "user/t.yaml: constraints[0].min: line 16: min 5 > max 1"},
		{"constraint string bound", edit("min_ratio_to_baseline: 0.98", "min: high"),
			`user/t.yaml: constraints[0].min: line 16: expected a number, got "high"`},
		{"defaults make an invalid config", edit("scheduler: priority-fcfs", "admission.policy: slo-gated"),
			"user/t.yaml: parameters: the defaults do not make a valid configuration: template t: admission.policy: slo-gated needs at least one class's gate (admission.slo_gate.<class>)"},
		{"parameter with no effect", edit("choices: [slo-adaptive, slo-tiered]", "choices: [slo-class, slo-tiered]"),
			"user/t.yaml: parameter age sets priority.age_weight_per_ms, which has no effect unless priority.policy is slo-tiered or slo-adaptive and (scheduler is priority-fcfs or preemption.policy is priority) (priority.policy is slo-class) when policy=slo-class"},
		{"parameter with no effect at the defaults", edit("scheduler: priority-fcfs", "scheduler: sjf"),
			"user/t.yaml: parameter age sets priority.age_weight_per_ms, which has no effect unless priority.policy is slo-tiered or slo-adaptive and (scheduler is priority-fcfs or preemption.policy is priority) (scheduler is sjf; preemption.policy is fcfs)"},
		{"mechanism setting with no effect", edit("scheduler: priority-fcfs", "scheduler: priority-fcfs\n  admission.token_bucket.capacity: 500"),
			"user/t.yaml: mechanism sets admission.token_bucket.capacity, which has no effect unless admission.policy is token-bucket (it is always-admit)"},
		{"mechanism setting that never has an effect", edit("scheduler: priority-fcfs", "scheduler: priority-fcfs\n  priority.bridge: true"),
			"user/t.yaml: mechanism sets priority.bridge, which has no effect: the scheduler rescores"},
		{"condition on a later parameter", edit("setting: priority.age_weight_per_ms}", "setting: priority.age_weight_per_ms, when: {policy: slo-tiered}}"),
			`user/t.yaml: parameters[0].when: line 8: "policy" is not a parameter declared before this one`},
		{"condition on a numeric parameter", edit("setting: batch.prefill_threshold.critical}", "setting: batch.prefill_threshold.critical, when: {age: 1}}"),
			"user/t.yaml: parameters[1].when: line 9: parameter age is log-float; a condition names a categorical parameter"},
		{"condition on an unknown choice", edit("{name: chunk,", "{name: policy2, type: categorical, choices: [fcfs, priority], default: fcfs, setting: preemption.policy}\n  - {name: chunk, when: {policy2: lifo},"),
			`user/t.yaml: parameters[2].when: line 10: "lifo" is not a choice of parameter policy2 {fcfs, priority}`},
		{"condition with two parameters", edit("{name: chunk,", "{name: policy2, type: categorical, choices: [fcfs, priority], default: fcfs, setting: preemption.policy}\n  - {name: chunk, when: {policy2: fcfs, age: 1},"),
			"user/t.yaml: parameters[2].when.age: line 10: a condition names one parameter"},
		{"unknown base_parameters mode", edit("base: baseline", "base: baseline\nbase_parameters: keep"),
			`user/t.yaml: base_parameters: line 5: "keep" is not a mode (allowed: freeze, search)`},
		{"base_parameters search with no base", edit("base: baseline", "base_parameters: search"),
			"user/t.yaml: base_parameters: search needs a base template to take the parameters from"},
		{"fixing a setting the base searches", edit("base: baseline\nmechanism:\n  scheduler: priority-fcfs", "base: joint-slo\nbase_parameters: search\nmechanism:\n  scheduler: priority-fcfs"),
			"user/t.yaml: mechanism.scheduler: line 7: setting scheduler is searched by the base's parameter scheduler (base_parameters: search); drop one"},
		{"every scorer removed", edit("scheduler: priority-fcfs", "routing.weight.kv-utilization: 0"),
			"user/t.yaml: parameters: the defaults do not make a valid configuration: template t: routing: every routing.weight.* is 0; the weighted policy with routing.picker blis needs a scorer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.body
			if tc.name == "every scorer removed" {
				body = strings.Replace(body, "parameters:\n", "parameters:\n  - {name: pa, type: float, low: 0, high: 1, default: 0, setting: routing.weight.prefix-affinity}\n  - {name: qd, type: float, low: 0, high: 1, default: 0, setting: routing.weight.queue-depth}\n", 1)
			}
			r, err := addOne(t, body)
			if err == nil {
				t.Fatalf("loaded; want %q", tc.want)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, tc.want) {
				t.Errorf("error\n  %s\nwant prefix\n  %s", msg, tc.want)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans several lines: %q", msg)
			}
			if _, err := r.Get("t"); err == nil {
				t.Error("a rejected template was registered")
			}
		})
	}
}

func TestBaseCycle(t *testing.T) {
	r := builtin(t)
	broken := r.add([]sourceFile{
		{label: "user/a.yaml", data: []byte("name: a\ndescription: A.\nbase: b\n")},
		{label: "user/b.yaml", data: []byte("name: b\ndescription: B.\nbase: a\n")},
	})
	// Each member of the cycle is broken, its error naming its own file.
	var got []string
	for _, b := range broken {
		got = append(got, b.Err.Error())
	}
	want := []string{"user/a.yaml: base: inheritance cycle a → b → a", "user/b.yaml: base: inheritance cycle a → b → a"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// Bases resolve whatever the file order, and a child's own mechanism
// replaces an inherited knob in place (the scorer order stays the base's).
func TestInheritanceOrder(t *testing.T) {
	r := builtin(t)
	err := loadErr(r.add([]sourceFile{
		{label: "user/child.yaml", data: []byte("name: child\ndescription: C.\nbase: parent\nmechanism: {routing.weight.prefix-affinity: 7}\n")},
		{label: "user/parent.yaml", data: []byte("name: parent\ndescription: P.\nbase: kv-pressure\nworkload: orthogonal-slo\n")},
	}))
	if err != nil {
		t.Fatal(err)
	}
	child, _ := r.Get("child")
	cfg, err := child.Config(profileBase(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := scorers("prefix-affinity", 7, "queue-depth", 2, "kv-pressure", 3)
	if got := cfg.Routing.Scorers; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("scorers %v, want %v", got, want)
	}
	if child.Workload != "orthogonal-slo" || child.Objectives[3].Name != "batch_ttft_p99" {
		t.Errorf("workload %s and objectives %+v are inherited", child.Workload, child.Objectives)
	}
	var from []string
	for _, s := range child.Mechanism() {
		if s.SettingKey == "routing.weight.prefix-affinity" || s.SettingKey == "routing.weight.kv-pressure" || s.SettingKey == "num_instances" {
			from = append(from, s.SettingKey+"="+s.Value+"@"+s.From)
		}
	}
	if got := strings.Join(from, " "); got != "num_instances=4@pressure-baseline routing.weight.prefix-affinity=7@child routing.weight.kv-pressure=3@kv-pressure" {
		t.Errorf("mechanism %s", got)
	}
}

// Two parameters may tune one setting under disjoint choices of one
// categorical (at most one is active); overlapping choices, or no
// condition on one of them, are refused.
func TestParametersShareASettingOnlyUnderDisjointChoices(t *testing.T) {
	const head = `name: t
description: A valid template.
base: baseline
parameters:
  - {name: sched, type: categorical, choices: [fcfs, priority-fcfs, sjf], default: priority-fcfs, setting: scheduler}
`
	tail := `objectives:
  - {name: tps, metric: tokens_per_sec, direction: maximize}
primary: tps
`
	ok := head + `  - {name: chunk_a, type: int, low: 0, high: 512, default: 256, setting: batch.prefill_threshold.critical, when: {sched: fcfs}}
  - {name: chunk_b, type: int, low: 0, high: 512, default: 128, setting: batch.prefill_threshold.critical, when: {sched: [priority-fcfs, sjf]}}
` + tail
	r, err := addOne(t, ok)
	if err != nil {
		t.Fatal(err)
	}
	tpl, _ := r.Get("t")
	cfg, err := tpl.Config(profileBase(t), tpl.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := cfg.SLOPrefillThreshold.Get(simcore.SLOCritical); got != 128 {
		t.Errorf("at the defaults (priority-fcfs) the critical chunk is %v, want chunk_b's 128", got)
	}
	for name, body := range map[string]string{
		"overlapping choices": head + `  - {name: chunk_a, type: int, low: 0, high: 512, default: 256, setting: batch.prefill_threshold.critical, when: {sched: [fcfs, sjf]}}
  - {name: chunk_b, type: int, low: 0, high: 512, default: 128, setting: batch.prefill_threshold.critical, when: {sched: sjf}}
` + tail,
		"one unconditional": head + `  - {name: chunk_a, type: int, low: 0, high: 512, default: 256, setting: batch.prefill_threshold.critical}
  - {name: chunk_b, type: int, low: 0, high: 512, default: 128, setting: batch.prefill_threshold.critical, when: {sched: sjf}}
` + tail,
	} {
		_, err := addOne(t, body)
		if want := "user/t.yaml: parameters[2].setting: line 7: setting batch.prefill_threshold.critical is already tuned by parameter chunk_a (two parameters share a setting only under disjoint choices of one categorical: when)"; err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %q", name, err, want)
		}
	}
}
