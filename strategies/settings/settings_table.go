package settings

import (
	"math"

	"optimize/search"
	"optimize/simcore"
	"optimize/simcore/admit"
	"optimize/simcore/batch"
	"optimize/simcore/cluster"
	"optimize/simcore/keys"
	"optimize/simcore/route"
	"optimize/simcore/sched"
)

// Components: the mechanism groups an ablation reverts as a whole.
const (
	CompCluster    = "cluster"    // instances, KV capacity, latency model, GPU prices: the hardware, not the strategy
	CompRouting    = "routing"    // routing policy, scorer weights and their parameters
	CompScheduler  = "scheduler"  // wait-queue order
	CompPriority   = "priority"   // priority policy and its parameters
	CompBatching   = "batching"   // batch caps
	CompChunking   = "chunking"   // prefill chunk caps, global and per class
	CompAdmission  = "admission"  // admission policy and its parameters
	CompKVOffload  = "kv-offload" // the CPU KV tier
	CompPreemption = "preemption" // victim choice
	CompSLOTargets = "slo-targets"
	CompRun        = "run"
)

// targetUnset is what an unset latency target means.
const targetUnset = "the workload's, else none"

const (
	maxInt32 = math.MaxInt32
	huge     = 1e12 // upper bound of settings the simulator leaves unbounded
)

// ClassNames are the SLO classes a per-class setting can name, in class
// order (simcore's: a new class gets its settings and metrics by itself).
var ClassNames = func() []string {
	var out []string
	for c := simcore.SLOCritical; c < simcore.NumSLOClasses; c++ {
		out = append(out, c.String())
	}
	return out
}()

func scorerNames() []string { return route.ScorerNames() }

