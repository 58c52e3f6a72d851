package cluster

import (
	"math"

	"optimize/simcore"
	"optimize/simcore/admit"
	"optimize/simcore/batch"
	"optimize/simcore/errtext"
	"optimize/simcore/flow"
	"optimize/simcore/keys"
	"optimize/simcore/latency"
	"optimize/simcore/route"
	"optimize/simcore/sched"
)

// Config is a complete cluster configuration. Field errors are
// errtext.Setting errors naming the setting's key (the settings table's,
// package strategies/settings), which callers translate to the flag or
// template field the value came from.
type Config struct {
	// The world: which model is served, on which GPU, at which tensor
	// parallelism, priced by which latency model, read in which world
	// data. The engine resolves it when it is built (latency.World.Resolve);
	// nothing resolved is kept here.
	latency.World

	NumInstances  int
	TotalKVBlocks int64 // 0 = derived from the world (KVBlocks)
	// KVCapacityRule is how KVBlocks derives them from memory: one of
	// latency.KVRules, "" for vLLM's.
	KVCapacityRule     string
	BlockSize          int64
	MaxRunning         int
	MaxScheduledTokens int64
	PrefillThreshold   int64 // batch.long_prefill_token_threshold; 0 = no chunking
	Routing            route.Config
	Scheduler          string
	Priority           sched.PolicyConfig
	Admission          admit.Config
	SnapshotRefresh    int64 // µs; 0 = signals always fresh, SnapshotRefreshOfEra = the era's (EffectiveSnapshotRefresh)
	Horizon            int64 // µs; 0 = run until every request is done
	Seed               int64

	// PriorityBridge makes the router hand each request its class's base
	// priority, which the scheduler then starts from.
	PriorityBridge bool
	// PreemptionPolicy: "fcfs" evicts the batch tail, "priority" the least
	// urgent running request.
	PreemptionPolicy string
	// SLOPrefillThreshold overrides PrefillThreshold per SLO class.
	SLOPrefillThreshold simcore.PerClass
	// SLOTTFT, SLOITL and SLOE2E are per-class latency targets (ms) for
	// attainment and goodput reporting: time to first token, mean
	// inter-token latency ((E2E − TTFT) / (output tokens − 1)) and
	// end-to-end latency. They change no simulated event, except that the
	// slo-deadline scheduler orders by the TTFT targets.
	SLOTTFT, SLOITL, SLOE2E simcore.PerClass

	// Era is the BLIS behaviour reproduced where BLIS changed it (see
	// simcore.Era); "" is the latency model's era (EffectiveEra).
	Era simcore.Era
	// MaxModelLen is vLLM's --max-model-len, the context window in tokens
	// (0 = derived: ContextWindow): a request
	// whose input alone fills it, or whose input plus output exceeds it,
	// is dropped when it reaches the wait queue, as vLLM rejects it. A
	// request that passes never reaches the window while it runs (its
	// output length is its budget), so nothing is capped later.
	MaxModelLen int64

	// CPU tier of the KV cache (0 blocks = single tier).
	KVCPUBlocks           int64
	KVOffloadThreshold    float64 // GPU utilisation above which idle cached blocks move to CPU
	KVTransferBandwidth   float64 // blocks per µs, BLIS's unit: a block costs ceil(blockSize/bandwidth) µs
	KVTransferBaseLatency int64   // µs per reloaded block

	// PD is prefill/decode disaggregation (off unless it names pools).
	PD PDConfig
	// FlowControl, when enabled, queues admitted requests at the gateway
	// (package flow) and replaces the admission policy.
	FlowControl flow.Config
	// Autoscale is the model autoscaler (autoscale_config.go); off unless
	// its interval is set.
	Autoscale Autoscale

	// eraResolved marks the engine's copy, whose era New replaced by the
	// one in effect; givenAugust then records that era f90a1e3a was given.
	eraResolved, givenAugust bool
}

// SnapshotRefreshOfEra, as Config.SnapshotRefresh, leaves the interval to
// the era (simcore.Era.SnapshotRefresh), as BLIS's default differs
// between its commits.
const SnapshotRefreshOfEra int64 = -1

