package route

import (
	"math"

	"optimize/simcore"
)

// The llm-d Router's scorers, named by their llm-d plugin type and computed
// with llm-d's arithmetic and parameters as of llm-d-router commit
// ebab68792 (2026-08-21); plugin names and defaults drift between llm-d
// releases, so that commit is the reference.
//
// llm-d's endpoint signals map onto Snapshot as follows:
//
//	WaitingQueueSize                 = QueueDepth
//	RunningRequestsSize              = BatchSize
//	KVCacheUsagePercent (a fraction) = KVUtilization
//	the EPP's in-flight load         = InFlight (requests), InFlightTokens (tokens)
//
// Three llm-d plugins share an existing scorer's arithmetic, so their rows
// in the scorer table build it: kv-cache-utilization-scorer is
// kv-utilization (1 − KV utilisation); precise-prefix-cache-scorer is
// precise-prefix (llm-d's longest-prefix count over the KV-event index,
// divided by the request's input blocks; a block only the instance's CPU
// tier holds counts 0.8 and the count is truncated, as llm-d's precise
// producer weighs vLLM's CPU-medium events; the simulator's KV blocks serve as
// the EPP's recomputed block keys, which in llm-d match only when its
// tokenProcessorConfig blockSize equals vLLM's); session-affinity-scorer is
// session-affinity (llm-d's encoded_endpoint_header strategy: the client
// echoes the endpoint its session last went to, modelled by the session
// id; the simulator's record forgets sessions beyond 65,536, a header
// never forgets). token-load-scorer is not modelled: it estimates output
// as 1.5 × input and adds the request's own uncached tokens, where
// token-load counts real tokens in flight.
//
// llm-d's scheduler adds, per instance, weight × clamp01(score) over the
// profile's scorers, with the configured weights as they are (not divided
// by their sum); the picker then chooses (pickers.go).

// LLMDParams holds the llm-d scorers' parameters, one field per llm-d JSON
// parameter. A zero or nil field means llm-d's default, as llm-d reads it.
type LLMDParams struct {
	// Prefix is the approximate prefix index's (approx-prefix-cache-producer's)
	// and prefix-cache-scorer's.
	Prefix LLMDPrefixParams
	// ActiveIdleThreshold (active-request-scorer idleThreshold): an instance
	// with at most this many requests in flight scores 1; < 0 means 0.
	ActiveIdleThreshold int
	// ActiveMaxBusyScore (active-request-scorer maxBusyScore): the score of
	// the least busy instance above the idle threshold; nil means 1.
	ActiveMaxBusyScore *float64
	// LoadAwareThreshold (load-aware-scorer threshold): waiting requests at
	// which an instance scores 0; <= 0 means DefaultLoadAwareThreshold.
	LoadAwareThreshold int
	// NoHitLRUSize (no-hit-lru-scorer lruSize): instances the LRU remembers;
	// <= 0 means DefaultNoHitLRUSize.
	NoHitLRUSize int
}

// llm-d's defaults.
const (
	DefaultLoadAwareThreshold = 128
	DefaultNoHitLRUSize       = 1024
)

// ActiveMaxBusyScoreInEffect is maxBusyScore as llm-d reads it: the
// configured value when it is in [0,1], else 1.
func (p *LLMDParams) ActiveMaxBusyScoreInEffect() float64 {
	if v := p.ActiveMaxBusyScore; v != nil && *v >= 0 && *v <= 1 {
		return *v
	}
	return 1
}

// LoadAwareThresholdInEffect is the load-aware threshold llm-d uses.
func (p *LLMDParams) LoadAwareThresholdInEffect() int {
	if p.LoadAwareThreshold <= 0 {
		return DefaultLoadAwareThreshold
	}
	return p.LoadAwareThreshold
}

// NoHitLRUSizeInEffect is the no-hit-lru LRU size llm-d uses.
func (p *LLMDParams) NoHitLRUSizeInEffect() int {
	if p.NoHitLRUSize <= 0 {
		return DefaultNoHitLRUSize
	}
	return p.NoHitLRUSize
}

// minMaxScore writes llm-d's min-max normalisation of v (lower is better):
// (max − v_i) / (max − min), and 1 for every instance when all are equal.
func minMaxScore(snaps []Snapshot, out []float64, v func(*Snapshot) int32) {
	lo, hi := int32(math.MaxInt32), int32(math.MinInt32)
	for i := range snaps {
		lo, hi = min(lo, v(&snaps[i])), max(hi, v(&snaps[i]))
	}
	for i := range snaps {
		if hi == lo {
			out[i] = 1
		} else {
			out[i] = float64(hi-v(&snaps[i])) / float64(hi-lo)
		}
	}
}

// llmdQueue is llm-d's queue-scorer: min-max normalised WaitingQueueSize
// (QueueDepth only, where BLIS's queue-depth normalises EffectiveLoad).
type llmdQueue struct{}

