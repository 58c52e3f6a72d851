package route

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"optimize/simcore"
)

// Scorer rates every instance for a request on one dimension. It writes
// out[i] for snaps[i] (len(out) == len(snaps)); higher is better and values
// are expected in [0,1] (the weighted router clamps them, as BLIS does).
// Score must not allocate: it runs once per request.
type Scorer interface {
	Score(r *simcore.Request, snaps []Snapshot, out []float64)
}

// Observer is implemented by the stateful records scorers read. The
// weighted router calls Observe with the chosen instance after every
// decision, once per record however many scorers read it.
type Observer interface {
	Observe(r *simcore.Request, chosen int)
}

// ScorerWeight is one term of the weighted router's composite score.
type ScorerWeight struct {
	Name   string
	Weight float64
}

// DefaultScorers is the weighted router's profile when none is configured
// (BLIS and llm-d: prefix-affinity:3, queue-depth:2, kv-utilization:2).
func DefaultScorers() []ScorerWeight {
	return []ScorerWeight{
		{Name: "prefix-affinity", Weight: 3},
		{Name: "queue-depth", Weight: 2},
		{Name: "kv-utilization", Weight: 2},
	}
}

// scorerKind is one row of the scorer table: llmd is the llm-d plugin
// type whose arithmetic the scorer follows exactly ("" if none).
type scorerKind struct {
	name  string
	llmd  string
	build func(p *profileParts) Scorer
}

// scorerKinds is the one place where scorer names are defined, sorted.
func scorerKinds() []scorerKind {
	return []scorerKind{
		{"active-request-scorer", "active-request-scorer", func(p *profileParts) Scorer { return newLLMDActiveRequest(&p.cfg.LLMD) }},
		{"kv-cache-utilization-scorer", "kv-cache-utilization-scorer", func(*profileParts) Scorer { return kvUtilization{} }},
		{"kv-pressure", "", func(p *profileParts) Scorer { return newKVPressure(p.cfg, false) }},
		{"kv-pressure-slo", "", func(p *profileParts) Scorer { return newKVPressure(p.cfg, true) }},
		{"kv-utilization", "kv-cache-utilization-scorer", func(*profileParts) Scorer { return kvUtilization{} }},
		{"load-aware-scorer", "load-aware-scorer", func(p *profileParts) Scorer {
			return llmdLoadAware{threshold: float64(p.cfg.LLMD.LoadAwareThresholdInEffect())}
		}},
		{"load-balance", "", func(*profileParts) Scorer { return loadBalance{} }},
		{"no-hit-lru-scorer", "no-hit-lru-scorer", func(p *profileParts) Scorer {
			// llm-d's loader gives no-hit-lru-scorer the approximate prefix
			// producer it consumes when the config has none, so it always
			// reads the index.
			return p.observed(newLLMDNoHitLRU(p.approxPrefix(), p.cfg.LLMD.NoHitLRUSizeInEffect(), p.instances))
		}},
		{"precise-prefix", "precise-prefix-cache-scorer", func(p *profileParts) Scorer { return newPrecisePrefix(p.kvMirror(), &p.blocks, p.instances) }},
		{"precise-prefix-cache-scorer", "precise-prefix-cache-scorer", func(p *profileParts) Scorer {
			return newPrecisePrefix(p.kvMirror(), &p.blocks, p.instances)
		}},
		{"prefix-affinity", "", func(p *profileParts) Scorer { return p.prefixRecord() }},
		{"prefix-cache-scorer", "prefix-cache-scorer", func(p *profileParts) Scorer {
			pp := &p.cfg.LLMD.Prefix
			return &llmdPrefixScorer{index: p.approxPrefix(), lengthWeight: pp.MatchLengthWeight, lengthScale: float64(pp.MatchLengthScaleInEffect())}
		}},
		{"queue-depth", "", func(*profileParts) Scorer { return queueDepth{} }},
		{"queue-scorer", "queue-scorer", func(*profileParts) Scorer { return llmdQueue{} }},
		{"running-requests-size-scorer", "running-requests-size-scorer", func(*profileParts) Scorer { return llmdRunningRequests{} }},
		{"session-affinity", "session-affinity-scorer", func(p *profileParts) Scorer { return p.observed(newSessionAffinity(SessionAffinityCapacity)) }},
		{"session-affinity-scorer", "session-affinity-scorer", func(p *profileParts) Scorer {
			return p.observed(newSessionAffinity(SessionAffinityCapacity))
		}},
		{"slo-priority", "", func(p *profileParts) Scorer { return newSLOPriority(p.cfg, p.prefixRecord(), p.instances) }},
		{"token-load", "", func(p *profileParts) Scorer { return newTokenLoad(p.cfg) }},
	}
}

// LLMDPluginType is the llm-d Router plugin type whose arithmetic scorer
// follows exactly, "" if none (or scorer is unknown).
func LLMDPluginType(scorer string) string {
	k, _ := findScorer(scorer)
	return k.llmd
}

