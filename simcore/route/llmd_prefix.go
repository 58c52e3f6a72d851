package route

import (
	"optimize/simcore"
	"optimize/simcore/internal/mix"
)

// LLMDPrefixParams are llm-d's approx-prefix-cache-producer parameters and
// the prefix-cache-scorer's own. A zero or nil field means llm-d's default.
type LLMDPrefixParams struct {
	// AutoTune (autoTune): take the block size and the LRU capacity from the
	// instances (vLLM's cache block size and GPU block count, here
	// kv.block_size and kv.total_blocks); nil means true.
	AutoTune *bool
	// BlockSizeTokens (blockSizeTokens): tokens per hashed block when not
	// auto-tuned; <= 0 means 16. Either way llm-d raises it to at least 64.
	BlockSizeTokens int
	// MaxPrefixBlocksToMatch (maxPrefixBlocksToMatch): blocks hashed per
	// request when MaxPrefixTokensToMatch is 0; 0 = the whole prompt; nil
	// means 2048.
	MaxPrefixBlocksToMatch *int
	// MaxPrefixTokensToMatch (maxPrefixTokensToMatch): the same cap in
	// tokens (blocks = tokens / block size, rounded down), which wins when
	// > 0; nil means 131072. A cap below the block size (1–63 at the
	// 64-token floor) is 0 blocks: llm-d hashes nothing, so no request ever
	// matches.
	MaxPrefixTokensToMatch *int
	// LRUCapacityPerServer (lruCapacityPerServer): blocks per instance in
	// the index when not auto-tuned; <= 0 means 31250.
	LRUCapacityPerServer int
	// MatchLengthWeight (prefix-cache-scorer matchLengthWeight, in [0,1]):
	// the share of the score given to the matched length rather than the
	// matched fraction; 0 by default.
	MatchLengthWeight float64
	// MatchLengthScaleTokens (prefix-cache-scorer matchLengthScaleTokens):
	// the matched length that counts fully; <= 0 means 8192.
	MatchLengthScaleTokens int
}

// llm-d's defaults for the approximate prefix index.
const (
	DefaultLLMDPrefixBlockSizeTokens        = 16
	MinLLMDPrefixBlockSizeTokens            = 64
	DefaultLLMDMaxPrefixBlocksToMatch       = 2048
	DefaultLLMDMaxPrefixTokensToMatch       = 131072
	DefaultLLMDLRUCapacityPerServer         = 31250
	DefaultLLMDMatchLengthScaleTokens       = 8192
	defaultEngineBlockSize            int64 = 16
)

// AutoTuneInEffect is autoTune as llm-d reads it.
func (p *LLMDPrefixParams) AutoTuneInEffect() bool { return p.AutoTune == nil || *p.AutoTune }

// BlockSizeTokensInEffect is the configured blockSizeTokens (before
// auto-tuning and the 64-token floor).
func (p *LLMDPrefixParams) BlockSizeTokensInEffect() int {
	if p.BlockSizeTokens <= 0 {
		return DefaultLLMDPrefixBlockSizeTokens
	}
	return p.BlockSizeTokens
}

// MaxPrefixBlocksInEffect is maxPrefixBlocksToMatch as configured.
func (p *LLMDPrefixParams) MaxPrefixBlocksInEffect() int {
	if p.MaxPrefixBlocksToMatch == nil {
		return DefaultLLMDMaxPrefixBlocksToMatch
	}
	return *p.MaxPrefixBlocksToMatch
}

// MaxPrefixTokensInEffect is maxPrefixTokensToMatch as configured.
func (p *LLMDPrefixParams) MaxPrefixTokensInEffect() int {
	if p.MaxPrefixTokensToMatch == nil {
		return DefaultLLMDMaxPrefixTokensToMatch
	}
	return *p.MaxPrefixTokensToMatch
}

// LRUCapacityInEffect is lruCapacityPerServer as configured.
func (p *LLMDPrefixParams) LRUCapacityInEffect() int {
	if p.LRUCapacityPerServer <= 0 {
		return DefaultLLMDLRUCapacityPerServer
	}
	return p.LRUCapacityPerServer
}

// MatchLengthScaleInEffect is matchLengthScaleTokens as configured.
func (p *LLMDPrefixParams) MatchLengthScaleInEffect() int {
	if p.MatchLengthScaleTokens <= 0 {
		return DefaultLLMDMatchLengthScaleTokens
	}
	return p.MatchLengthScaleTokens
}

