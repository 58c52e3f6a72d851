// Package kv models an instance's paged GPU KV cache the way vLLM and BLIS
// do: fixed-size token blocks, prefix caching by chained block hashes
// (longest leading run of full blocks), reference counts, and an LRU free
// list whose idle blocks keep their hashes until they are reused.
//
// Requests are described by their block contents only (no token ids), and
// blocks live in a table indexed by block id, grown in fixed chunks on
// first use; block lists are pooled, so allocation and release allocate no
// memory once the cache and its stream records have grown.
package kv

import (
	"fmt"

	"optimize/simcore/internal/u64map"
)

const none = -1

// Seq is the KV state of one request: the blocks it holds, in sequence
// order, and how many of its tokens they store. Prev keeps the blocks of
// its last attempt after a release, so that a preempted request can find
// its private blocks again without a prefix-index entry. The zero value is
// empty.
type Seq struct {
	Tokens int32
	stream int32 // hint: the stream-index record of its content
	IDs    []int32
	Prev   []int32
}

// Cache is one instance's GPU block pool.
type Cache struct {
	blockSize int64
	total     int64
	used      int64

	blocks     blockTable
	head, tail int32 // free list of blocks released at least once, LRU first
	// fresh is the first never-used block. BLIS's free
	// list starts with every block in id order and appends released ones,
	// so the never-used blocks always come first: they need no list links,
	// and blocks grows as they are first used, so that a short run does
	// not pay for zeroing 132k blocks per instance.
	fresh int32

	index   *u64map.Map // prefix blocks: hash → block id (the newest registered)
	streams streamIndex // stream blocks: (UID, k) → block id, likewise

	hits, misses int64
	scratch      []int32
	lists        [][]int32 // spare block-id lists for requests being admitted

	tier    *cpuTier // CPU offload tier, nil when single-tier
	clock   int64    // current time, for offload stamps
	pending int64    // reload µs not yet charged to a step
	// observe, when set, hears every change of the prefix index: the
	// precise-prefix router's KV events.
	observe func(hash uint64, stored bool)
}

// block keeps everything a block operation touches in one cache line.
type block struct {
	hash       uint64 // content hash of a full, hashed block; 0 = none
	refs       int32
	prev, next int32 // free-list links
	// For an indexed stream block: its stream record and sequence index;
	// stream is none for an indexed prefix block.
	stream, k int32
	indexed   bool // hash is in the prefix index (a shareable block)
}

// New returns a cache of total blocks of blockSize tokens, all free.
func New(total, blockSize int64) (*Cache, error) {
	if total <= 0 {
		return nil, fmt.Errorf("total KV blocks must be > 0, got %d", total)
	}
	if total > 1<<31-1 {
		return nil, fmt.Errorf("total KV blocks must be < 2^31, got %d", total)
	}
	if blockSize <= 0 {
		return nil, fmt.Errorf("block size must be > 0 tokens, got %d", blockSize)
	}
	c := &Cache{
		blockSize: blockSize,
		total:     total,
		index:     u64map.New(1024),
		streams:   newStreamIndex(),
		head:      none,
		tail:      none,
	}

	return c, nil
}

// BlockSize returns tokens per block.
func (c *Cache) BlockSize() int64 { return c.blockSize }

// Total returns the number of GPU blocks.
func (c *Cache) Total() int64 { return c.total }

// Used returns blocks referenced by at least one request.
func (c *Cache) Used() int64 { return c.used }

// Free returns blocks not referenced by any request (cached or empty).
func (c *Cache) Free() int64 { return c.total - c.used }

// Utilization is used/total.
func (c *Cache) Utilization() float64 { return float64(c.used) / float64(c.total) }

// HitRate is cached blocks reused / all blocks committed, cumulative.
func (c *Cache) HitRate() float64 {
	if t := c.hits + c.misses; t > 0 {
		return float64(c.hits) / float64(t)
	}
	return 0
}

// Counters returns the cumulative prefix hits and misses in blocks.
func (c *Cache) Counters() (hits, misses int64) { return c.hits, c.misses }

// Lookup returns the ids of the longest run of leading input blocks whose
// hashes are cached: the first shared ones through the prefix index, the
// private ones among the blocks s held in its last attempt. The slice is
// scratch space valid until the next call.
func (c *Cache) Lookup(s *Seq, content *Content) []int32 {
	out := c.scratch[:0]
	stream := int32(none)
	for k := 0; k < int(content.Input); k++ {
		if k < int(content.Shared) {
			id := c.indexed(s, content, k, &stream)
			if id == none {
				break
			}
			out = append(out, id)
			continue
		}
		// A private hash lives on at most one block: the one s filled.
		if k >= len(s.Prev) || c.blocks.at(s.Prev[k]).hash != content.Hash(k) {
			break
		}
		out = append(out, s.Prev[k])
	}
	c.scratch = out
	return out
}