// settingsTable declares every simulator setting. Rules name the settings
// they read, so a setting is declared before the rules that read it.
func settingsTable() []*Setting {
	var all []*Setting
	add := func(ss ...*Setting) *Setting {
		all = append(all, ss...)
		return ss[0]
	}

	// The cluster: hardware and capacity, not strategy.
	world := worldSettings()
	add(world...)
	for _, s := range world {
		if s.Key == "gpu" {
			add(costSettings(s)...)
		}
	}
	add(intField(keys.NumInstances, "num-instances", 1, 4096, "", "serving instances (each of tp GPUs)", CompCluster,
		func(c *cluster.Config) *int { return &c.NumInstances }))
	add(int64Field(keys.KVTotalBlocks, "total-kv-blocks", 1, maxInt32, "blocks", "GPU KV blocks per instance (default: the blackbox profile's, else what the model leaves of gpu_memory_utilization × the GPUs' memory, as vLLM sizes it)", CompCluster,
		func(c *cluster.Config) *int64 { return &c.TotalKVBlocks }).effective(func(c *cluster.Config) float64 {
		n, _ := c.KVBlocks(resolved(c))
		return float64(n)
	}))
	pd := pdSettings()
	add(pd...)
	pdPrefixThreshold := allOf(anyPositive(pd[0], pd[1], pd[2]), oneOf(pd[3], cluster.PDPrefixThreshold))
	add(int64Field(keys.KVBlockSize, "block-size-in-tokens", 1, 4096, "tokens", "tokens per KV block", CompCluster,
		func(c *cluster.Config) *int64 { return &c.BlockSize }))
	for i := range 3 {
		add(coeff(keys.LatencyAlpha, "alpha-coeffs", i, "blackbox α: pre-queue delay α0 + α1·input tokens; α2 per output token (reporting); over the profile's"))
		add(coeff(keys.LatencyBeta, "beta-coeffs", i, "blackbox β: step time β0 + β1·uncached prefill tokens + β2·decode tokens; over the profile's"))
	}
	add(physicsCoeffs()...)

	// Batch formation.
	add(intField(keys.MaxRunning, "max-num-running-reqs", 1, maxInt32, "requests", "running requests per instance", CompBatching,
		func(c *cluster.Config) *int { return &c.MaxRunning }))
	add(int64Field(keys.MaxScheduledTokens, "max-num-scheduled-tokens", 1, maxInt32, "tokens", "token budget per step", CompBatching,
		func(c *cluster.Config) *int64 { return &c.MaxScheduledTokens }))
	add(int64Field(keys.LongPrefillThreshold, "long-prefill-token-threshold", 0, maxInt32, "tokens", "prefill chunk cap per step (0 = no chunking)", CompChunking,
		func(c *cluster.Config) *int64 { return &c.PrefillThreshold }))
	add(perClass(keys.PrefillThreshold, "slo-prefill-threshold", search.Int, 0, maxInt32, "tokens", "prefill chunk cap for the class (0 = no chunking)", CompChunking,
		func(c *cluster.Config) *simcore.PerClass { return &c.SLOPrefillThreshold },
		func(c *cluster.Config, _ simcore.SLOClass) (float64, bool) { return float64(c.PrefillThreshold), true }, "")...)

	// The CPU KV tier.
	cpuBlocks := add(int64Field(keys.KVCPUBlocks, "kv-cpu-blocks", 0, maxInt32, "blocks", "CPU offload tier per instance (0 = single tier)", CompKVOffload,
		func(c *cluster.Config) *int64 { return &c.KVCPUBlocks }))
	tiered := positive(cpuBlocks)
	add(floatField(keys.KVOffloadThreshold, "kv-offload-threshold", 0, 1, "fraction", "GPU KV utilisation above which idle cached blocks move to CPU", CompKVOffload, 0,
		func(c *cluster.Config) *float64 { return &c.KVOffloadThreshold }).when(tiered))
	add(floatField(keys.KVTransferBandwidth, "kv-transfer-bandwidth", 1e-6, huge, "blocks/µs", "CPU→GPU rate: a block costs ceil(block size / rate) µs plus the base latency", CompKVOffload, 0,
		func(c *cluster.Config) *float64 { return &c.KVTransferBandwidth }).when(tiered))
	add(int64Field(keys.KVTransferBaseLatency, "kv-transfer-base-latency", 0, huge, "µs", "fixed µs per reloaded block", CompKVOffload,
		func(c *cluster.Config) *int64 { return &c.KVTransferBaseLatency }).when(tiered))

	// The autoscaler (autoscale_settings.go); its ticks read the routing
	// snapshots.
	autoscaler := autoscaleSettings()
	add(autoscaler...)

	// Routing.
	policy := add(choiceField(keys.RoutingPolicy, "routing-policy", route.PolicyNames(), "round-robin, least-loaded, or weighted: the sum of the routing.weight.* scorers", CompRouting,
		func(c *cluster.Config) *string { return &c.Routing.Policy }))
	weightedPolicy := oneOf(policy, "weighted")
	weight := map[string]*Setting{}
	for _, name := range route.ScorerNames() {
		weight[name] = add(scorerWeight(name).when(weightedPolicy).production(scorerWeightCounterpart(name)))
	}
	scorer := func(names ...string) Rule {
		ws := make([]*Setting, len(names))
		for i, n := range names {
			ws[i] = weight[n]
		}
		return allOf(weightedPolicy, anyPositive(ws...))
	}
	add(llmdSettings(weightedPolicy, scorer)...)
	flowControl := flowEnabledSetting()
	flowOff := oneOf(flowControl, "false")
	admission := choiceField(keys.AdmissionPolicy, "admission-policy", admit.PolicyNames(), "admission policy (flow control's gateway queue takes its place)", CompAdmission,
		func(c *cluster.Config) *string { return &c.Admission.Policy }).when(flowOff)
	add(intField(keys.PrefixIndexCapacity, "prefix-index-capacity", 1, maxInt32, "blocks", "blocks per instance in the router's approximate prefix index (LRU)", CompRouting,
		func(c *cluster.Config) *int { return &c.Routing.PrefixIndexCapacity }).zeroMeans(route.DefaultPrefixIndexCapacity).
		when(scorer("prefix-affinity", "slo-priority")))
	add(int64Field(keys.CacheSignalDelay, "cache-signal-delay", 0, huge, "µs", "age of the prefix-cache view the precise-prefix scorer and the P/D prefix-threshold decider read (0 = live): in the f90a1e3a era (and always for the decider) copies of the caches taken at a routing or admission decision at least this long after the last, as BLIS f90a1e3a; otherwise each KV event seen this long after it happened; default 0, 50,000 (BLIS f90a1e3a's) when era f90a1e3a is given", CompRouting,
		func(c *cluster.Config) *int64 { return &c.Routing.CacheSignalDelay }).
		effective(func(c *cluster.Config) float64 { return float64(c.CacheSignalDelayInEffect()) }).when(anyOf(scorer("precise-prefix", "precise-prefix-cache-scorer"), pdPrefixThreshold)))
	add(int64Field(keys.TokenLoadThreshold, "token-load-threshold", 1, huge, "tokens",
		"token-load scorer: in-flight input + output tokens at which an instance scores 0; the default, 128 requests of 1,024 tokens (llm-d: 128 of 32K), is above the 111K an instance reaches at most on orthogonal-slo (8 instances; 55K on average), so the score never bottoms out there", CompRouting,
		func(c *cluster.Config) *int64 { return &c.Routing.TokenLoadThreshold }).zeroMeans(route.DefaultTokenLoadThreshold).
		when(scorer("token-load")))
	add(int64Field(keys.SnapshotRefresh, "snapshot-refresh-interval", 0, huge, "µs", "interval between refreshes of the load and KV signals routing and admission read (0 = always fresh); default: the era's, 50,000 in f90a1e3a's (the physics latency models, as BLIS f90a1e3a and llm-d's metrics refresh), 0 in 7fd7a88d's (blackbox)", CompRouting,
		func(c *cluster.Config) *int64 { return &c.SnapshotRefresh }).
		effective(func(c *cluster.Config) float64 { return float64(c.EffectiveSnapshotRefresh(resolved(c))) }).
		when(anyOf(oneOf(policy, "least-loaded", "weighted"), allOf(flowOff, oneOf(admission, admit.SLOGated, admit.Probabilistic)),
			flowUtilization(), positive(autoscaler[0]))))
	pressure := allOf(scorer("kv-pressure", "kv-pressure-slo"), tiered)
	add(floatField(keys.KVPressureTransferScale, "kv-pressure-transfer-scale", 1, huge, "µs", "kv-pressure scorers: pending reload µs that cost a whole point", CompRouting, 0,
		func(c *cluster.Config) *float64 { return &c.Routing.KVPressureTransferScale }).
		effective(func(c *cluster.Config) float64 { return c.Routing.TransferScaleInEffect() }).when(pressure))
	add(floatField(keys.KVPressureThrashWeight, "kv-pressure-thrash-weight", 0.001, huge, "", "kv-pressure scorers: weight of the thrashing rate", CompRouting, 0,
		func(c *cluster.Config) *float64 { return &c.Routing.KVPressureThrashWeight }).
		effective(func(c *cluster.Config) float64 { return c.Routing.ThrashWeightInEffect() }).when(pressure))
	add(whenAll(allOf(scorer("kv-pressure-slo"), tiered), perClass(keys.KVPressureSLOScale, "kv-pressure-slo-scale", search.Float, 0, huge, "", "kv-pressure-slo: transfer-penalty factor for the class", CompRouting,
		func(c *cluster.Config) *simcore.PerClass { return &c.Routing.KVPressureSLOScale },
		func(c *cluster.Config, cl simcore.SLOClass) (float64, bool) {
			return c.Routing.TransferClassScaleFor(cl), true
		}, ""))...)
	add(whenAll(scorer("slo-priority"), perClass(keys.SLOPriorityBlend, "slo-priority-blend", search.Float, 0, 1, "fraction", "slo-priority scorer: prefix-affinity share for the class (the rest goes to queue-depth)", CompRouting,
		func(c *cluster.Config) *simcore.PerClass { return &c.Routing.SLOPriorityBlend },
		func(c *cluster.Config, cl simcore.SLOClass) (float64, bool) { return c.Routing.BlendFor(cl), true }, ""))...)

	// Scheduling and priority. The priority a policy gives is read only by
	// priority-fcfs ordering and by priority preemption.
	scheduler := add(choiceField(keys.Scheduler, "scheduler", sched.SchedulerNames(), "wait-queue order: arrival (fcfs), priority, shortest input (sjf), or earliest arrival + class TTFT target (slo-deadline)", CompScheduler,
		func(c *cluster.Config) *string { return &c.Scheduler }))
	preemption := add(choiceField(keys.PreemptionPolicy, "preemption-policy", batch.PreemptionPolicyNames(), "victim when KV runs out: the batch tail (fcfs) or the least urgent (priority)", CompPreemption,
		func(c *cluster.Config) *string { return &c.PreemptionPolicy }))
	priorityRead := anyOf(oneOf(scheduler, sched.PriorityFCFS), oneOf(preemption, batch.PreemptPriority))
	prio := add(choiceField(keys.PriorityPolicy, "priority-policy", sched.PolicyNames(), "request priority policy", CompPriority,
		func(c *cluster.Config) *string { return &c.Priority.Name }).when(priorityRead))
	classBase := allOf(oneOf(prio, sched.ByClass, sched.SLOTiered, sched.SLOAdaptive), priorityRead)
	aging := allOf(oneOf(prio, sched.SLOTiered, sched.SLOAdaptive), priorityRead)
	add(whenAll(classBase, perClass(keys.PriorityBase, "slo-base", search.Float, -huge, huge, "", "slo-class/slo-tiered/slo-adaptive base priority of the class", CompPriority,
		func(c *cluster.Config) *simcore.PerClass { return &c.Priority.Base },
		func(c *cluster.Config, cl simcore.SLOClass) (float64, bool) {
			return sched.BaseFor(c.Priority, cl), true
		}, ""))...)
	add(whenAll(aging, perClass(keys.PriorityUrgency, "slo-urgency-threshold-ms", search.Float, 0, huge, "ms", "slo-tiered/slo-adaptive wait before the class's urgency grows", CompPriority,
		func(c *cluster.Config) *simcore.PerClass { return &c.Priority.UrgencyThresholdMs },
		func(c *cluster.Config, cl simcore.SLOClass) (float64, bool) {
			return sched.UrgencyThresholdMsFor(c.Priority, cl), true
		}, ""))...)
	add(&Setting{Key: keys.PriorityAgeWeight, Flag: "slo-age-weight", Kind: search.Float, Low: 0, High: huge, Unit: "1/ms",
		Doc: "slo-tiered/slo-adaptive urgency gained per ms waited past the class threshold", Component: CompPriority, Active: aging,
		get: func(c *cluster.Config) (float64, bool) { return c.Priority.AgeWeightInEffect(), true },
		set: func(c *cluster.Config, v float64) { c.Priority.AgeWeightPerMs, c.Priority.AgeWeightGiven = v, true },
		copy: func(dst, src *cluster.Config) {
			dst.Priority.AgeWeightPerMs, dst.Priority.AgeWeightGiven = src.Priority.AgeWeightPerMs, src.Priority.AgeWeightGiven
		}})
	add(floatField(keys.PriorityLoad, "slo-load-threshold", 1, huge, "requests", "slo-adaptive: waiting requests at which the class gap is full", CompPriority, 0,
		func(c *cluster.Config) *float64 { return &c.Priority.LoadThreshold }).
		effective(func(c *cluster.Config) float64 { return c.Priority.LoadThresholdInEffect() }).
		when(allOf(oneOf(prio, sched.SLOAdaptive), priorityRead)))
	add(boolField("priority.bridge", "priority-bridge", "the router hands each request its class's base priority", CompPriority,
		func(c *cluster.Config) *bool { return &c.PriorityBridge }).
		when(never("the scheduler rescores every waiting request from the same per-class base table each step, so the router's hint equals what it computes")))

	// Admission.
	add(admission)
	add(floatField(keys.BucketCapacity, "token-bucket-capacity", 1, huge, "tokens", "token-bucket size in input tokens", CompAdmission, admit.DefaultBucketCapacity,
		func(c *cluster.Config) *float64 { return &c.Admission.BucketCapacity }).when(oneOf(admission, "token-bucket")))
	add(floatField(keys.BucketRefillRate, "token-bucket-refill-rate", 0.001, huge, "tokens/s", "token-bucket refill", CompAdmission, admit.DefaultRefillRate,
		func(c *cluster.Config) *float64 { return &c.Admission.RefillRate }).when(oneOf(admission, "token-bucket")))
	add(whenAll(oneOf(admission, admit.SLOGated), perClass(keys.SLOGate, "slo-gate", search.Int, 0, huge, "requests", "slo-gated: cluster queue depth above which the class is shed", CompAdmission,
		func(c *cluster.Config) *simcore.PerClass { return &c.Admission.SLOGate }, nil, "never shed"))...)
	probabilistic := oneOf(admission, admit.Probabilistic)
	add(floatField(keys.ProbQueueDepth, "probabilistic-queue-depth-threshold", 0.001, huge, "requests",
		"probabilistic: an instance's wait-queue length at which it counts as saturated", CompAdmission, admit.DefaultQueueDepthThreshold,
		func(c *cluster.Config) *float64 { return &c.Admission.Probabilistic.QueueDepthThreshold }).when(probabilistic))
	add(floatField(keys.ProbKVUtil, "probabilistic-kv-util-threshold", 0.001, 1, "fraction",
		"probabilistic: an instance's GPU KV utilisation at which it counts as saturated", CompAdmission, admit.DefaultKVUtilThreshold,
		func(c *cluster.Config) *float64 { return &c.Admission.Probabilistic.KVUtilThreshold }).when(probabilistic))
	add(floatField(keys.ProbPower, "probabilistic-power", 0.001, huge, "",
		"probabilistic: exponent of the saturation in min(saturation^power · k, 1), the rejection probability of sheddable, batch and background requests", CompAdmission, admit.DefaultPower,
		func(c *cluster.Config) *float64 { return &c.Admission.Probabilistic.Power }).when(probabilistic))
	add(floatField(keys.ProbK, "probabilistic-k", 0.001, huge, "",
		"probabilistic: factor k in min(saturation^power · k, 1)", CompAdmission, admit.DefaultK,
		func(c *cluster.Config) *float64 { return &c.Admission.Probabilistic.K }).when(probabilistic))

	// Flow control.
	add(flowControl)
	add(flowSettings(flowControl)...)

	// Reporting and the run.
	// Latency targets define attainment and goodput; they change no event
	// except that the slo-deadline scheduler orders by the TTFT targets.
	// The workload's slo_targets fill the classes left unset here.
	add(perClass(keys.SLOTTFT, "slo-ttft", search.Float, 0.001, huge, "ms", "TTFT target of the class, for per_slo.<class>.ttft_attainment and attainment, and the slo-deadline scheduler's deadline (arrival + target)", CompSLOTargets,
		func(c *cluster.Config) *simcore.PerClass { return &c.SLOTTFT }, nil, targetUnset)...)
	add(perClass(keys.SLOITL, "slo-itl", search.Float, 0.001, huge, "ms", "mean inter-token latency target of the class, (E2E − TTFT) / (output tokens − 1), for attainment", CompSLOTargets,
		func(c *cluster.Config) *simcore.PerClass { return &c.SLOITL }, nil, targetUnset)...)
	add(perClass(keys.SLOE2E, "slo-e2e", search.Float, 0.001, huge, "ms", "end-to-end latency target of the class, for attainment", CompSLOTargets,
		func(c *cluster.Config) *simcore.PerClass { return &c.SLOE2E }, nil, targetUnset)...)
	add(int64Field(keys.RunHorizon, "horizon", 0, huge, "µs", "simulated time after which the run stops (0 = until every request is done)", CompRun,
		func(c *cluster.Config) *int64 { return &c.Horizon }))
	setProduction(all)
	return all
}

