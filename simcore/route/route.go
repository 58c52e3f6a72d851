// Package route chooses the instance that serves each admitted request, as
// BLIS's routing policies do: round-robin, least-loaded, or a weighted sum
// of scorers (queue-depth, kv-utilization, load-balance, prefix-affinity),
// plus this project's own KV-pressure and SLO-aware scorers (kv-pressure,
// kv-pressure-slo, slo-priority),
// llm-d's precise prefix scorer (precise-prefix), fed by KV events, and
// llm-d-style token-load and session-affinity scorers. The llm-d Router's
// scorers are also here under their llm-d plugin types (queue-scorer,
// kv-cache-utilization-scorer, prefix-cache-scorer, ...), computed as
// llm-d-router commit ebab68792 (2026-08-21) computes them, and so are its
// pickers (max-score-picker, random-picker, weighted-random-picker) beside
// BLIS's argmax (blis, the default).
//
// Read route.go for the API, policies.go for the routers, pickers.go for
// the pickers, scorers.go for the scorer table and BLIS's scorers,
// scorers_slo.go for the KV-pressure and SLO-aware scorers,
// scorers_session.go for token-load and session-affinity, llmd.go and
// llmd_prefix.go for the llm-d scorers and llm-d's approximate prefix
// index, prefix_index.go for BLIS's router-side prefix record and
// kv_mirror.go for the KV-event mirror. Route runs
// once per request, so routers keep their scratch buffers from New and never
// allocate; ties are broken with the router RNG exactly where BLIS draws
// from it, so the stream advances identically.
package route

import (
	"fmt"
	"math"
	"math/rand"
	"strings"

	"optimize/simcore"
	"optimize/simcore/errtext"
	"optimize/simcore/keys"
)

// Snapshot is what the router sees of one instance. The engine fills it and
// decides how stale the instance-side fields may be; InFlight and
// InFlightTokens are always fresh.
type Snapshot struct {
	QueueDepth             int32   // wait-queue length
	BatchSize              int32   // running batch length
	InFlight               int32   // routed and not yet completed or dropped
	InFlightTokens         int64   // input + output tokens of the InFlight requests
	KVUtilization          float64 // used / total GPU blocks
	PendingTransferLatency int64   // µs of CPU→GPU reload in the instance's current step (tiered KV)
	KVThrashingRate        float64 // tiered KV
}

// EffectiveLoad is QueueDepth + BatchSize + InFlight, as in BLIS. Queued and
// running requests are also in flight, so they count twice; requests still in
// the pre-queue delay count once.
func (s *Snapshot) EffectiveLoad() int64 {
	return int64(s.QueueDepth) + int64(s.BatchSize) + int64(s.InFlight)
}

// Router picks an instance for each request.
type Router interface {
	// Route returns the index of the chosen instance. snaps has one entry
	// per instance, numInstances as given to New; now is the routing time,
	// non-decreasing from call to call.
	Route(r *simcore.Request, snaps []Snapshot, now simcore.Tick) int
}

// KVEventSink receives the instances' prefix-cache changes; the engine feeds it.
//
// A router whose profile uses precise-prefix implements it. Events come in
// non-decreasing at: stored is true when hash enters instance's prefix
// index and false when it leaves. Only shareable blocks need reporting:
// private ones can never match another request.
type KVEventSink interface {
	KVEvent(instance int, hash uint64, stored bool, at simcore.Tick)
	// KVCPUEvent is the same for the instance's CPU tier.
	KVCPUEvent(instance int, hash uint64, stored bool, at simcore.Tick)
}

// DefaultPrefixIndexCapacity is BLIS's router-side LRU size per instance:
// 10,000 blocks (160k tokens at 16 tokens per block).
const DefaultPrefixIndexCapacity = 10000