// profileParts builds one profile's scorers and owns the state they share:
// one prefix-affinity record and one KV-event mirror, each created on first
// use, so that two scorers reading the same record see (and update) one,
// and the request's block hashes, which both prefix scorers look up.
type profileParts struct {
	cfg       *Config
	instances int
	affinity  *prefixAffinity
	mirror    *kvMirror
	// llmdPrefix is llm-d's approximate prefix index, which
	// prefix-cache-scorer reads and no-hit-lru-scorer asks.
	llmdPrefix *llmdPrefixIndex
	blocks     requestBlocks
	observers  []Observer // the records, in creation order
}

func (p *profileParts) prefixRecord() *prefixAffinity {
	if p.affinity == nil {
		p.affinity = newPrefixAffinity(&p.blocks, p.instances, p.cfg.prefixCapacity())
		p.observers = append(p.observers, p.affinity)
	} else {
		// A second reader: remember the scores until the decision is
		// observed, so the record is matched once per request.
		p.affinity.memoise = true
	}
	return p.affinity
}

// observed adds a scorer that keeps a record of its own to the observers.
func (p *profileParts) observed(s interface {
	Scorer
	Observer
}) Scorer {
	p.observers = append(p.observers, s)
	return s
}

func (p *profileParts) approxPrefix() *llmdPrefixIndex {
	if p.llmdPrefix == nil {
		p.llmdPrefix = newLLMDPrefixIndex(p.cfg, p.instances)
		p.observers = append(p.observers, p.llmdPrefix)
	}
	return p.llmdPrefix
}

func (p *profileParts) kvMirror() *kvMirror {
	if p.mirror == nil {
		p.mirror = newKVMirror(p.instances, p.cfg.CacheSignalDelay)
		if p.cfg.CacheSignalDelay > 0 {
			p.mirror.copied = p.cfg.CacheCopied
		}
	}
	return p.mirror
}

// ScorerNames lists the accepted scorer names, sorted.
func ScorerNames() []string {
	kinds := scorerKinds()
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.name
	}
	return names
}

func findScorer(name string) (scorerKind, bool) {
	for _, k := range scorerKinds() {
		if k.name == name {
			return k, true
		}
	}
	return scorerKind{}, false
}

// ParseScorers reads "name:weight,name:weight". An empty string yields nil,
// which the weighted router takes as DefaultScorers.
func ParseScorers(s string) ([]ScorerWeight, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	out := make([]ScorerWeight, 0, len(parts))
	for _, part := range parts {
		name, weight, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok {
			return nil, fmt.Errorf("malformed scorer %q: want name:weight, e.g. queue-depth:2", strings.TrimSpace(part))
		}
		name = strings.TrimSpace(name)
		if _, ok := findScorer(name); !ok {
			return nil, unknownScorer(name)
		}
		w, err := strconv.ParseFloat(strings.TrimSpace(weight), 64)
		if err != nil {
			return nil, fmt.Errorf("scorer %q: weight %q is not a number", name, strings.TrimSpace(weight))
		}
		out = append(out, ScorerWeight{Name: name, Weight: w})
	}
	if err := validateScorers(out); err != nil {
		return nil, err
	}
	return out, nil
}

// validateScorers applies BLIS's rules: known names, each at most once,
// weights finite and > 0.
func validateScorers(list []ScorerWeight) error {
	total := 0.0
	for i, sw := range list {
		if _, ok := findScorer(sw.Name); !ok {
			return unknownScorer(sw.Name)
		}
		for _, earlier := range list[:i] {
			if earlier.Name == sw.Name {
				return fmt.Errorf("duplicate scorer %q: each scorer may appear at most once", sw.Name)
			}
		}
		if !(sw.Weight > 0) || math.IsInf(sw.Weight, 0) {
			return fmt.Errorf("scorer %q: weight %v must be a finite number > 0", sw.Name, sw.Weight)
		}
		total += sw.Weight
	}
	if math.IsInf(total, 0) {
		return fmt.Errorf("scorer weights sum to +Inf: scale them down")
	}
	return nil
}

func unknownScorer(name string) error {
	return fmt.Errorf("unknown scorer %q (allowed: %s)", name, strings.Join(ScorerNames(), ", "))
}

// queueDepth is min-max normalised EffectiveLoad: the least loaded instance
// scores 1, the most loaded 0, all 1 when loads are equal. It is sharp on
// purpose (BLIS/llm-d): loads 10 and 11 score 1 and 0.
type queueDepth struct{}

func (queueDepth) Score(_ *simcore.Request, snaps []Snapshot, out []float64) {
	// BLIS starts max at 0; loads are never negative, so this is the max.
	minLoad, maxLoad := int64(math.MaxInt64), int64(0)
	for i := range snaps {
		load := snaps[i].EffectiveLoad()
		minLoad = min(minLoad, load)
		maxLoad = max(maxLoad, load)
	}
	for i := range snaps {
		if maxLoad == minLoad {
			out[i] = 1
		} else {
			out[i] = float64(maxLoad-snaps[i].EffectiveLoad()) / float64(maxLoad-minLoad)
		}
	}
}