// Defaults returns BLIS's defaults (each policy's first name is its
// default) with the world (model, GPU, TP, latency model) left for the
// caller to fill in and resolve.
func Defaults() Config {
	return Config{
		World:               latency.World{GPUMemoryUtilization: 0.9},
		NumInstances:        1,
		BlockSize:           16,
		MaxRunning:          256,
		MaxScheduledTokens:  2048,
		Routing:             route.Config{Policy: route.PolicyNames()[0], PrefixIndexCapacity: route.DefaultPrefixIndexCapacity, CacheSignalDelay: CacheSignalDelayOfEra},
		Scheduler:           sched.SchedulerNames()[0],
		Priority:            sched.PolicyConfig{Name: sched.PolicyNames()[0]},
		PreemptionPolicy:    batch.PreemptionPolicyNames()[0],
		KVOffloadThreshold:  0.9,
		KVTransferBandwidth: 100,
		SnapshotRefresh:     SnapshotRefreshOfEra,
		Admission:           admit.Config{Policy: admit.PolicyNames()[0], BucketCapacity: admit.DefaultBucketCapacity, RefillRate: admit.DefaultRefillRate},
		Seed:                42,
		PD: PDConfig{Decider: PDNever, PrefixThreshold: DefaultPDPrefixThreshold,
			TransferBandwidth: DefaultPDTransferBandwidth, TransferBaseLatency: DefaultPDTransferBaseLatency},
	}
}

// Validate makes every check New makes, building nothing: the world
// resolves in its data, the numeric fields are in range, the latency
// model builds and the KV capacity is known. Policies are checked by
// their constructors in New.
func (c *Config) Validate() error {
	_, err := c.check()
	return err
}

// check is Validate, answering the resolved world.
func (c *Config) check() (latency.Resolved, error) {
	w, err := c.Resolve()
	if err != nil {
		return w, err
	}
	return w, c.checkIn(w)
}

// checkIn checks c's fields in its resolved world w.
func (c *Config) checkIn(w latency.Resolved) error {
	switch {
	case c.NumInstances < 1:
		return errtext.BadSetting(keys.NumInstances, "must be ≥ 1, got %d", c.NumInstances)
	case c.TotalKVBlocks < 0:
		return errtext.BadSetting(keys.KVTotalBlocks, "must be ≥ 1 (0 = derived from the world), got %d", c.TotalKVBlocks)
	case c.TotalKVBlocks > math.MaxInt32:
		return errtext.BadSetting(keys.KVTotalBlocks, "must be < 2^31, got %d", c.TotalKVBlocks)
	case c.BlockSize < 1:
		return errtext.BadSetting(keys.KVBlockSize, "must be ≥ 1, got %d", c.BlockSize)
	case c.MaxRunning < 1:
		return errtext.BadSetting(keys.MaxRunning, "must be ≥ 1, got %d", c.MaxRunning)
	case c.MaxScheduledTokens < 1:
		return errtext.BadSetting(keys.MaxScheduledTokens, "must be ≥ 1, got %d", c.MaxScheduledTokens)
	case c.SnapshotRefresh < 0 && c.SnapshotRefresh != SnapshotRefreshOfEra:
		return errtext.BadSetting(keys.SnapshotRefresh, "must be ≥ 0 µs, got %d", c.SnapshotRefresh)
	case c.Horizon < 0:
		return errtext.BadSetting(keys.RunHorizon, "must be ≥ 0 µs (0 = unlimited), got %d", c.Horizon)
	case c.KVCPUBlocks < 0 || c.KVCPUBlocks > math.MaxInt32:
		return errtext.BadSetting(keys.KVCPUBlocks, "must be in [0, 2^31), got %d", c.KVCPUBlocks)
	case !(c.KVOffloadThreshold >= 0 && c.KVOffloadThreshold <= 1):
		return errtext.BadSetting(keys.KVOffloadThreshold, "must be in [0, 1], got %v", c.KVOffloadThreshold)
	case !(c.KVTransferBandwidth > 0) || math.IsInf(c.KVTransferBandwidth, 0):
		return errtext.BadSetting(keys.KVTransferBandwidth, "must be a finite number > 0 (BLIS's blocks per µs: a block costs ceil(block size / rate) µs), got %v", c.KVTransferBandwidth)
	case c.KVTransferBaseLatency < 0:
		return errtext.BadSetting(keys.KVTransferBaseLatency, "must be ≥ 0 µs, got %d", c.KVTransferBaseLatency)
	case c.MaxModelLen < 0 || c.MaxModelLen > math.MaxInt32:
		return errtext.BadSetting(keys.MaxModelLen, "must be in [0, 2^31) tokens (0 = derived from the model), got %d", c.MaxModelLen)
	}
	if err := c.FlowControl.Validate(); err != nil {
		return err
	}
	if err := c.Era.Validate(); err != nil {
		return err
	}
	if err := c.PD.check(c.NumInstances); err != nil {
		return err
	}
	if err := (batch.Config{PrefillThreshold: c.PrefillThreshold, ClassThreshold: c.SLOPrefillThreshold, PreemptionPolicy: c.PreemptionPolicy}).Validate(); err != nil {
		return err
	}
	for _, t := range []struct {
		key     string
		targets *simcore.PerClass
	}{{keys.SLOTTFT, &c.SLOTTFT}, {keys.SLOITL, &c.SLOITL}, {keys.SLOE2E, &c.SLOE2E}} {
		for cl := simcore.SLOClass(1); cl < simcore.NumSLOClasses; cl++ {
			if v, ok := t.targets.Get(cl); ok && !(v > 0 && !math.IsInf(v, 0)) {
				return errtext.BadSetting(keys.Member(t.key, cl.String()), "must be a finite number > 0 ms, got %v", v)
			}
		}
	}
	if w.Physical() {
		if c.TP < 1 {
			return errtext.BadSetting(keys.TP, "must be ≥ 1, got %d", c.TP)
		}
		if !(c.GPUMemoryUtilization > 0 && c.GPUMemoryUtilization <= 1) {
			return errtext.BadSetting(keys.GPUMemoryUtilization, "must be in (0, 1], got %v", c.GPUMemoryUtilization)
		}
	}
	if _, err := latency.New(w.Spec, c.TP); err != nil {
		return err
	}
	if _, err := c.KVBlocks(w); err != nil {
		return err
	}
	return c.checkAutoscale(w)
}

