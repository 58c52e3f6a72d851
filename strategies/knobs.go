package strategies

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"optimize/simcore"
	"optimize/simcore/admit"
	"optimize/simcore/batch"
	"optimize/simcore/cluster"
	"optimize/simcore/route"
	"optimize/simcore/sched"
)

// Knob is one simulator setting that a template may fix (mechanism) or tune
// (parameter). Its setter writes one typed field of cluster.Config.
type Knob struct {
	Name string
	// Kind is Float, Int or Categorical (never log-float: the
	// scale is the parameter's business, not the knob's).
	Kind      Kind
	Low, High float64  // numeric knobs: the inclusive range the simulator accepts
	Choices   []string // categorical knobs
	Doc       string
	// set writes v into c: the number itself, or for a categorical knob the
	// index into Choices.
	set func(c *cluster.Config, v float64)
}

// classNames are the SLO classes a per-class knob can name, in class order
// (simcore's: a new class gets its knobs and metrics by itself).
var classNames = func() []string {
	var out []string
	for c := simcore.SLOCritical; c < simcore.NumSLOClasses; c++ {
		out = append(out, c.String())
	}
	return out
}()

const (
	maxInt32 = math.MaxInt32
	huge     = 1e12 // upper bound of knobs the simulator leaves unbounded
)

