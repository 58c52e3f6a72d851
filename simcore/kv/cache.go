// Package kv models an instance's paged GPU KV cache the way vLLM and BLIS
// do: fixed-size token blocks, prefix caching by chained block hashes
// (longest leading run of full blocks), reference counts, and an LRU free
// list whose idle blocks keep their hashes until they are reused.
//
// Requests are described by their block contents only (no token ids).
// Block state is kept per copy (copies.go), a request's blocks of one
// content in sequence order, and the free list is a list of runs of such
// blocks; so a request's work is sequential in memory, and allocation and
// release allocate nothing once the cache has grown.
package kv

import (
	"fmt"
	"unsafe"

	"optimize/simcore/internal/slicetab"
	"optimize/simcore/internal/u64map"
)

const none = -1

// Seq is the KV state of one request: the blocks it holds, in sequence
// order, and how many of its tokens they store. After a release, until it
// holds blocks again, its span list is its last attempt's, so that a
// preempted request can find its private blocks again without a
// prefix-index entry. The zero value is empty.
type Seq struct {
	Tokens int32 // tokens stored
	Blocks int32 // blocks held
	// own is 1 + the copy the request is filling, 0 if none: its last
	// span, the only one that grows. A decode step reaches the copy from
	// here without reading the span list; the last span's length is
	// settled (Blocks − lo) only when the list is read.
	own int32
	// lazyFrom: once it holds this many blocks (0 = never), a block it
	// completes while decoding may register at its next visit
	// (DecodeRoom). Set from its content when it allocates.
	lazyFrom int32
	spans    []span
}

// SeqHotBytes is how far into a Seq the fields a decode step reads go.
const SeqHotBytes = unsafe.Offsetof(Seq{}.lazyFrom) + unsafe.Sizeof(Seq{}.lazyFrom)

// settle brings the length of the span s is filling up to date.
func (s *Seq) settle() {
	if s.own != 0 {
		last := &s.spans[len(s.spans)-1]
		last.n = s.Blocks - last.lo
	}
}

// span is blocks [lo, lo+n) of a copy, as one request holds them.
type span struct {
	copy  int32
	gen   uint32 // the copy's generation when the span was taken
	lo, n int32
}

// Cache is one instance's GPU block pool.
type Cache struct {
	blockSize int64
	total     int64
	used      int64
	unused    int64 // never-used blocks: BLIS's free list starts with them

	copies     []copyRec
	freeCopies []int32
	chunks     [][]blk   // the copies' block states (copies.go)
	next       int       // the first slot no region has taken
	spare      [][]int32 // regions of recycled copies, by power-of-two class
	prefixes   slicetab.Table
	runs       []run // free list, LRU first
	freeRuns   []int32
	head, tail int32

	index *u64map.Map // prefix blocks: hash → copy (the newest registered)
	// indexEpoch counts the changes of index; memo answers Lookup's prefix
	// part while it stays the same.
	indexEpoch uint64
	memo       lookupMemo
	streams    streamIndex // stream blocks: (UID, k) → copy, likewise

	hits, misses int64
	hit          []span    // Lookup's result
	lists        [][]span  // spare span lists
	released     []blockAt // scratch: a release's blocks, for the CPU tier

	tiering
	// observe, when set, hears every change of the prefix index: the
	// precise-prefix router's KV events.
	observe func(hash uint64, stored bool)
	// checkThenAct: a failed allocation changes nothing at all (vLLM's
	// pre-check, BLIS's August 2026 era); otherwise the idle cached blocks
	// it would have committed move to the LRU tail, as BLIS's earlier
	// rollback left them.
	checkThenAct bool
}

// CheckThenAct makes a failed allocation leave the free list's order
// alone (see Cache.checkThenAct).
func (c *Cache) CheckThenAct() { c.checkThenAct = true }

