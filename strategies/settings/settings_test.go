package settings

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"optimize/search"
	"optimize/simcore"
	"optimize/simcore/cluster"
	"optimize/simcore/route"
)

func TestSettingsTableIsSortedAndComplete(t *testing.T) {
	ks := All()
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = k.Key
		if k.Doc == "" || k.set == nil || k.get == nil || k.copy == nil || k.Component == "" || k.Flag == "" {
			t.Errorf("%s: needs a doc, a flag, a component, and a getter, setter and copier", k.Key)
		}
		if k.Kind == search.LogFloat {
			t.Errorf("%s: settings are float, int or categorical", k.Key)
		}
		if k.Default() == "" {
			t.Errorf("%s: no default and no Unset text", k.Key)
		}
	}
	if !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Fatalf("knob names must be sorted and unique: %v", names)
	}
	required := []string{"num_instances", "routing.policy", "routing.prefix_index_capacity", "routing.cache_signal_delay_us",
		"routing.snapshot_refresh_us", "routing.kv_pressure.transfer_scale", "routing.kv_pressure.thrash_weight", "scheduler",
		"priority.policy", "priority.age_weight_per_ms", "priority.bridge", "preemption.policy", "batch.long_prefill_token_threshold",
		"batch.max_num_scheduled_tokens", "batch.max_num_running_reqs", "admission.policy", "admission.token_bucket.capacity",
		"admission.token_bucket.refill_rate", "kv.total_blocks", "kv.cpu_blocks", "kv.offload_threshold", "kv.transfer_bandwidth",
		"kv.transfer_base_latency_us", "kv.block_size", "run.horizon_us", "latency.alpha.0", "latency.beta.2"}
	for _, s := range route.ScorerNames() {
		required = append(required, "routing.weight."+s)
	}
	for _, family := range []string{"routing.slo_priority_blend", "routing.kv_pressure_slo_scale", "priority.base",
		"priority.urgency_threshold_ms", "batch.prefill_threshold", "admission.slo_gate", "slo.ttft_target_ms", "slo.itl_target_ms", "slo.e2e_target_ms"} {
		for _, c := range ClassNames {
			required = append(required, family+"."+c)
		}
	}
	for _, name := range required {
		if _, ok := Lookup(name); !ok {
			t.Errorf("missing setting %s", name)
		}
	}
}

// set applies one setting's value, as a mechanism line would.
func set(t *testing.T, c *cluster.Config, name, value string) {
	t.Helper()
	k, ok := Lookup(name)
	if !ok {
		t.Fatalf("no setting %s", name)
	}
	if err := k.Set(c, value); err != nil {
		t.Fatalf("%s=%s: %v", name, value, err)
	}
}