// Knobs is the one table of knob names: every knob a template may set, sorted
// by name. A name missing here is a load error.
func Knobs() []Knob {
	ks := []Knob{
		intKnob("num_instances", 1, 4096, "serving instances", func(c *cluster.Config, v float64) { c.NumInstances = int(v) }),
		choiceKnob("routing.policy", route.PolicyNames(), "round-robin, least-loaded or weighted (sum of routing.weight.* scorers)",
			func(c *cluster.Config, s string) { c.Routing.Policy = s }),
		intKnob("routing.prefix_index_capacity", 1, maxInt32, "blocks per instance in the router's approximate prefix index (LRU)",
			func(c *cluster.Config, v float64) { c.Routing.PrefixIndexCapacity = int(v) }),
		intKnob("routing.cache_signal_delay_us", 0, huge, "µs before the precise-prefix scorer sees a KV change (0 = live)",
			func(c *cluster.Config, v float64) { c.Routing.CacheSignalDelay = int64(v) }),
		intKnob("routing.snapshot_refresh_us", 0, huge, "µs between refreshes of the routers' load and KV signals (0 = always fresh)",
			func(c *cluster.Config, v float64) { c.SnapshotRefresh = int64(v) }),
		// The simulator reads 0 as "default" for the next two, so 0 is excluded.
		floatKnob("routing.kv_pressure.transfer_scale", 1, huge, "kv-pressure scorers: pending reload µs that cost a whole point",
			func(c *cluster.Config, v float64) { c.Routing.KVPressureTransferScale = v }),
		floatKnob("routing.kv_pressure.thrash_weight", 0.001, huge, "kv-pressure scorers: weight of the thrashing rate",
			func(c *cluster.Config, v float64) { c.Routing.KVPressureThrashWeight = v }),
		choiceKnob("scheduler", sched.SchedulerNames(), "wait-queue order", func(c *cluster.Config, s string) { c.Scheduler = s }),
		choiceKnob("priority.policy", sched.PolicyNames(), "request priority policy", func(c *cluster.Config, s string) { c.Priority.Name = s }),
		floatKnob("priority.age_weight_per_ms", 0, huge, "slo-tiered urgency gained per ms waited past the class threshold",
			func(c *cluster.Config, v float64) { c.Priority.AgeWeightPerMs, c.Priority.AgeWeightGiven = v, true }),
		floatKnob("priority.load_threshold", 1, huge, "slo-adaptive: waiting requests at which the class gap is full",
			func(c *cluster.Config, v float64) { c.Priority.LoadThreshold = v }),
		boolKnob("priority.bridge", "the router hands each request its class's base priority",
			func(c *cluster.Config, on bool) { c.PriorityBridge = on }),
		choiceKnob("preemption.policy", []string{batch.PreemptFCFS, batch.PreemptPriority}, "victim when KV runs out: batch tail or least urgent",
			func(c *cluster.Config, s string) { c.PreemptionPolicy = s }),
		intKnob("batch.long_prefill_token_threshold", 0, maxInt32, "prefill chunk cap per step (0 = no chunking)",
			func(c *cluster.Config, v float64) { c.PrefillThreshold = int64(v) }),
		intKnob("batch.max_num_scheduled_tokens", 1, maxInt32, "token budget per step",
			func(c *cluster.Config, v float64) { c.MaxScheduledTokens = int64(v) }),
		intKnob("batch.max_num_running_reqs", 1, maxInt32, "running requests per instance",
			func(c *cluster.Config, v float64) { c.MaxRunning = int(v) }),
		choiceKnob("admission.policy", admit.PolicyNames(), "admission policy", func(c *cluster.Config, s string) { c.Admission.Policy = s }),
		// 0 means "default" to the token bucket too, so the ranges start above it.
		floatKnob("admission.token_bucket.capacity", 1, huge, "token-bucket size in input tokens",
			func(c *cluster.Config, v float64) { c.Admission.BucketCapacity = v }),
		floatKnob("admission.token_bucket.refill_rate", 0.001, huge, "token-bucket refill in tokens per second",
			func(c *cluster.Config, v float64) { c.Admission.RefillRate = v }),
		intKnob("kv.total_blocks", 1, maxInt32, "GPU KV blocks per instance",
			func(c *cluster.Config, v float64) { c.TotalKVBlocks = int64(v) }),
		intKnob("kv.cpu_blocks", 0, maxInt32, "CPU offload tier in blocks per instance (0 = single tier)",
			func(c *cluster.Config, v float64) { c.KVCPUBlocks = int64(v) }),
		floatKnob("kv.offload_threshold", 0, 1, "GPU KV utilisation above which idle cached blocks move to CPU",
			func(c *cluster.Config, v float64) { c.KVOffloadThreshold = v }),
		floatKnob("kv.transfer_bandwidth", 1e-6, huge, "CPU→GPU transfer rate in blocks per µs",
			func(c *cluster.Config, v float64) { c.KVTransferBandwidth = v }),
		intKnob("kv.transfer_base_latency_us", 0, huge, "fixed µs per reloaded block",
			func(c *cluster.Config, v float64) { c.KVTransferBaseLatency = int64(v) }),
	}
	for _, name := range route.ScorerNames() {
		ks = append(ks, floatKnob("routing.weight."+name, 0, 1e6,
			"weight of the "+name+" scorer in the weighted policy (0 = scorer removed)",
			func(c *cluster.Config, v float64) { setScorerWeight(c, name, v) }))
	}
	ks = append(ks, perClass("routing.slo_priority_blend", Float, 0, 1, "slo-priority scorer: prefix-affinity share (rest to queue-depth)",
		func(c *cluster.Config) *simcore.PerClass { return &c.Routing.SLOPriorityBlend })...)
	ks = append(ks, perClass("routing.kv_pressure_slo_scale", Float, 0, huge, "kv-pressure-slo: transfer-penalty factor",
		func(c *cluster.Config) *simcore.PerClass { return &c.Routing.KVPressureSLOScale })...)
	ks = append(ks, perClass("priority.base", Float, -huge, huge, "slo-class/slo-tiered base priority",
		func(c *cluster.Config) *simcore.PerClass { return &c.Priority.Base })...)
	ks = append(ks, perClass("priority.urgency_threshold_ms", Float, 0, huge, "slo-tiered wait (ms) before urgency grows",
		func(c *cluster.Config) *simcore.PerClass { return &c.Priority.UrgencyThresholdMs })...)
	ks = append(ks, perClass("batch.prefill_threshold", Int, 0, maxInt32, "prefill chunk cap (0 = no chunking)",
		func(c *cluster.Config) *simcore.PerClass { return &c.SLOPrefillThreshold })...)
	ks = append(ks, perClass("admission.slo_gate", Int, 0, huge, "slo-gated: cluster queue depth above which the class is shed",
		func(c *cluster.Config) *simcore.PerClass { return &c.Admission.SLOGate })...)
	ks = append(ks, perClass("slo.ttft_target_ms", Float, 0.001, huge, "TTFT target for per_slo.<class>.ttft_attainment",
		func(c *cluster.Config) *simcore.PerClass { return &c.SLOTTFT })...)
	slices.SortFunc(ks, func(a, b Knob) int { return strings.Compare(a.Name, b.Name) })
	return ks
}

func intKnob(name string, low, high float64, doc string, set func(*cluster.Config, float64)) Knob {
	return Knob{Name: name, Kind: Int, Low: low, High: high, Doc: doc, set: set}
}

func floatKnob(name string, low, high float64, doc string, set func(*cluster.Config, float64)) Knob {
	return Knob{Name: name, Kind: Float, Low: low, High: high, Doc: doc, set: set}
}

func choiceKnob(name string, choices []string, doc string, set func(*cluster.Config, string)) Knob {
	return Knob{Name: name, Kind: Categorical, Choices: choices, Doc: doc,
		set: func(c *cluster.Config, v float64) { set(c, choices[int(v)]) }}
}