// llmdPrefixIndex is llm-d's approximate prefix index (the
// approx-prefix-cache-producer) as of ebab68792:
//
//   - A prompt of L tokens is cut into ceil(L/B) blocks of B tokens, the
//     last one partial, of which the first maxBlocks are hashed, each hash
//     chained to the previous (so a block's hash names the whole prefix up
//     to it). B is the engine's block size when auto-tuned, else
//     blockSizeTokens, and at least 64; maxBlocks is
//     floor(maxPrefixTokensToMatch / B) when that is > 0 (0 blocks when
//     the cap is below B: nothing is hashed), else maxPrefixBlocksToMatch
//     (0: all).
//   - Matching walks the hashes in order and stops at the first block no
//     instance holds; each instance counts the walked blocks it holds (not
//     only a leading run of its own). Total is the number of hashes.
//   - After the decision, all the request's hashes are added in order to
//     the chosen instance's LRU (capacity: the engine's GPU block count when
//     auto-tuned, else lruCapacityPerServer); adding a held hash makes it
//     the most recent, adding to a full LRU evicts the least recent.
//
// Differences, because the simulator has no token ids: a block's hash is
// the simulator's chained hash of the KV block holding its last token,
// mixed with the block's index and length, so two prompts share a block
// exactly when they share the KV block holding its last token (which, in
// the simulator, holds the same tokens up to there); llm-d updates its
// index asynchronously after the response headers, the simulator at the
// routing decision.
type llmdPrefixIndex struct {
	block     int // B, tokens per hashed block
	engine    int // the engine's tokens per KV block
	maxBlocks int // hashes per request at most (< 0: all)
	lrus      []keyLRU

	decided *simcore.Request // request whose keys and matches are below, until Observe
	keys    []uint64
	sim     []uint64 // scratch: the engine's block hashes
	matched []int32  // per instance
	any     bool     // some instance matched a block
}

func newLLMDPrefixIndex(cfg *Config, instances int) *llmdPrefixIndex {
	p := &cfg.LLMD.Prefix
	engine := cfg.KVBlockSize
	if engine <= 0 {
		engine = defaultEngineBlockSize
	}
	block, capacity := p.BlockSizeTokensInEffect(), p.LRUCapacityInEffect()
	if p.AutoTuneInEffect() {
		block = int(engine)
		if cfg.KVBlocksPerInstance > 0 {
			capacity = int(cfg.KVBlocksPerInstance)
		}
	}
	block = max(block, MinLLMDPrefixBlockSizeTokens)
	maxBlocks := p.MaxPrefixBlocksInEffect()
	if maxBlocks == 0 {
		maxBlocks = -1
	}
	if t := p.MaxPrefixTokensInEffect(); t > 0 {
		maxBlocks = t / block
	}
	x := &llmdPrefixIndex{block: block, engine: int(engine), maxBlocks: maxBlocks,
		lrus: make([]keyLRU, instances), matched: make([]int32, instances)}
	for i := range x.lrus {
		x.lrus[i] = newKeyLRU(capacity)
	}
	return x
}

// prepare hashes r's blocks and matches them, once per decision.
func (x *llmdPrefixIndex) prepare(r *simcore.Request) {
	if x.decided == r {
		return
	}
	x.decided = r
	x.keys = x.keys[:0]
	clear(x.matched)
	x.any = false
	L := int(r.InputLen)
	if L <= 0 {
		return
	}
	n := (L + x.block - 1) / x.block
	if x.maxBlocks >= 0 {
		n = min(n, x.maxBlocks)
	}
	if n == 0 {
		return
	}
	lastTok := min(n*x.block, L) - 1
	x.sim = r.Content.AppendHashes(x.sim[:0], lastTok/x.engine+1)
	for j := range n {
		end := min((j+1)*x.block, L)
		h := x.sim[(end-1)/x.engine]
		x.keys = append(x.keys, mix.Splitmix64(h^uint64(j+1)*0x9e3779b97f4a7c15^uint64(end-j*x.block)*0xd1b54a32d192ed03)|1)
	}
	for _, k := range x.keys {
		held := false
		for i := range x.lrus {
			if x.lrus[i].has(k) {
				x.matched[i]++
				held = true
			}
		}
		if !held {
			break
		}
		x.any = true
	}
}

// anyMatch reports whether some instance holds r's first block.
func (x *llmdPrefixIndex) anyMatch(r *simcore.Request) bool {
	x.prepare(r)
	return x.any
}

// Observe adds r's hashes, in order, to the chosen instance's LRU.
func (x *llmdPrefixIndex) Observe(r *simcore.Request, chosen int) {
	x.prepare(r)
	for _, k := range x.keys {
		x.lrus[chosen].touch(k)
	}
	x.decided = nil
}

// llmdPrefixScorer is llm-d's prefix-cache-scorer over the approximate
// index: with m matched of n blocks, (1 − w)·m/n + w·min(1, m·B/S)², w
// being matchLengthWeight and S matchLengthScaleTokens; 0 when n = 0.
type llmdPrefixScorer struct {
	index        *llmdPrefixIndex
	lengthWeight float64
	lengthScale  float64
}

func (s *llmdPrefixScorer) Score(r *simcore.Request, _ []Snapshot, out []float64) {
	x := s.index
	x.prepare(r)
	n := len(x.keys)
	for i := range out {
		if n == 0 {
			out[i] = 0
			continue
		}
		m := float64(x.matched[i])
		ratio := m / float64(n)
		length := 0.0
		if s.lengthWeight > 0 {
			l := min(1, m*float64(x.block)/s.lengthScale)
			length = l * l
		}
		out[i] = s.lengthWeight*length + (1-s.lengthWeight)*ratio
	}
}