// when sets the setting's active rule.
func (s *Setting) when(r Rule) *Setting {
	s.Active = r
	return s
}

// whenAll sets the active rule of a family.
func whenAll(r Rule, ss []*Setting) []*Setting {
	for _, s := range ss {
		s.Active = r
	}
	return ss
}

// zeroMeans makes the stored 0 read as def (fields whose zero value the
// simulator reads as "default").
func (s *Setting) zeroMeans(def float64) *Setting {
	get := s.get
	s.get = func(c *cluster.Config) (float64, bool) {
		v, ok := get(c)
		if ok && v == 0 {
			return def, true
		}
		return v, ok
	}
	return s
}

// effective makes get read the value the simulator uses.
func (s *Setting) effective(f func(c *cluster.Config) float64) *Setting {
	s.get = func(c *cluster.Config) (float64, bool) { return f(c), true }
	return s
}

func intField(key, flag string, low, high float64, unit, doc, comp string, field func(*cluster.Config) *int) *Setting {
	return &Setting{Key: key, Flag: flag, Kind: search.Int, Low: low, High: high, Unit: unit, Doc: doc, Component: comp,
		get:  func(c *cluster.Config) (float64, bool) { return float64(*field(c)), true },
		set:  func(c *cluster.Config, v float64) { *field(c) = int(v) },
		copy: func(dst, src *cluster.Config) { *field(dst) = *field(src) }}
}

