package cli

import (
	"fmt"
	"slices"

	"github.com/spf13/pflag"

	"optimize/simcore"
	"optimize/simcore/admit"
	"optimize/simcore/cluster"
	"optimize/simcore/latency"
	"optimize/simcore/route"
	"optimize/simcore/sched"
)

// simFlags are the policy and cluster flags, named as in BLIS. Only flags
// the user set override the base configuration.
type simFlags struct {
	model, hardware string
	tp              int

	numInstances       int
	totalKVBlocks      int64
	blockSize          int64
	maxRunning         int
	maxScheduledTokens int64
	prefillThreshold   int64
	alpha, beta        []float64
	routingPolicy      string
	routingScorers     string
	prefixIndexCap     int
	scheduler          string
	priorityPolicy     string
	admissionPolicy    string
	bucketCapacity     float64
	bucketRefill       float64
	snapshotRefresh    int64
	horizon            int64

	sloBase, sloUrgency   string
	sloAgeWeight          float64
	sloLoadThreshold      float64
	priorityBridge        bool
	preemptionPolicy      string
	sloPrefill, sloGate   string
	sloTTFT               string
	kvCPUBlocks           int64
	kvOffloadThreshold    float64
	kvTransferBandwidth   float64
	kvTransferBaseLatency int64
	cacheSignalDelay      int64
	sloPriorityBlend      string
	kvPressureScale       float64
	kvPressureThrash      float64
	kvPressureSLOScale    string
}