// kvUtilization prefers instances with free GPU KV: 1 - KVUtilization.
type kvUtilization struct{}

func (kvUtilization) Score(_ *simcore.Request, snaps []Snapshot, out []float64) {
	for i := range snaps {
		out[i] = 1 - snaps[i].KVUtilization
	}
}

// loadBalance is 1/(1+EffectiveLoad): unlike queueDepth it keeps absolute
// load differences.
type loadBalance struct{}

func (loadBalance) Score(_ *simcore.Request, snaps []Snapshot, out []float64) {
	for i := range snaps {
		out[i] = 1 / (1 + float64(snaps[i].EffectiveLoad()))
	}
}

// prefixAffinity scores the share of the request's full blocks, counted
// from the first, that the router has already sent to each instance. It
// consults the router's own record (written at routing time), not the real
// KV caches: BLIS's approximation.
type prefixAffinity struct {
	index *prefixIndex
	leadingRun
	// matchedFor is the request the index last matched, until Observe: if
	// Observe gets the same request (unchanged, as within a routing
	// decision), the entries that match found serve record too.
	matchedFor *simcore.Request

	// With two readers (prefix-affinity and slo-priority) the first Score
	// of a decision fills scores and the second copies it; Observe ends
	// the decision. Only the weighted router, which always observes, sets
	// memoise.
	memoise bool
	scored  bool
	scores  []float64
}

func newPrefixAffinity(blocks *requestBlocks, instances, capacity int) *prefixAffinity {
	return &prefixAffinity{
		index:      newPrefixIndex(instances, capacity),
		leadingRun: newLeadingRun(blocks, instances),
		scores:     make([]float64, instances),
	}
}

func (p *prefixAffinity) Score(r *simcore.Request, snaps []Snapshot, out []float64) {
	if p.memoise && p.scored {
		copy(out, p.scores[:len(out)])
		return
	}
	p.scoreInto(r, out)
	if p.memoise {
		copy(p.scores, out)
		p.scored = true
	}
}

// prefixMatcher counts, per instance, the leading blocks of r it holds;
// blocks has r's block hashes for a matcher that needs them.
type prefixMatcher interface {
	matchRequest(r *simcore.Request, blocks *requestBlocks, matched []int32)
}

func (x *prefixIndex) matchRequest(r *simcore.Request, _ *requestBlocks, matched []int32) {
	x.match(seqOf(&r.Content), matched)
}

// leadingRun scores instances by the share of a request's input blocks
// in the leading run an index holds (prefix-affinity's router record,
// precise-prefix's mirror of the real caches).
type leadingRun struct {
	matched []int32        // scratch, one per instance
	blocks  *requestBlocks // the profile's, shared by its prefix scorers
}

func newLeadingRun(blocks *requestBlocks, instances int) leadingRun {
	if blocks == nil {
		blocks = new(requestBlocks) // a scorer of its own (tests)
	}
	return leadingRun{matched: make([]int32, instances), blocks: blocks}
}

// score reports whether it matched r's blocks against the index (it does
// not when r has no full input block).
func (l *leadingRun) score(r *simcore.Request, index prefixMatcher, out []float64) bool {
	total := int(r.Content.Input)
	if total == 0 {
		clear(out)
		return false
	}
	index.matchRequest(r, l.blocks, l.matched)
	for i := range out {
		out[i] = float64(l.matched[i]) / float64(total)
	}
	return true
}

func (p *prefixAffinity) scoreInto(r *simcore.Request, out []float64) {
	p.matchedFor = nil
	if p.score(r, p.index, out) {
		p.matchedFor = r
	}
}

// Observe records all of the request's input blocks, shared prefix and
// unique suffix alike, for the chosen instance.
func (p *prefixAffinity) Observe(r *simcore.Request, chosen int) {
	p.scored = false
	hinted := p.matchedFor == r
	p.matchedFor = nil
	seq := seqOf(&r.Content)
	p.index.record(seq, int(r.Content.Input)-seq.end, chosen, hinted)
}

// requestBlocks holds the hashes of a request's shareable input blocks,
// the keys the prefix scorers look up and the prefix-affinity record
// records. Private blocks are in no index (no other request can hold
// them): a leading run ends before them. Within a routing decision, which
// the weighted router brackets with begin and end, they are computed
// once however many scorers read them; outside one, every read computes
// them afresh.
type requestBlocks struct {
	decision *simcore.Request // the request being routed, nil between decisions
	valid    bool             // hashes are decision's
	hashes   []uint64
}

func (b *requestBlocks) begin(r *simcore.Request) { b.decision, b.valid = r, false }

func (b *requestBlocks) end() { b.decision, b.valid = nil, false }

// of returns r's shareable input block hashes, valid until the next call.
func (b *requestBlocks) of(r *simcore.Request) []uint64 {
	if b.valid && r == b.decision {
		return b.hashes
	}
	c := &r.Content
	b.hashes = c.AppendHashes(b.hashes[:0], min(int(c.Input), int(c.Shared)))
	b.valid = r == b.decision
	return b.hashes
}