func int64Field(key, flag string, low, high float64, unit, doc, comp string, field func(*cluster.Config) *int64) *Setting {
	return &Setting{Key: key, Flag: flag, Kind: search.Int, Low: low, High: high, Unit: unit, Doc: doc, Component: comp,
		get:  func(c *cluster.Config) (float64, bool) { return float64(*field(c)), true },
		set:  func(c *cluster.Config, v float64) { *field(c) = int64(v) },
		copy: func(dst, src *cluster.Config) { *field(dst) = *field(src) }}
}

// floatField declares a float setting; def is what a stored 0 means (0:
// itself).
func floatField(key, flag string, low, high float64, unit, doc, comp string, def float64, field func(*cluster.Config) *float64) *Setting {
	s := &Setting{Key: key, Flag: flag, Kind: search.Float, Low: low, High: high, Unit: unit, Doc: doc, Component: comp,
		get:  func(c *cluster.Config) (float64, bool) { return *field(c), true },
		set:  func(c *cluster.Config, v float64) { *field(c) = v },
		copy: func(dst, src *cluster.Config) { *field(dst) = *field(src) }}
	if def != 0 {
		s.zeroMeans(def)
	}
	return s
}

func choiceField(key, flag string, choices []string, doc, comp string, field func(*cluster.Config) *string) *Setting {
	return &Setting{Key: key, Flag: flag, Kind: search.Categorical, Choices: choices, Doc: doc, Component: comp,
		get: func(c *cluster.Config) (float64, bool) {
			v := *field(c)
			for i, ch := range choices {
				if ch == v {
					return float64(i), true
				}
			}
			return 0, true // "" is the first choice, the policy's default
		},
		set:  func(c *cluster.Config, v float64) { *field(c) = choices[int(v)] },
		copy: func(dst, src *cluster.Config) { *field(dst) = *field(src) }}
}