func (f *simFlags) bind(fs *pflag.FlagSet) {
	d := cluster.Defaults()
	fs.StringVar(&f.model, "model", defaultModel, "model whose latency profile to use")
	fs.StringVar(&f.hardware, "hardware", "", "GPU of the latency profile (default: the model's, H100)")
	fs.IntVar(&f.tp, "tp", 0, "tensor parallelism of the latency profile (default: the model's, 2)")
	fs.IntVar(&f.numInstances, "num-instances", d.NumInstances, "number of serving instances")
	fs.Int64Var(&f.totalKVBlocks, "total-kv-blocks", 0, "GPU KV blocks per instance (default: the profile's)")
	fs.Int64Var(&f.blockSize, "block-size-in-tokens", d.BlockSize, "tokens per KV block")
	fs.IntVar(&f.maxRunning, "max-num-running-reqs", d.MaxRunning, "running requests per instance")
	fs.Int64Var(&f.maxScheduledTokens, "max-num-scheduled-tokens", d.MaxScheduledTokens, "token budget per step")
	fs.Int64Var(&f.prefillThreshold, "long-prefill-token-threshold", d.PrefillThreshold, "prefill chunk cap per step (0 = no chunking)")
	fs.Float64SliceVar(&f.alpha, "alpha-coeffs", nil, "α0,α1,α2 in µs (override the profile)")
	fs.Float64SliceVar(&f.beta, "beta-coeffs", nil, "β0,β1,β2 in µs (override the profile)")
	fs.StringVar(&f.routingPolicy, "routing-policy", d.Routing.Policy, "round-robin, least-loaded or weighted")
	fs.StringVar(&f.routingScorers, "routing-scorers", "", "weighted scorers, e.g. prefix-affinity:3,queue-depth:2,kv-utilization:2")
	fs.IntVar(&f.prefixIndexCap, "prefix-index-capacity", d.Routing.PrefixIndexCapacity, "blocks per instance in the router's approximate prefix index")
	fs.StringVar(&f.scheduler, "scheduler", d.Scheduler, "fcfs, priority-fcfs or sjf")
	fs.StringVar(&f.priorityPolicy, "priority-policy", d.Priority.Name, "constant, slo-based (age), slo-class, slo-tiered or slo-adaptive")
	fs.StringVar(&f.sloBase, "slo-base", "", "slo-tiered base priority per class, e.g. critical=10,standard=5,sheddable=1")
	fs.Float64Var(&f.sloAgeWeight, "slo-age-weight", 0, "slo-tiered urgency gained per ms waited past the class's threshold")
	fs.Float64Var(&f.sloLoadThreshold, "slo-load-threshold", 0, "slo-adaptive: waiting requests at which the class gap is full (default 16)")
	fs.StringVar(&f.sloUrgency, "slo-urgency-threshold-ms", "", "slo-tiered wait before urgency grows, per class, e.g. critical=0,standard=50,sheddable=200")
	fs.BoolVar(&f.priorityBridge, "priority-bridge", false, "the router hands each request its class's base priority")
	fs.StringVar(&f.preemptionPolicy, "preemption-policy", d.PreemptionPolicy, "fcfs (evict the batch tail) or priority (evict the least urgent)")
	fs.StringVar(&f.sloPrefill, "slo-prefill-threshold", "", "prefill chunk cap per class (0 = no chunking), e.g. critical=0,standard=256,sheddable=256")
	fs.StringVar(&f.admissionPolicy, "admission-policy", d.Admission.Policy, "always-admit, token-bucket, reject-all or slo-gated")
	fs.StringVar(&f.sloGate, "slo-gate", "", "slo-gated: cluster queue depth above which a class is shed, e.g. standard=200,sheddable=50")
	fs.StringVar(&f.sloTTFT, "slo-ttft", "", "TTFT targets per class for attainment, e.g. critical=100ms,standard=500ms")
	fs.Int64Var(&f.kvCPUBlocks, "kv-cpu-blocks", 0, "CPU offload tier in blocks per instance (0 = single tier)")
	fs.Float64Var(&f.kvOffloadThreshold, "kv-offload-threshold", d.KVOffloadThreshold, "GPU KV utilisation above which idle cached blocks move to CPU")
	fs.Float64Var(&f.kvTransferBandwidth, "kv-transfer-bandwidth", d.KVTransferBandwidth, "CPU→GPU transfer rate, BLIS's \"blocks per µs\": a block costs ceil(block size / rate) µs plus the base latency")
	fs.Int64Var(&f.kvTransferBaseLatency, "kv-transfer-base-latency", d.KVTransferBaseLatency, "fixed µs per reloaded block")
	fs.Int64Var(&f.cacheSignalDelay, "cache-signal-delay", 0, "µs before the precise-prefix scorer sees a KV change (0 = live)")
	fs.StringVar(&f.sloPriorityBlend, "slo-priority-blend", "", "slo-priority scorer: prefix-affinity weight per class (rest to queue-depth)")
	fs.Float64Var(&f.kvPressureScale, "kv-pressure-transfer-scale", 0, "kv-pressure: pending transfer µs that cost a whole point (default 10000)")
	fs.Float64Var(&f.kvPressureThrash, "kv-pressure-thrash-weight", 0, "kv-pressure: weight of the thrashing rate (default 2)")
	fs.StringVar(&f.kvPressureSLOScale, "kv-pressure-slo-scale", "", "kv-pressure-slo: transfer-penalty factor per class (default critical=5,standard=1,sheddable=0.2,batch=0.2,background=0.1)")
	fs.Float64Var(&f.bucketCapacity, "token-bucket-capacity", d.Admission.BucketCapacity, "token-bucket capacity in tokens")
	fs.Float64Var(&f.bucketRefill, "token-bucket-refill-rate", d.Admission.RefillRate, "token-bucket refill in tokens per second")
	fs.Int64Var(&f.snapshotRefresh, "snapshot-refresh-interval", d.SnapshotRefresh, "µs between refreshes of routing signals (0 = always fresh)")
	fs.Int64Var(&f.horizon, "horizon", 0, "simulated µs after which the run stops (0 = until done)")
}

const defaultModel = latency.DefaultModel