// indexed returns the block the prefix index names for shareable block k
// of content, or none; *stream caches the stream record across calls for
// one content (none = not looked up yet).
func (c *Cache) indexed(s *Seq, content *Content, k int, stream *int32) int32 {
	if k < len(content.Prefix) {
		if id, ok := c.index.Get(content.Prefix[k]); ok {
			return id
		}
		return none
	}
	if *stream == none {
		if *stream = c.streams.find(&s.stream, content.UID); *stream == none {
			return none
		}
	}
	return c.streams.get(*stream, k)
}

// Contains reports whether shareable block k of content is cached on the
// GPU.
func (c *Cache) Contains(content *Content, k int) bool {
	stream := int32(none)
	return c.indexed(&Seq{}, content, k, &stream) != none
}

// Need returns how many free blocks storing n more tokens of s takes
// (cached blocks committed at admission aside): what Allocate and
// AppendToken check.
func (c *Cache) Need(s *Seq, n int64) int64 {
	spare := int64(len(s.IDs))*c.blockSize - int64(s.Tokens)
	if n -= spare; n <= 0 {
		return 0
	}
	return (n + c.blockSize - 1) / c.blockSize
}

// Allocate stores n more tokens of a request with the given content.
// cached are leading blocks found by Lookup; they are committed only for a
// request that holds no block yet and has at least one token to store
// (BLIS commits them inside its token loop). It is check-then-act: on
// failure nothing changes except what BLIS's rollback also changes
// (committed idle cached blocks move to the LRU tail).
func (c *Cache) Allocate(s *Seq, content *Content, cached []int32, n int64) bool {
	return c.AllocateReload(s, content, cached, 0, n)
}

// AllocateReload is Allocate for a request whose prefix continues, after
// the cached blocks, with reload blocks on the CPU tier (CPUPrefix): they
// are brought back into fresh GPU blocks, each adding its transfer time to
// the step, before the n new tokens are stored.
func (c *Cache) AllocateReload(s *Seq, content *Content, cached []int32, reload int, n int64) bool {
	if n <= 0 {
		return true
	}
	if len(s.IDs) > 0 {
		cached, reload = nil, 0
	}
	if s.IDs == nil {
		s.IDs = c.takeList()
	}
	need := c.Need(s, n) // committed cached blocks are full: no spare
	if need > c.Free() {
		return false
	}
	idleCached := int64(0)
	for _, id := range cached {
		if c.blocks.at(id).refs == 0 {
			idleCached++
		}
	}
	if need+idleCached+int64(reload) > c.Free() {
		// BLIS commits the cached blocks, runs out while popping, and rolls
		// back: the idle cached blocks end up at the free-list tail.
		for _, id := range cached {
			if c.blocks.at(id).refs == 0 {
				c.unlink(id)
				c.pushTail(id)
			}
		}
		return false
	}
	for _, id := range cached {
		if c.blocks.at(id).refs == 0 {
			c.unlink(id)
			c.used++
		}
		c.blocks.at(id).refs++
		c.hits++
		s.IDs = append(s.IDs, id)
		s.Tokens += int32(c.blockSize)
	}
	for k := len(cached); k < len(cached)+reload; k++ {
		c.reload(s, content, k)
	}
	c.store(s, content, n)
	return true
}

// InBlockRoom returns how many decode tokens in a row AppendInBlock can
// still store for s: the tokens before the one that completes its last
// block (or needs a new one).
func (c *Cache) InBlockRoom(s *Seq) int64 {
	return max(0, int64(len(s.IDs))*c.blockSize-1-int64(s.Tokens))
}

// AppendInBlock stores one more token when it neither needs a new block
// nor completes the last one (15 of 16 decode steps), and reports whether
// it did; small enough to inline into the batch loop. Otherwise the caller
// takes AppendToken.
func (c *Cache) AppendInBlock(s *Seq) bool {
	if int64(s.Tokens)+1 < int64(len(s.IDs))*c.blockSize {
		s.Tokens++
		return true
	}
	return false
}

// AppendToken stores one more token (decode). It may need one new block.
func (c *Cache) AppendToken(s *Seq, content *Content) bool {
	if int64(s.Tokens) < int64(len(s.IDs))*c.blockSize {
		// Room in the last block: the common decode step.
		s.Tokens++
		if int64(s.Tokens)%c.blockSize == 0 {
			c.register(s, s.IDs[len(s.IDs)-1], content, int64(s.Tokens)/c.blockSize-1)
		}
		return true
	}
	if c.used == c.total {
		return false
	}
	c.store(s, content, 1)
	return true
}