// Config selects and parameterises a router. Zero values mean defaults.
type Config struct {
	// Policy is one of PolicyNames; "" means round-robin.
	Policy string
	// Scorers is the weighted policy's profile, used in the order given;
	// nil means DefaultScorers, empty (non-nil) no scorer (llm-d pickers only). Other policies ignore it (it is still
	// validated, so a typo never goes unnoticed).
	Scorers []ScorerWeight
	// PrefixIndexCapacity is the prefix-affinity record's size in blocks per
	// instance; 0 means DefaultPrefixIndexCapacity.
	PrefixIndexCapacity int

	// CacheSignalDelay is how old (µs) the instances' KV events are when the
	// precise-prefix scorer sees them; 0 = live.
	CacheSignalDelay int64
	// CacheCopied, when set, makes the delay BLIS f90a1e3a's: the router
	// sees copies of the instances' caches taken at the time it points
	// to, which the caller advances (at a routing or admission decision
	// at least CacheSignalDelay after the last copy), instead of each
	// event CacheSignalDelay after it happened.
	CacheCopied *simcore.Tick
	// SLOPriorityBlend is, per SLO class, the weight in [0,1] of the
	// prefix-affinity score in the slo-priority scorer (1 − it goes to
	// queue-depth); classes not given take critical 0.2, standard 0.6,
	// sheddable, batch and background 0.8 (unclassed 0.6; scorers_slo.go).
	SLOPriorityBlend simcore.PerClass
	// KVPressureTransferScale is the pending transfer latency (µs) that costs
	// the kv-pressure scorers a whole point; 0 means 10000 (10 ms).
	KVPressureTransferScale float64
	// KVPressureThrashWeight multiplies the thrashing rate in the
	// kv-pressure scorers; 0 means 2 (a rate of 0.5 costs a whole point).
	KVPressureThrashWeight float64
	// KVPressureSLOScale multiplies the transfer penalty per SLO class in
	// kv-pressure-slo; classes not given take critical 5,
	// standard 1, sheddable and batch 0.2, background 0.1 (unclassed 1).
	KVPressureSLOScale simcore.PerClass
	// TokenLoadThreshold is the in-flight tokens at which the token-load
	// scorer gives an instance 0; 0 means DefaultTokenLoadThreshold.
	TokenLoadThreshold int64

	// Picker chooses among the weighted policy's scored instances; one of
	// PickerNames, "" means the first (blis).
	Picker string
	// LLMD holds the llm-d scorers' parameters (llmd.go).
	LLMD LLMDParams
	// KVBlockSize (tokens) and KVBlocksPerInstance are the instances' KV
	// block size and GPU block count, which llm-d's approximate prefix index
	// reads when auto-tuned (the engine fills them in; 0 = 16 tokens and
	// lruCapacityPerServer).
	KVBlockSize         int64
	KVBlocksPerInstance int64
	// RoundRobinResume makes round-robin among a changing set of
	// instances (RouteAmong) resume after the instance it chose last, by
	// slot, so an instance joining or leaving neither skips nor repeats
	// another's turn; false: BLIS f90a1e3a's counter modulo the routable
	// instances, whose position jumps when their number changes. The
	// engine sets it outside era f90a1e3a. Route, over a fixed set, is
	// the same either way.
	RoundRobinResume bool
}

