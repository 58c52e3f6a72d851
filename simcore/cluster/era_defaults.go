package cluster

import (
	"optimize/simcore"
	"optimize/simcore/latency"
	"optimize/simcore/route"
)

// BLIS changed `blis run`'s defaults between the commits the eras
// reproduce. A configuration whose era is given as f90a1e3a takes, for
// what it leaves unset, f90a1e3a's defaults, so that a BLIS f90a1e3a
// command line runs as BLIS runs it with `--era f90a1e3a` added:
//
//   - latency model: trained-physics (BLIS's --latency-model default),
//     where the simulator's own default is a model's blackbox profile
//     when it has one;
//   - GPU KV blocks: BLIS's estimate (kv.capacity_rule blis-f90a1e3a:
//     every GPU's memory over the KV bytes per token split by TP), where
//     the simulator's own is vLLM's per-worker rule;
//   - the weighted router's profile: precise prefix 2, waiting queue 1,
//     KV utilisation 1 (BLIS's DefaultScorerConfigs; its queue-depth reads
//     the waiting queue alone, llm-d's queue-scorer), where the
//     simulator's own is 7fd7a88d's prefix-affinity 3, queue-depth 2,
//     kv-utilization 2;
//   - the cache-signal delay: 50,000 µs (BLIS's DefaultCacheSignalDelay),
//     where the simulator's own is 0 (live).
//
// With no era given, or 7fd7a88d, the simulator's own defaults hold; the
// era the latency model implies (EffectiveEra) changes mechanics, never
// these defaults.

// CacheSignalDelayOfEra, as Config.Routing.CacheSignalDelay, leaves the
// delay to the era given: BLIS f90a1e3a's 50,000 µs under era f90a1e3a,
// else 0 (live).
const CacheSignalDelayOfEra int64 = -1

// blisAugustCacheSignalDelay is BLIS f90a1e3a's DefaultCacheSignalDelay, µs.
const blisAugustCacheSignalDelay int64 = 50_000

// eraGivenAugust reports whether the configuration names era f90a1e3a
// itself (rather than implying it by its latency model). The engine
// replaces the era by the one in effect, so it keeps the answer first
// (Config.givenAugust).
func (c *Config) eraGivenAugust() bool {
	if c.eraResolved {
		return c.givenAugust
	}
	return c.Era == simcore.EraAugust2026
}

// BLISQuirks reports whether the simulator reproduces BLIS f90a1e3a where
// BLIS is degenerate and llm-d does otherwise: only when era f90a1e3a is
// given. Then round-robin shares one counter across the P/D pools and
// takes the counter modulo the routable instances while the autoscaler
// changes them, and the autoscaler keeps no minimum unless
// autoscaler.min_replicas is set (BLISDegenerate); otherwise each pool
// has its own round-robin (llm-d's picker per profile), round-robin
// resumes after the instance chosen last, and the autoscaler keeps
// llm-d's minReplicas.
func (c *Config) BLISQuirks() bool { return c.eraGivenAugust() }

// Resolve resolves the world (latency.World.Resolve) with the era's
// default latency model when none is given.
func (c *Config) Resolve() (latency.Resolved, error) {
	w := c.World
	if w.LatencyModel == "" && c.eraGivenAugust() {
		w.LatencyModel = latency.KindTrainedPhysics
	}
	return w.Resolve()
}

// KVCapacityRuleInEffect is the rule KVBlocks derives GPU KV blocks by:
// the one given, else BLIS's under era f90a1e3a, else vLLM's.
func (c *Config) KVCapacityRuleInEffect() string {
	switch {
	case c.KVCapacityRule != "":
		return c.KVCapacityRule
	case c.eraGivenAugust():
		return latency.KVRuleBLIS
	}
	return latency.KVRuleVLLM
}

// DefaultScorers is the weighted router's profile when none is given:
// BLIS f90a1e3a's under era f90a1e3a, else route.DefaultScorers.
func (c *Config) DefaultScorers() []route.ScorerWeight {
	if c.eraGivenAugust() {
		return []route.ScorerWeight{
			{Name: "precise-prefix-cache-scorer", Weight: 2},
			{Name: "queue-scorer", Weight: 1},
			{Name: "kv-cache-utilization-scorer", Weight: 1},
		}
	}
	return route.DefaultScorers()
}

// ScorersInEffect is the weighted router's profile: the one given, else
// DefaultScorers.
func (c *Config) ScorersInEffect() []route.ScorerWeight {
	if c.Routing.Scorers != nil {
		return c.Routing.Scorers
	}
	return c.DefaultScorers()
}

// CacheSignalDelayInEffect is the cache-signal delay in µs: the one given,
// else the era's (CacheSignalDelayOfEra).
func (c *Config) CacheSignalDelayInEffect() int64 {
	switch {
	case c.Routing.CacheSignalDelay != CacheSignalDelayOfEra:
		return c.Routing.CacheSignalDelay
	case c.eraGivenAugust():
		return blisAugustCacheSignalDelay
	}
	return 0
}

// RoutingInEffect is the router's configuration with the era's defaults
// filled in (the profile of every pool reads its scorers from it).
func (c *Config) RoutingInEffect() route.Config {
	r := c.Routing
	r.CacheSignalDelay = c.CacheSignalDelayInEffect()
	if r.Scorers == nil && c.eraGivenAugust() {
		r.Scorers = c.DefaultScorers()
	}
	return r
}