type blockAt struct{ copy, k int32 }

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
	return &Cache{
		blockSize: blockSize,
		total:     total,
		unused:    total,
		// Prefix blocks only (stream blocks have their own index): a
		// shared prompt's few dozen, as a rule. A 2,048-slot table zeroed
		// per instance and run was a tenth of a short run's allocations;
		// the table grows as keys come.
		index:   u64map.New(64),
		streams: newStreamIndex(),
		head:    none,
		tail:    none,
	}, nil
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

// Need returns how many free blocks storing n more tokens of s takes
// (cached blocks committed at admission aside): what Allocate and
// AppendToken check.
func (c *Cache) Need(s *Seq, n int64) int64 {
	spare := int64(s.Blocks)*c.blockSize - int64(s.Tokens)
	if n -= spare; n <= 0 {
		return 0
	}
	return (n + c.blockSize - 1) / c.blockSize
}

// Allocate stores n more tokens of a request with the given content.
// cached are leading blocks found by Lookup; they are committed only for a
// request that holds no block yet and has at least one token to store
// (BLIS commits them inside its token loop). It is check-then-act: on
// failure nothing changes except, unless CheckThenAct was called, what
// BLIS's earlier rollback also changed (committed idle cached blocks move
// to the LRU tail).
func (c *Cache) Allocate(s *Seq, content *Content, cached Hit, n int64) bool {
	return c.AllocateReload(s, content, cached, 0, n)
}

// AllocateReload is Allocate for a request whose prefix continues, after
// the cached blocks, with reload blocks on the CPU tier (CPUPrefix): they
// are brought back into fresh GPU blocks, each adding its transfer time to
// the step, before the n new tokens are stored.
func (c *Cache) AllocateReload(s *Seq, content *Content, cached Hit, reload int, n int64) bool {
	if n <= 0 {
		return true
	}
	s.lazyFrom = c.lazyFrom(content)
	if s.Blocks > 0 {
		cached, reload = Hit{}, 0
	}
	need := c.Need(s, n) // committed cached blocks are full: no spare
	if need > c.Free() {
		return false
	}
	idleCached := int64(0)
	if need+int64(cached.Blocks)+int64(reload) > c.Free() {
		// Only now can the idle cached blocks, which committing takes off
		// the free list, make the difference.
		for _, sp := range cached.spans {
			for _, b := range c.span(&c.copies[sp.copy], sp.lo, sp.n) {
				if b.refs == 0 {
					idleCached++
				}
			}
		}
	}
	if need+idleCached+int64(reload) > c.Free() {
		if c.checkThenAct {
			return false
		}
		// BLIS commits the cached blocks, runs out while popping, and rolls
		// back: the idle cached blocks end up at the free-list tail.
		for _, sp := range cached.spans {
			for k := sp.lo; k < sp.lo+sp.n; k++ {
				if c.at(&c.copies[sp.copy], k).refs == 0 {
					c.unlink(sp.copy, k)
					c.pushTail(sp.copy, k)
				}
			}
		}
		return false
	}
	c.start(s)
	for _, sp := range cached.spans {
		st := c.span(&c.copies[sp.copy], sp.lo, sp.n)
		for j := range st {
			if st[j].refs == 0 {
				c.unlink(sp.copy, sp.lo+int32(j))
				c.used++
			}
			st[j].refs++
		}
		c.hits += int64(sp.n)
		s.spans = append(s.spans, sp)
		s.Blocks += sp.n
		s.Tokens += sp.n * int32(c.blockSize)
	}
	for k := cached.Blocks; k < cached.Blocks+reload; k++ {
		c.reload(s, content, int32(k))
	}
	c.store(s, content, n)
	return true
}