func boolKnob(name, doc string, set func(*cluster.Config, bool)) Knob {
	return Knob{Name: name, Kind: Categorical, Choices: []string{"false", "true"}, Doc: doc,
		set: func(c *cluster.Config, v float64) { set(c, v == 1) }}
}

// perClass is one knob per SLO class, named prefix.<class>.
func perClass(prefix string, kind Kind, low, high float64, doc string, field func(*cluster.Config) *simcore.PerClass) []Knob {
	ks := make([]Knob, 0, len(classNames))
	for class := simcore.SLOCritical; class < simcore.NumSLOClasses; class++ {
		name := class.String()
		ks = append(ks, Knob{Name: prefix + "." + name, Kind: kind, Low: low, High: high, Doc: doc + ", " + name + " class",
			set: func(c *cluster.Config, v float64) {
				p := field(c)
				p.V[class], p.Set[class] = v, true
			}})
	}
	return ks
}

// setScorerWeight sets one scorer's weight in the weighted profile, keeping
// the others in order (their order fixes the float sums, hence ties). An
// empty profile means route.DefaultScorers, so it starts from those. Weight
// 0 removes the scorer; removing every scorer leaves an empty, non-nil
// profile, which Template.Config reports instead of letting the router fall
// back to the defaults. The profile is copied: bases are shared by trials.
func setScorerWeight(c *cluster.Config, name string, w float64) {
	list := c.Routing.Scorers
	if len(list) == 0 {
		list = route.DefaultScorers()
	}
	out := make([]route.ScorerWeight, 0, len(list)+1)
	found := false
	for _, sw := range list {
		if sw.Name == name {
			found = true
			if w == 0 {
				continue
			}
			sw.Weight = w
		}
		out = append(out, sw)
	}
	if !found && w != 0 {
		out = append(out, route.ScorerWeight{Name: name, Weight: w})
	}
	c.Routing.Scorers = out
}

// findKnob looks a knob up by name in ks (the table).
func findKnob(ks []Knob, name string) (*Knob, bool) {
	i, ok := slices.BinarySearchFunc(ks, name, func(k Knob, n string) int { return strings.Compare(k.Name, n) })
	if !ok {
		return nil, false
	}
	return &ks[i], true
}

// parse reads one value of the knob as written in a template or on the
// command line: a number in range, or one of the choices (returned as its
// index).
func (k *Knob) parse(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if k.Kind == Categorical {
		if i := slices.Index(k.Choices, s); i >= 0 {
			return float64(i), nil
		}
		return 0, fmt.Errorf("%q is not accepted by knob %s (allowed: %s)", s, k.Name, strings.Join(k.Choices, ", "))
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number (knob %s takes %s)", s, k.Name, k.ValuesText())
	}
	return v, k.check(v)
}

// check reports a numeric value the knob does not accept.
func (k *Knob) check(v float64) error {
	if math.IsNaN(v) || v < k.Low || v > k.High {
		return fmt.Errorf("%s out of knob %s's range: %s", formatNumber(v), k.Name, k.ValuesText())
	}
	if k.Kind == Int && v != math.Trunc(v) {
		return fmt.Errorf("%s is not a whole number (knob %s takes %s)", formatNumber(v), k.Name, k.ValuesText())
	}
	return nil
}

// ValuesText describes the accepted values, e.g. "whole numbers in [0, 512]".
func (k *Knob) ValuesText() string {
	switch k.Kind {
	case Categorical:
		return "one of " + strings.Join(k.Choices, ", ")
	case Int:
		return fmt.Sprintf("whole numbers in [%s, %s]", formatNumber(k.Low), formatNumber(k.High))
	}
	return fmt.Sprintf("numbers in [%s, %s]", formatNumber(k.Low), formatNumber(k.High))
}

// format renders a knob value: the choice, or the number.
func (k *Knob) format(v float64) string {
	if k.Kind == Categorical {
		return k.Choices[int(v)]
	}
	return formatNumber(v)
}

// formatNumber prints whole numbers below 1e10 in full (2147483647, not
// 2.147483647e+09) and anything else in the shortest form.
func formatNumber(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e10 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// knobNamesHint lists the knob families compactly for an unknown-knob
// error: per-class and per-scorer knobs collapse to <class> and <scorer>.
func knobNamesHint(ks []Knob) string {
	var names []string
	for _, k := range ks {
		n := k.Name
		for _, c := range classNames {
			if base, ok := strings.CutSuffix(n, "."+c); ok {
				n = base + ".<class>"
			}
		}
		if strings.HasPrefix(n, "routing.weight.") {
			n = "routing.weight.<scorer>"
		}
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return fmt.Sprintf("%s; <class>: %s; <scorer>: %s",
		strings.Join(names, ", "), strings.Join(classNames, ", "), strings.Join(route.ScorerNames(), ", "))
}