func boolField(key, flag, doc, comp string, field func(*cluster.Config) *bool) *Setting {
	return &Setting{Key: key, Flag: flag, Kind: search.Categorical, Choices: []string{"false", "true"}, Doc: doc, Component: comp,
		get: func(c *cluster.Config) (float64, bool) {
			if *field(c) {
				return 1, true
			}
			return 0, true
		},
		set:  func(c *cluster.Config, v float64) { *field(c) = v == 1 },
		copy: func(dst, src *cluster.Config) { *field(dst) = *field(src) }}
}

// perClass is one setting per SLO class, keyed prefix.<class>, given on
// the command line as --flag class=value,... def is the value in effect
// for a class not given (nil: the class is unset, as unset says).
func perClass(prefix, flag string, kind search.Kind, low, high float64, unit, doc, comp string,
	field func(*cluster.Config) *simcore.PerClass, def func(*cluster.Config, simcore.SLOClass) (float64, bool), unset string) []*Setting {
	ss := make([]*Setting, 0, len(ClassNames))
	for class := simcore.SLOCritical; class < simcore.NumSLOClasses; class++ {
		ss = append(ss, &Setting{Key: keys.Member(prefix, class.String()), Flag: flag, Item: class.String(), family: PerClass, Kind: kind, Low: low, High: high,
			Unit: unit, Doc: doc, Component: comp, Unset: unset,
			get: func(c *cluster.Config) (float64, bool) {
				if v, ok := field(c).Get(class); ok {
					return v, true
				}
				if def == nil {
					return 0, false
				}
				return def(c, class)
			},
			set: func(c *cluster.Config, v float64) {
				p := field(c)
				p.V[class], p.Set[class] = v, true
			},
			copy: func(dst, src *cluster.Config) {
				d, s := field(dst), field(src)
				d.V[class], d.Set[class] = s.V[class], s.Set[class]
			}})
	}
	return ss
}