// ClusterCost is what the cluster costs in world w, decided before it
// runs: its GPUs (instances × TP; 0 without a TP: no count, no cost) and
// the price of one per hour.
func (c *Config) ClusterCost(w latency.Resolved) (gpus int, pricePerGPUHour float64) {
	if c.TP == 0 || !c.PD.Enabled() {
		return c.NumInstances * c.TP, w.PricePerGPUHour
	}
	for i := range c.NumInstances {
		gpus += c.PD.tpOf(c.PD.role(i), c.TP)
	}
	return gpus, w.PricePerGPUHour
}

// EffectiveEra is the era given, else the latency model's in world w: the
// blackbox model is BLIS 7fd7a88d's world, the physics models f90a1e3a's.
func (c *Config) EffectiveEra(w latency.Resolved) simcore.Era {
	switch {
	case c.Era != "":
		return c.Era
	case w.Physical():
		return simcore.EraAugust2026
	}
	return simcore.EraMarch2026
}

// EffectiveSnapshotRefresh is the snapshot refresh interval given, else
// the era's in world w (EffectiveEra): 50 ms for the physics latency
// models (BLIS f90a1e3a), always fresh for the blackbox (7fd7a88d).
func (c *Config) EffectiveSnapshotRefresh(w latency.Resolved) int64 {
	if c.SnapshotRefresh == SnapshotRefreshOfEra {
		return c.EffectiveEra(w).SnapshotRefresh()
	}
	return c.SnapshotRefresh
}

// ContextWindow is the context window in tokens (0 = none): max_model_len
// when set; else, for the physics models, the model's
// max_position_embeddings (rope scaling applied) capped at what the KV
// cache holds, as vLLM caps it; the blackbox profiles have none.
func (c *Config) ContextWindow(w latency.Resolved) (int64, error) {
	if c.MaxModelLen > 0 || !w.Physical() {
		return c.MaxModelLen, nil
	}
	blocks, err := c.KVBlocks(w)
	if err != nil {
		return 0, err
	}
	window := int64(w.Spec.Arch.MaxPositions)
	if kv := blocks * c.BlockSize; window == 0 || window > kv {
		window = kv
	}
	return window, nil
}

// KVBlocks is the GPU KV capacity of an instance in blocks: kv.total_blocks
// when set, else the blackbox profile's figure, else what the model leaves
// of the GPUs' memory (latency.KVBlocks by kv.capacity_rule: vLLM's
// per-worker rule unless BLIS's is asked for).
func (c *Config) KVBlocks(w latency.Resolved) (int64, error) {
	switch {
	case c.TotalKVBlocks > 0:
		return c.TotalKVBlocks, nil
	case !w.Physical():
		if w.Spec.ProfileBlocks < 1 {
			return 0, errtext.BadSetting(keys.KVTotalBlocks, "must be ≥ 1: the blackbox latency model has no profile to take it from")
		}
		return w.Spec.ProfileBlocks, nil
	}
	n, err := latency.KVBlocks(w.Spec.Arch, w.Spec.Hardware, c.TP, c.BlockSize, c.GPUMemoryUtilization, c.KVCapacityRuleInEffect())
	if err != nil {
		return 0, errtext.BadSetting(keys.TP, "%s on %s at TP%d: %v", w.Model, w.GPU, c.TP, err)
	}
	if n > math.MaxInt32 {
		return 0, errtext.BadSetting(keys.KVTotalBlocks, "%s on %s at TP%d derives %d blocks, more than the simulator's 2^31; set kv.total_blocks", w.Model, w.GPU, c.TP, n)
	}
	return n, nil
}