func TestSettersLandInTheirFields(t *testing.T) {
	crit, shed := simcore.SLOCritical, simcore.SLOSheddable
	cases := []struct {
		knob, value string
		landed      func(c *cluster.Config) bool
	}{
		{"num_instances", "6", func(c *cluster.Config) bool { return c.NumInstances == 6 }},
		{"routing.policy", "least-loaded", func(c *cluster.Config) bool { return c.Routing.Policy == "least-loaded" }},
		{"routing.prefix_index_capacity", "100000", func(c *cluster.Config) bool { return c.Routing.PrefixIndexCapacity == 100000 }},
		{"routing.cache_signal_delay_us", "5000", func(c *cluster.Config) bool { return c.Routing.CacheSignalDelay == 5000 }},
		{"routing.snapshot_refresh_us", "1000", func(c *cluster.Config) bool { return c.SnapshotRefresh == 1000 }},
		{"routing.kv_pressure.transfer_scale", "20000", func(c *cluster.Config) bool { return c.Routing.KVPressureTransferScale == 20000 }},
		{"routing.kv_pressure.thrash_weight", "0.5", func(c *cluster.Config) bool { return c.Routing.KVPressureThrashWeight == 0.5 }},
		{"routing.slo_priority_blend.critical", "0.1", func(c *cluster.Config) bool { return c.Routing.SLOPriorityBlend.Or(crit, -1) == 0.1 }},
		{"routing.kv_pressure_slo_scale.sheddable", "0.3", func(c *cluster.Config) bool { return c.Routing.KVPressureSLOScale.Or(shed, -1) == 0.3 }},
		{"scheduler", "sjf", func(c *cluster.Config) bool { return c.Scheduler == "sjf" }},
		{"priority.policy", "slo-class", func(c *cluster.Config) bool { return c.Priority.Name == "slo-class" }},
		{"priority.base.critical", "12.9", func(c *cluster.Config) bool { return c.Priority.Base.Or(crit, -1) == 12.9 }},
		{"priority.age_weight_per_ms", "0", func(c *cluster.Config) bool { return c.Priority.AgeWeightPerMs == 0 && c.Priority.AgeWeightGiven }},
		{"priority.urgency_threshold_ms.sheddable", "300", func(c *cluster.Config) bool { return c.Priority.UrgencyThresholdMs.Or(shed, -1) == 300 }},
		{"priority.bridge", "true", func(c *cluster.Config) bool { return c.PriorityBridge }},
		{"preemption.policy", "priority", func(c *cluster.Config) bool { return c.PreemptionPolicy == "priority" }},
		{"batch.long_prefill_token_threshold", "0", func(c *cluster.Config) bool { return c.PrefillThreshold == 0 }},
		{"batch.prefill_threshold.critical", "508", func(c *cluster.Config) bool { return c.SLOPrefillThreshold.Or(crit, -1) == 508 }},
		{"batch.max_num_scheduled_tokens", "962", func(c *cluster.Config) bool { return c.MaxScheduledTokens == 962 }},
		{"batch.max_num_running_reqs", "64", func(c *cluster.Config) bool { return c.MaxRunning == 64 }},
		{"admission.policy", "token-bucket", func(c *cluster.Config) bool { return c.Admission.Policy == "token-bucket" }},
		{"admission.slo_gate.sheddable", "50", func(c *cluster.Config) bool { return c.Admission.SLOGate.Or(shed, -1) == 50 }},
		{"admission.token_bucket.capacity", "500", func(c *cluster.Config) bool { return c.Admission.BucketCapacity == 500 }},
		{"admission.token_bucket.refill_rate", "250", func(c *cluster.Config) bool { return c.Admission.RefillRate == 250 }},
		{"kv.total_blocks", "2000", func(c *cluster.Config) bool { return c.TotalKVBlocks == 2000 }},
		{"kv.cpu_blocks", "3000", func(c *cluster.Config) bool { return c.KVCPUBlocks == 3000 }},
		{"kv.offload_threshold", "0.8", func(c *cluster.Config) bool { return c.KVOffloadThreshold == 0.8 }},
		{"kv.transfer_bandwidth", "10", func(c *cluster.Config) bool { return c.KVTransferBandwidth == 10 }},
		{"kv.transfer_base_latency_us", "100", func(c *cluster.Config) bool { return c.KVTransferBaseLatency == 100 }},
		{"slo.ttft_target_ms.critical", "100", func(c *cluster.Config) bool { return c.SLOTTFT.Or(crit, -1) == 100 }},
		{"kv.block_size", "32", func(c *cluster.Config) bool { return c.BlockSize == 32 }},
		{"run.horizon_us", "1000000", func(c *cluster.Config) bool { return c.Horizon == 1000000 }},
		{"latency.beta.1", "7.5", func(c *cluster.Config) bool { return c.Coefficients.Beta[1] == 7.5 }},
		{"priority.load_threshold", "32", func(c *cluster.Config) bool { return c.Priority.LoadThreshold == 32 }},
		{"cost.gpu_hour.L40S", "1.5", func(c *cluster.Config) bool { v, ok := c.Prices.Get("L40S"); return ok && v == 1.5 }},
		{"routing.weight.kv-pressure", "3", func(c *cluster.Config) bool {
			return slices.Equal(c.Routing.Scorers, append(route.DefaultScorers(), route.ScorerWeight{Name: "kv-pressure", Weight: 3}))
		}},
	}
	for _, tc := range cases {
		c := cluster.Defaults()
		set(t, &c, tc.knob, tc.value)
		if !tc.landed(&c) {
			t.Errorf("%s=%s did not land: %+v", tc.knob, tc.value, c)
		}
		k, _ := Lookup(tc.knob)
		if got := k.Value(&c); got != tc.value {
			t.Errorf("%s: reads back %q, want %q", tc.knob, got, tc.value)
		}
	}
}