// apply overlays the flags the user set on base and resolves the latency
// profile: model/hardware/tp choose it (always when fromDefaults, else only
// when one of them is given), explicit coefficients override it.
func (f *simFlags) apply(fs *pflag.FlagSet, base cluster.Config, catalog *latency.Catalog, fromDefaults bool) (cluster.Config, error) {
	c := base
	if fromDefaults || changed(fs, "model") || changed(fs, "hardware") || changed(fs, "tp") {
		p, err := catalog.Find(f.model, f.hardware, f.tp)
		if err != nil {
			return c, err
		}
		c.Latency, c.TotalKVBlocks = p.Coeffs, p.TotalKVBlocks
	}
	if changed(fs, "alpha-coeffs") {
		if len(f.alpha) != 3 {
			return c, fmt.Errorf("--alpha-coeffs: need exactly 3 values α0,α1,α2, got %d", len(f.alpha))
		}
		copy(c.Latency.Alpha[:], f.alpha)
	}
	if changed(fs, "beta-coeffs") {
		if len(f.beta) != 3 {
			return c, fmt.Errorf("--beta-coeffs: need exactly 3 values β0,β1,β2, got %d", len(f.beta))
		}
		copy(c.Latency.Beta[:], f.beta)
	}
	set := func(name string, apply func()) {
		if changed(fs, name) {
			apply()
		}
	}
	set("num-instances", func() { c.NumInstances = f.numInstances })
	set("total-kv-blocks", func() { c.TotalKVBlocks = f.totalKVBlocks })
	set("block-size-in-tokens", func() { c.BlockSize = f.blockSize })
	set("max-num-running-reqs", func() { c.MaxRunning = f.maxRunning })
	set("max-num-scheduled-tokens", func() { c.MaxScheduledTokens = f.maxScheduledTokens })
	set("long-prefill-token-threshold", func() { c.PrefillThreshold = f.prefillThreshold })
	set("routing-policy", func() { c.Routing.Policy = f.routingPolicy })
	set("prefix-index-capacity", func() { c.Routing.PrefixIndexCapacity = f.prefixIndexCap })
	set("scheduler", func() { c.Scheduler = f.scheduler })
	set("priority-policy", func() { c.Priority.Name = f.priorityPolicy })
	set("slo-age-weight", func() { c.Priority.AgeWeightPerMs, c.Priority.AgeWeightGiven = f.sloAgeWeight, true })
	set("priority-bridge", func() { c.PriorityBridge = f.priorityBridge })
	set("slo-load-threshold", func() { c.Priority.LoadThreshold = f.sloLoadThreshold })
	set("preemption-policy", func() { c.PreemptionPolicy = f.preemptionPolicy })
	set("kv-cpu-blocks", func() { c.KVCPUBlocks = f.kvCPUBlocks })
	set("kv-offload-threshold", func() { c.KVOffloadThreshold = f.kvOffloadThreshold })
	set("kv-transfer-bandwidth", func() { c.KVTransferBandwidth = f.kvTransferBandwidth })
	set("kv-transfer-base-latency", func() { c.KVTransferBaseLatency = f.kvTransferBaseLatency })
	set("cache-signal-delay", func() { c.Routing.CacheSignalDelay = f.cacheSignalDelay })
	set("kv-pressure-transfer-scale", func() { c.Routing.KVPressureTransferScale = f.kvPressureScale })
	set("kv-pressure-thrash-weight", func() { c.Routing.KVPressureThrashWeight = f.kvPressureThrash })
	for _, pc := range []struct {
		flag string
		src  string
		ms   bool
		dst  *simcore.PerClass
	}{
		{"slo-base", f.sloBase, false, &c.Priority.Base},
		{"slo-urgency-threshold-ms", f.sloUrgency, true, &c.Priority.UrgencyThresholdMs},
		{"slo-prefill-threshold", f.sloPrefill, false, &c.SLOPrefillThreshold},
		{"slo-gate", f.sloGate, false, &c.Admission.SLOGate},
		{"slo-ttft", f.sloTTFT, true, &c.SLOTTFT},
		{"slo-priority-blend", f.sloPriorityBlend, false, &c.Routing.SLOPriorityBlend},
		{"kv-pressure-slo-scale", f.kvPressureSLOScale, false, &c.Routing.KVPressureSLOScale},
	} {
		if !changed(fs, pc.flag) {
			continue
		}
		v, err := simcore.ParsePerClass(pc.src, pc.ms)
		if err != nil {
			return c, fmt.Errorf("--%s: %v", pc.flag, err)
		}
		*pc.dst = v
	}
	set("admission-policy", func() { c.Admission.Policy = f.admissionPolicy })
	set("token-bucket-capacity", func() { c.Admission.BucketCapacity = f.bucketCapacity })
	set("token-bucket-refill-rate", func() { c.Admission.RefillRate = f.bucketRefill })
	set("snapshot-refresh-interval", func() { c.SnapshotRefresh = f.snapshotRefresh })
	set("horizon", func() { c.Horizon = f.horizon })
	if changed(fs, "routing-scorers") {
		scorers, err := route.ParseScorers(f.routingScorers)
		if err != nil {
			return c, fmt.Errorf("--routing-scorers: %v", err)
		}
		c.Routing.Scorers = scorers
	}
	if err := c.Validate(); err != nil {
		return c, err
	}
	return c, ignoredFlag(fs, c)
}