// store writes n tokens, filling the last partial block first; capacity
// has been checked. A block that becomes full gets its content hash.
func (c *Cache) store(s *Seq, content *Content, n int64) {
	bs := c.blockSize
	if spare := int64(s.Blocks)*bs - int64(s.Tokens); spare > 0 {
		k := min(spare, n)
		s.Tokens += int32(k)
		n -= k
		if int64(s.Tokens)%bs == 0 {
			c.registerLast(s)
		}
	}
	if n <= 0 {
		return
	}
	c.start(s)
	c.ownSpan(s, content)
	for n > 0 {
		c.pop()
		k := min(bs, n)
		id := c.grow(s)
		c.misses++
		s.Tokens += int32(k)
		n -= k
		if k == bs {
			c.register(id, s.Blocks-1)
		}
	}
}

// ownSpan makes sure s is filling a copy of its own, starting one at its
// next block if not.
func (c *Cache) ownSpan(s *Seq, content *Content) {
	if s.own != 0 {
		return
	}
	id := c.newCopy(content, s.Blocks)
	s.spans = append(s.spans, span{copy: id, gen: c.copies[id].gen, lo: s.Blocks})
	s.own = id + 1
}

// grow appends a block held by s alone to the copy it is filling (one
// block taken off the free count by the caller's pop) and returns the
// copy.
func (c *Cache) grow(s *Seq) int32 {
	id := s.own - 1
	cp := &c.copies[id]
	if int(cp.n) == 1<<cp.class {
		c.moveCopy(cp) // a request storing more than its content's blocks
	}
	*c.at(cp, cp.lo+cp.n) = blk{refs: 1, node: none}
	cp.n++
	cp.live++
	s.Blocks++
	c.used++
	return id
}

// registerLast hashes s's last block, which just became full; it is in
// the copy s is filling (committed cached blocks are full already).
func (c *Cache) registerLast(s *Seq) {
	c.register(s.own-1, s.Blocks-1)
}

// register gives block k of copy id its hash, if any; only a shareable
// block enters the prefix index.
func (c *Cache) register(id, k int32) {
	cp := &c.copies[id]
	if k >= cp.total {
		return
	}
	cp.hashedTo = k + 1
	if k >= cp.shared {
		return
	}
	if k < cp.nprefix {
		c.index.Set(c.prefixes.Slice(cp.prefix)[k], id)
		c.indexEpoch++
	} else {
		c.registerStream(cp, id, k)
	}
	if c.observe != nil {
		c.observe(c.hash(cp, k), true)
	}
}

// registerStream enters stream block k of copy id in the stream index. A
// copy registers its stream blocks in order as it fills them; the run it
// has registered since it last started one stays with the copy
// (runLo, runHi), and the stream record only names the copy as pending.
// So a decode block boundary touches the copy record it touches anyway,
// not the stream record and its entries. Every other use of the record
// writes the run out first (flushStream), so that what it sees is what
// registering block by block would have left.
func (c *Cache) registerStream(cp *copyRec, id, k int32) {
	if cp.runHi > cp.runLo && k == cp.runHi {
		cp.runHi++
		return
	}
	r := c.streams.locate(cp.stream, cp.uid, cp.nprefix)
	c.flushStream(r)
	c.streams.recs[r].pending = id
	cp.stream, cp.runLo, cp.runHi = r, k, k+1
}

// flushStream writes record r's pending run, if any, into its entries.
func (c *Cache) flushStream(r int32) {
	rec := &c.streams.recs[r]
	id := rec.pending
	if id == none {
		return
	}
	cp := &c.copies[id]
	c.streams.setRun(r, cp.runLo, cp.runHi, id)
	rec.pending = none
	cp.runLo, cp.runHi = 0, 0
}

// forget clears the content of block k of copy id: its prefix-index entry
// goes, even when a newer duplicate owns it, as in BLIS.
func (c *Cache) forget(id, k int32) {
	c.unindex(&c.copies[id], k, c.at(&c.copies[id], k)).refs = forgotten // idle (a popped block goes dead next)
}