// store writes n tokens, filling the last partial block first; capacity
// has been checked. A block that becomes full gets its content hash.
func (c *Cache) store(s *Seq, content *Content, n int64) {
	bs := c.blockSize
	if spare := int64(len(s.IDs))*bs - int64(s.Tokens); spare > 0 {
		k := min(spare, n)
		s.Tokens += int32(k)
		n -= k
		if int64(s.Tokens)%bs == 0 {
			c.register(s, s.IDs[len(s.IDs)-1], content, int64(s.Tokens)/bs-1)
		}
	}
	if s.IDs == nil {
		s.IDs = c.takeList()
	}
	for n > 0 {
		id := c.pop()
		c.blocks.at(id).refs = 1
		c.used++
		c.misses++
		s.IDs = append(s.IDs, id)
		k := min(bs, n)
		s.Tokens += int32(k)
		n -= k
		if k == bs {
			c.register(s, id, content, int64(len(s.IDs)-1))
		}
	}
}

// register gives block id the hash of sequence block k, if any; only a
// shareable block enters the prefix index.
func (c *Cache) register(s *Seq, id int32, content *Content, k int64) {
	if k >= int64(content.Total) {
		return
	}
	b := c.blocks.at(id)
	b.hash = content.Hash(int(k))
	if b.indexed = k < int64(content.Shared); b.indexed {
		if k < int64(len(content.Prefix)) {
			c.index.Set(b.hash, id)
			b.stream = none
		} else {
			b.stream, b.k = c.streams.set(&s.stream, content, int(k), id), int32(k)
		}
		if c.observe != nil {
			c.observe(b.hash, true)
		}
	}
}

// forget clears block b's content: its prefix-index entry goes, even when
// a newer duplicate owns it, as in BLIS.
func (c *Cache) forget(b *block) {
	if b.indexed {
		if b.stream == none {
			c.index.Delete(b.hash)
		} else {
			c.streams.evict(b.stream, b.k)
		}
		if c.observe != nil {
			c.observe(b.hash, false)
		}
	}
	b.hash, b.indexed = 0, false
}

// Observe makes fn hear every prefix-index change (nil stops it).
func (c *Cache) Observe(fn func(hash uint64, stored bool)) { c.observe = fn }

// Release drops the request's references, last block first, so that a
// request's later (less shared) blocks are evicted before its earlier ones.
func (c *Cache) Release(s *Seq) {
	for i := len(s.IDs) - 1; i >= 0; i-- {
		id := s.IDs[i]
		b := c.blocks.at(id)
		if b.refs--; b.refs == 0 {
			c.used--
			c.pushTail(id)
		}
	}
	if c.tier != nil {
		c.afterRelease(s.IDs)
	}
	s.IDs, s.Prev, s.Tokens = s.Prev[:0], s.IDs, 0
}

// Retire releases a finished request's blocks and takes back its block
// lists, so that only running requests hold list memory (a million queued
// requests must not each keep one).
func (c *Cache) Retire(s *Seq) {
	c.Release(s)
	for _, l := range [][]int32{s.IDs, s.Prev} {
		if cap(l) > 0 {
			c.lists = append(c.lists, l[:0])
		}
	}
	s.IDs, s.Prev = nil, nil
}

func (c *Cache) takeList() []int32 {
	if n := len(c.lists); n > 0 {
		l := c.lists[n-1]
		c.lists = c.lists[:n-1]
		return l
	}
	return make([]int32, 0, 64)
}

// pop takes the least recently released free block, evicting its hash.
func (c *Cache) pop() int32 {
	if c.fresh < int32(c.total) {
		c.blocks.grow(c.fresh)
		c.fresh++
		return c.fresh - 1
	}
	id := c.head
	c.unlink(id)
	if b := c.blocks.at(id); b.hash != 0 {
		c.forget(b)
	}
	return id
}

func (c *Cache) pushTail(id int32) {
	b := c.blocks.at(id)
	b.prev, b.next = c.tail, none
	if c.tail != none {
		c.blocks.at(c.tail).next = id
	} else {
		c.head = id
	}
	c.tail = id
}

func (c *Cache) unlink(id int32) {
	b := c.blocks.at(id)
	p, n := b.prev, b.next
	if p != none {
		c.blocks.at(p).next = n
	} else {
		c.head = n
	}
	if n != none {
		c.blocks.at(n).prev = p
	} else {
		c.tail = p
	}
	b.prev, b.next = none, none
}

// blockTable holds blocks in fixed chunks allocated on first use: a short
// run touches only the blocks it needs, and growing never copies.
type blockTable struct {
	chunks [][]block
}

const chunkBits = 12 // 4096 blocks (128 KiB) per chunk

func (t *blockTable) at(id int32) *block {
	return &t.chunks[id>>chunkBits][id&(1<<chunkBits-1)]
}

// grow makes block id usable (ids are handed out in order).
func (t *blockTable) grow(id int32) {
	if int(id>>chunkBits) == len(t.chunks) {
		t.chunks = append(t.chunks, make([]block, 1<<chunkBits))
	}
}