// ignoredFlag rejects a flag the user set that the resulting configuration
// would not use (a scorer's knob without that scorer, a policy's knob under
// another policy): silently running without it would hide the mistake.
func ignoredFlag(fs *pflag.FlagSet, c cluster.Config) error {
	weighted := c.Routing.Policy == "weighted"
	scorers := c.Routing.Scorers
	if len(scorers) == 0 {
		scorers = route.DefaultScorers()
	}
	scorer := func(names ...string) bool {
		for _, s := range scorers {
			if slices.Contains(names, s.Name) {
				return weighted
			}
		}
		return false
	}
	tiered := c.Priority.Name == sched.SLOTiered || c.Priority.Name == sched.SLOAdaptive
	for _, u := range []struct {
		flags []string
		used  bool
		needs string
	}{
		{[]string{"routing-scorers"}, weighted, "--routing-policy weighted"},
		{[]string{"prefix-index-capacity"}, scorer("prefix-affinity", "slo-priority"), "a prefix-affinity or slo-priority scorer"},
		{[]string{"cache-signal-delay"}, scorer("precise-prefix"), "the precise-prefix scorer"},
		{[]string{"slo-priority-blend"}, scorer("slo-priority"), "the slo-priority scorer"},
		{[]string{"kv-pressure-transfer-scale", "kv-pressure-thrash-weight"}, scorer("kv-pressure", "kv-pressure-slo"), "a kv-pressure or kv-pressure-slo scorer"},
		{[]string{"kv-pressure-slo-scale"}, scorer("kv-pressure-slo"), "the kv-pressure-slo scorer"},
		{[]string{"slo-base", "priority-bridge"}, c.Priority.UsesClassBase(), "--priority-policy slo-class, slo-tiered or slo-adaptive"},
		{[]string{"slo-age-weight", "slo-urgency-threshold-ms"}, tiered, "--priority-policy slo-tiered or slo-adaptive"},
		{[]string{"slo-load-threshold"}, c.Priority.Name == sched.SLOAdaptive, "--priority-policy slo-adaptive"},
		{[]string{"slo-gate"}, c.Admission.Policy == admit.SLOGated, "--admission-policy slo-gated"},
		{[]string{"token-bucket-capacity", "token-bucket-refill-rate"}, c.Admission.Policy == "token-bucket", "--admission-policy token-bucket"},
		{[]string{"kv-offload-threshold", "kv-transfer-bandwidth", "kv-transfer-base-latency"}, c.KVCPUBlocks > 0, "--kv-cpu-blocks > 0"},
	} {
		for _, flag := range u.flags {
			if changed(fs, flag) && !u.used {
				return fmt.Errorf("--%s: has no effect without %s", flag, u.needs)
			}
		}
	}
	return nil
}