// Validate checks the values New would reject, with one-line errors that
// name the setting's key.
func (c *Config) Validate() error {
	if c.PrefixIndexCapacity < 0 {
		return errtext.BadSetting(keys.PrefixIndexCapacity, "must be > 0 blocks (0 = default %d), got %d",
			DefaultPrefixIndexCapacity, c.PrefixIndexCapacity)
	}
	if c.CacheSignalDelay < 0 {
		return errtext.BadSetting(keys.CacheSignalDelay, "must be >= 0 µs (0 = live), got %d", c.CacheSignalDelay)
	}
	if c.TokenLoadThreshold < 0 {
		return errtext.BadSetting(keys.TokenLoadThreshold, "must be > 0 tokens (0 = default %d), got %d",
			DefaultTokenLoadThreshold, c.TokenLoadThreshold)
	}
	if v := c.KVPressureTransferScale; !finiteNonNegative(v) {
		return errtext.BadSetting(keys.KVPressureTransferScale, "must be a finite number >= 0 µs (0 = default %g), got %v",
			defaultTransferScale, v)
	}
	if v := c.KVPressureThrashWeight; !finiteNonNegative(v) {
		return errtext.BadSetting(keys.KVPressureThrashWeight, "must be a finite number >= 0 (0 = default %g), got %v",
			defaultThrashWeight, v)
	}
	for cl := simcore.SLOClass(1); cl < simcore.NumSLOClasses; cl++ {
		if v, ok := c.SLOPriorityBlend.Get(cl); ok && !(v >= 0 && v <= 1) {
			return errtext.BadSetting(keys.Member(keys.SLOPriorityBlend, cl.Label()), "must be in [0,1] (the prefix-affinity share), got %v", v)
		}
		if v, ok := c.KVPressureSLOScale.Get(cl); ok && !finiteNonNegative(v) {
			return errtext.BadSetting(keys.Member(keys.KVPressureSLOScale, cl.Label()), "must be a finite number >= 0, got %v", v)
		}
	}
	picker, ok := findPicker(c.Picker)
	if !ok {
		return errtext.BadSetting(keys.RoutingPicker, "unknown value %q (allowed: %s)", c.Picker, strings.Join(PickerNames(), ", "))
	}
	// An empty, non-nil profile is one of no scorer (nil means
	// DefaultScorers): llm-d's pickers take it, every instance scoring 0;
	// BLIS's divides by the weights' sum.
	if c.Policy == "weighted" && c.Scorers != nil && len(c.Scorers) == 0 && picker.normalise {
		return fmt.Errorf("every routing.weight.* is 0; the weighted policy with routing.picker %s needs a scorer with weight > 0 (llm-d's pickers take none)", picker.name)
	}
	if v := c.LLMD.Prefix.MatchLengthWeight; !(v >= 0 && v <= 1) {
		return errtext.BadSetting(keys.PrefixMatchLengthWeight, "must be in [0,1], got %v", v)
	}
	return validateScorers(c.Scorers)
}

func finiteNonNegative(v float64) bool { return v >= 0 && !math.IsInf(v, 1) }

func (c *Config) prefixCapacity() int {
	if c.PrefixIndexCapacity == 0 {
		return DefaultPrefixIndexCapacity
	}
	return c.PrefixIndexCapacity
}

// policyKind is one row of the policy table.
type policyKind struct {
	name  string
	build func(cfg *Config, numInstances int, rng *rand.Rand) Router
}

// policyKinds is the one place where policy names are defined; the first
// row is the default.
func policyKinds() []policyKind {
	return []policyKind{
		{"round-robin", func(c *Config, _ int, _ *rand.Rand) Router { return &roundRobin{resume: c.RoundRobinResume, last: -1} }},
		{"least-loaded", func(_ *Config, n int, rng *rand.Rand) Router {
			return &leastLoaded{ties: tieBreaker{rng: rng, tied: make([]int, 0, n)}}
		}},
		{"weighted", newWeighted},
	}
}

// PolicyNames lists the accepted policy names, the default first.
func PolicyNames() []string {
	kinds := policyKinds()
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.name
	}
	return names
}

// New builds the router cfg describes for numInstances instances. rng is
// the router stream (BLIS: math/rand seeded with seed XOR fnv1a64("router"));
// it is drawn from only to break exact ties. A nil rng breaks ties toward the
// lowest index, as BLIS does without one.
func New(cfg Config, numInstances int, rng *rand.Rand) (Router, error) {
	if numInstances < 1 {
		return nil, fmt.Errorf("routing needs at least 1 instance, got %d", numInstances)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	name := cfg.Policy
	if name == "" {
		name = policyKinds()[0].name
	}
	for _, k := range policyKinds() {
		if k.name == name {
			return k.build(&cfg, numInstances, rng), nil
		}
	}
	return nil, errtext.BadSetting(keys.RoutingPolicy, "unknown value %q (allowed: %s)", cfg.Policy, strings.Join(PolicyNames(), ", "))
}

// normalisedWeights divides each weight by their sum, summing in the given
// order so that the result is bit-identical to BLIS's.
func normalisedWeights(list []ScorerWeight) []float64 {
	total := 0.0
	for _, sw := range list {
		total += sw.Weight
	}
	w := make([]float64, len(list))
	for i, sw := range list {
		w[i] = sw.Weight / total
	}
	return w
}

// clamp01 clamps a score to [0,1] the way BLIS does: NaN passes through
// (and then never wins the argmax).
func clamp01(s float64) float64 {
	if s < 0 {
		return 0
	}
	if s > 1 {
		return 1
	}
	return s
}