// scorerWeight is a scorer's weight in the weighted profile, given on the
// command line as --routing-scorers name:weight,... 0 removes the scorer.
func scorerWeight(name string) *Setting {
	weightOf := func(c *cluster.Config) float64 {
		list := c.Routing.Scorers
		if list == nil {
			list = c.DefaultScorers()
		}
		for _, sw := range list {
			if sw.Name == name {
				return sw.Weight
			}
		}
		return 0
	}
	return &Setting{Key: WeightPrefix + name, Flag: "routing-scorers", Item: name, family: Scorers, Kind: search.Float, Low: 0, High: 1e6,
		Doc: "weight of the " + name + " scorer in the weighted policy (0 = scorer removed)", Component: CompRouting,
		get:  func(c *cluster.Config) (float64, bool) { return weightOf(c), true },
		set:  func(c *cluster.Config, v float64) { setScorerWeight(c, name, v) },
		copy: func(dst, src *cluster.Config) { setScorerWeight(dst, name, weightOf(src)) }}
}

// setScorerWeight sets one scorer's weight in the weighted profile, keeping
// the others in order (their order fixes the float sums, hence ties). A nil
// profile means route.DefaultScorers, so it starts from those. Weight 0
// removes the scorer; removing every scorer leaves an empty, non-nil
// profile, which Template.Config reports instead of letting the router
// fall back to the defaults. The profile is copied: bases are shared by
// trials.
func setScorerWeight(c *cluster.Config, name string, w float64) {
	list := c.Routing.Scorers
	if list == nil {
		list = c.DefaultScorers()
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