// Every setter writes something: a setting whose value does not reach the
// configuration would be tuned in vain. Restore puts the old value back.
func TestEverySettingChangesTheConfigAndRestores(t *testing.T) {
	for _, k := range All() {
		c := cluster.Defaults()
		v, other := k.High, k.Low
		if k.Kind == search.Categorical {
			v, other = float64(len(k.Choices)-1), 0
		}
		if def, _ := k.get(&c); def == v { // llm-d's defaults may be the top (auto_tune true, max_busy_score 1)
			v = other
		}
		k.set(&c, v)
		if reflect.DeepEqual(c, cluster.Defaults()) {
			t.Errorf("%s=%s leaves the configuration unchanged", k.Key, k.FormatNumber(v))
		}
		if d := cluster.Defaults(); k.Same(&c, &d) {
			t.Errorf("%s: Same says %s equals the default", k.Key, k.FormatNumber(v))
		}
		d := cluster.Defaults()
		k.Restore(&c, &d)
		if !k.Same(&c, &d) {
			t.Errorf("%s: Restore did not bring the default back (%s)", k.Key, k.Value(&c))
		}
	}
}

func TestScorerWeights(t *testing.T) {
	c := cluster.Defaults()
	set(t, &c, "routing.weight.queue-depth", "0")
	if want := []route.ScorerWeight{{Name: "prefix-affinity", Weight: 3}, {Name: "kv-utilization", Weight: 2}}; !slices.Equal(c.Routing.Scorers, want) {
		t.Errorf("weight 0 removes the scorer from the default profile: %v", c.Routing.Scorers)
	}
	shared := c.Routing.Scorers
	set(t, &c, "routing.weight.prefix-affinity", "5")
	if shared[0].Weight != 3 {
		t.Error("the setter must copy the profile, not write through a shared slice")
	}
	set(t, &c, "routing.weight.load-balance", "0") // absent: nothing to remove
	set(t, &c, "routing.weight.prefix-affinity", "0")
	set(t, &c, "routing.weight.kv-utilization", "0")
	if c.Routing.Scorers == nil || len(c.Routing.Scorers) != 0 {
		t.Errorf("removing every scorer leaves an empty, non-nil profile (not the defaults): %#v", c.Routing.Scorers)
	}
}

func TestSettingParseErrors(t *testing.T) {
	for _, tc := range []struct{ knob, value, want string }{
		{"num_instances", "0", "num_instances: 0 is out of range (allowed: whole numbers in [1, 4096])"},
		{"num_instances", "2.5", "num_instances: 2.5 is not a whole number (allowed: whole numbers in [1, 4096])"},
		{"kv.offload_threshold", "high", `kv.offload_threshold: "high" is not a number (allowed: numbers in [0, 1])`},
		{"priority.bridge", "yes", `priority.bridge: "yes" is not allowed (allowed: false, true)`},
		{"routing.kv_pressure.transfer_scale", "0", "routing.kv_pressure.transfer_scale: 0 is out of range (allowed: numbers in [1, 1e+12])"},
	} {
		k, _ := Lookup(tc.knob)
		if _, err := k.ParseNumber(tc.value); err == nil || err.Error() != tc.want {
			t.Errorf("%s=%s: %v, want %q", tc.knob, tc.value, err, tc.want)
		}
	}
	if hint := settingKeysHint(); !strings.Contains(hint, "priority.base.<class>") || !strings.Contains(hint, "routing.weight.<scorer>") ||
		strings.Contains(hint, "priority.base.critical") {
		t.Errorf("hint should collapse families: %s", hint)
	}
}

// The World column marks exactly the settings that name the world, in
// the order validate's flags list them.
func TestWorldColumn(t *testing.T) {
	var keys []string
	for _, s := range WorldSettings() {
		keys = append(keys, s.Key)
	}
	if got, want := strings.Join(keys, ","), "model,gpu,tp,"+LatencyModelKey; got != want {
		t.Errorf("world settings %s, want %s", got, want)
	}
}

// The Family column says how every member of a family is written: a
// setting with an Item has a family and a Single setting none, and the
// flag text follows the family.
func TestFamilyColumn(t *testing.T) {
	seen := map[Family]string{}
	for _, s := range All() {
		if (s.Item != "") != (s.Family() != Single) {
			t.Errorf("%s: item %q, family %d", s.Key, s.Item, s.Family())
		}
		seen[s.Family()] = s.FlagText()
	}
	for f, want := range map[Family]string{PerClass: "=V", Scorers: ":W", Vector: "]", Named: "=V"} {
		if !strings.HasSuffix(seen[f], want) {
			t.Errorf("family %s: flag text %q, want it to end in %q", f.Word(), seen[f], want)
		}
	}
	if s, _ := Lookup("routing.weight.queue-depth"); s.FlagText() != "--routing-scorers queue-depth:W" {
		t.Errorf("a scorer's flag text: %q", s.FlagText())
	}
}