// unindex drops block k of copy cp, whose state is b, from the prefix
// index if it is there, and returns b.
func (c *Cache) unindex(cp *copyRec, k int32, b *blk) *blk {
	if cp.indexed(k, b) {
		if k < cp.nprefix {
			c.index.Delete(c.prefixes.Slice(cp.prefix)[k])
			c.indexEpoch++
		} else {
			c.flushStream(cp.stream)
			c.streams.evict(cp.stream, k)
		}
		if c.observe != nil {
			c.observe(c.hash(cp, k), false)
		}
	}
	return b
}

// Observe makes fn hear every prefix-index change (nil stops it).
func (c *Cache) Observe(fn func(hash uint64, stored bool)) { c.observe = fn }

// Release drops the request's references, last block first, so that a
// request's later (less shared) blocks are evicted before its earlier ones.
func (c *Cache) Release(s *Seq) {
	if s.Blocks == 0 {
		s.spans = s.spans[:0] // its list is a released attempt's: it holds nothing now
	}
	s.settle()
	// The CPU tier hears of the released blocks (afterRelease) unless they
	// can change nothing there: GPU use at or below the offload threshold
	// (a release only lowers it), where a released idle hashed block only
	// marks the tier unswept, and the tier already is.
	tiered := c.tier != nil && !(c.tier.unswept && c.belowOffload())
	c.released = c.released[:0]
	// The tail run, kept in locals while only this loop changes it.
	t, tail := c.tail, (*run)(nil)
	if t != none {
		tail = &c.runs[t]
	}
	for i := len(s.spans) - 1; i >= 0; i-- {
		sp := s.spans[i]
		st := c.span(&c.copies[sp.copy], sp.lo, sp.n)
		for j := len(st) - 1; j >= 0; j-- {
			k := sp.lo + int32(j)
			if st[j].refs--; st[j].refs == 0 {
				c.used--
				if tail != nil && tail.copy == sp.copy && tail.last == k+1 && tail.first >= k+1 {
					// pushTail's common case, inline: the block extends
					// the descending tail run this release started.
					tail.last = k
					st[j].node = t
				} else {
					c.pushTail(sp.copy, k) // may move the runs
					t = c.tail
					tail = &c.runs[t]
				}
			}
			if tiered {
				c.released = append(c.released, blockAt{sp.copy, k})
			}
		}
	}
	if tiered {
		c.afterRelease(c.released)
	}
	s.Tokens, s.Blocks, s.own = 0, 0, 0 // s.spans stays, as the last attempt's
}

// Retire releases a finished request's blocks and takes back its span
// lists, so that only running requests hold list memory (a million queued
// requests must not each keep one).
func (c *Cache) Retire(s *Seq) {
	c.Release(s)
	if cap(s.spans) > 0 {
		c.lists = append(c.lists, s.spans[:0])
	}
	s.spans = nil
}

// start readies s's span list for blocks: a fresh one from the spare
// lists, or, for a request that holds no block yet, its own list with the
// last attempt's spans dropped (a Lookup has read them by now).
func (c *Cache) start(s *Seq) {
	switch {
	case s.spans == nil:
		s.spans = c.takeList()
	case s.Blocks == 0:
		s.spans = s.spans[:0]
	}
}

func (c *Cache) takeList() []span {
	if n := len(c.lists); n > 0 {
		l := c.lists[n-1]
		c.lists = c.lists[:n-1]
		return l
	}
	return make([]span, 0, 4)
}

// pop takes a free block for a new use: a never-used one while any is
// left, else the least recently released one, whose content is evicted.
func (c *Cache) pop() {
	if c.unused > 0 {
		c.unused--
		return
	}
	id, k := c.popHead()
	cp := &c.copies[id]
	c.unindex(cp, k, c.at(cp, k)).refs = dead
	c.dropBlock(id)
}

// Untouched reports whether s has never held a block: no blocks, and no
// list of a released attempt's spans for a later Lookup to read.
func Untouched(s *Seq) bool {
	return s.Blocks == 0 && s.Tokens == 0 && s.own == 0 && s.spans == nil
}