func (llmdQueue) Score(_ *simcore.Request, snaps []Snapshot, out []float64) {
	minMaxScore(snaps, out, func(s *Snapshot) int32 { return s.QueueDepth })
}

// llmdRunningRequests is llm-d's running-requests-size-scorer: min-max
// normalised RunningRequestsSize (BatchSize).
type llmdRunningRequests struct{}

func (llmdRunningRequests) Score(_ *simcore.Request, snaps []Snapshot, out []float64) {
	minMaxScore(snaps, out, func(s *Snapshot) int32 { return s.BatchSize })
}

// llmdActiveRequest is llm-d's active-request-scorer over the EPP's
// in-flight request counts (InFlight): an instance with count <=
// idleThreshold scores 1, any other (max − count) / max × maxBusyScore,
// max being the largest count.
type llmdActiveRequest struct {
	idle    int64
	maxBusy float64
}

func newLLMDActiveRequest(p *LLMDParams) llmdActiveRequest {
	return llmdActiveRequest{idle: int64(max(p.ActiveIdleThreshold, 0)), maxBusy: p.ActiveMaxBusyScoreInEffect()}
}

func (a llmdActiveRequest) Score(_ *simcore.Request, snaps []Snapshot, out []float64) {
	hi := int64(0)
	for i := range snaps {
		hi = max(hi, int64(snaps[i].InFlight))
	}
	for i := range snaps {
		n := int64(snaps[i].InFlight)
		if n <= a.idle {
			out[i] = 1
			continue
		}
		out[i] = float64(hi-n) / float64(hi) * a.maxBusy
	}
}

// llmdLoadAware is llm-d's load-aware-scorer over WaitingQueueSize
// (QueueDepth) q: 0.5 when q = 0, else 0.5 × (1 − min(q, threshold) /
// threshold). An empty queue scores 0.5, not 1: llm-d's own choice.
type llmdLoadAware struct{ threshold float64 }

func (l llmdLoadAware) Score(_ *simcore.Request, snaps []Snapshot, out []float64) {
	for i := range snaps {
		q := float64(snaps[i].QueueDepth)
		if q == 0 {
			out[i] = 0.5
			continue
		}
		out[i] = 0.5 * (1 - min(q, l.threshold)/l.threshold)
	}
}

// llmdNoHitLRU is llm-d's no-hit-lru-scorer. On a cold request (no instance
// holds any of its prefix blocks in the approximate prefix index, which
// llm-d's loader adds as approx-prefix-cache-producer when the config
// names none) it ranks the instances: those the LRU has never seen first,
// in instance order, then those it has, least recently chosen first; rank
// k of N scores 1 − k/(N−1) (1 for a single instance). A warm request
// scores 0.5 everywhere, so alone in a profile it leaves the choice to the
// picker's tie-break. After a cold request the chosen instance becomes the
// most recent; the LRU holds lruSize instances. When the producer hashes
// nothing (maxPrefixTokensToMatch below the block size) every request is
// cold and this cycles through the instances in order, as round-robin
// does.
type llmdNoHitLRU struct {
	prefix *llmdPrefixIndex
	lru    []int32 // instances, least recently chosen first
	size   int
	cold   bool // the last scored request was cold
	rank   []int32
}

func newLLMDNoHitLRU(prefix *llmdPrefixIndex, size, instances int) *llmdNoHitLRU {
	return &llmdNoHitLRU{prefix: prefix, size: size, lru: make([]int32, 0, min(size, instances)), rank: make([]int32, instances)}
}

func (s *llmdNoHitLRU) Score(r *simcore.Request, snaps []Snapshot, out []float64) {
	s.cold = !s.prefix.anyMatch(r)
	if !s.cold {
		for i := range out {
			out[i] = 0.5
		}
		return
	}
	n := len(out)
	if n == 1 {
		out[0] = 1
		return
	}
	for i := range s.rank[:n] {
		s.rank[i] = -1
	}
	for pos, inst := range s.lru {
		if int(inst) < n {
			s.rank[inst] = int32(pos)
		}
	}
	neverUsed := 0
	for i := range n {
		if s.rank[i] < 0 {
			out[i] = 1 - float64(neverUsed)/float64(n-1)
			neverUsed++
		}
	}
	for i := range n {
		if pos := s.rank[i]; pos >= 0 {
			out[i] = max(0, 1-float64(neverUsed+int(pos))/float64(n-1))
		}
	}
}

// Observe moves the chosen instance to the most recent end after a cold
// request, evicting the least recent beyond lruSize.
func (s *llmdNoHitLRU) Observe(_ *simcore.Request, chosen int) {
	if !s.cold {
		return
	}
	for k, inst := range s.lru {
		if int(inst) == chosen {
			copy(s.lru[k:], s.lru[k+1:])
			s.lru = s.lru[:len(s.lru)-1]
			break
		}
	}
	if len(s.lru) == s.size {
		copy(s.lru, s.lru[1:])
		s.lru = s.lru[:len(s.lru)-1]
	}
	s.lru = append(s.lru, int32(chosen))
}
