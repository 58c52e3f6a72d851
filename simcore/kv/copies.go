package kv

import (
	"math/bits"

	"optimize/simcore/internal/freelist"
)

// A copy is the unit of block storage: consecutive sequence blocks
// [lo, lo+n) of one content, filled in order by the one request that
// allocated them. Every block's state sits in the copy's region of the
// cache's block array, so the work a request does on its blocks (filling,
// committing, releasing, and the eviction of a run of them later) walks a
// short array instead of scattered per-block records. Records and block
// states hold no pointer, so the garbage collector neither scans them nor
// guards writes to them.
//
// Blocks have no ids: what BLIS's free list orders is block contents, and
// which physical block holds a content is invisible. An evicted block's
// slot in its copy is dead (refs −1) and the physical block moves on to
// the request that popped it.
type copyRec struct {
	uid     uint64 // the filler's stream
	prefix  int32  // the filler's prefix hashes, as an id in Cache.prefixes
	nprefix int32  // their number
	lo      int32  // sequence index of its first block
	total   int32  // the filler's Content.Total: later blocks get no hash
	shared  int32  // the filler's Content.Shared: earlier blocks are indexed
	stream  int32  // stream record its indexed stream blocks name, or none
	gen     uint32 // bumped when the record is reused
	live    int32  // blocks not evicted
	// hashedTo: blocks [lo, hashedTo) have their hash (the filler fills
	// and registers them in order), unless forgotten one by one since.
	hashedTo int32
	// runLo, runHi: its stream blocks registered but not yet written into
	// their stream record (Cache.registerStream); empty when equal.
	runLo, runHi int32
	// Its block states are the first n slots of a region of 2^class ≥ 16
	// slots of the cache's block chunks, which starts at slot 16·region
	// (so that an int32 reaches 2^35 slots, more than memory holds);
	// block k is in slot k − lo of the region.
	region, n int32
	class     uint8
}

type blk struct {
	refs int32 // holders; dead (evicted) = −1, forgotten = −2
	node int32 // its free-list run while idle (refs 0 or forgotten)
}

// forgotten is the refcount of an idle block whose content was dropped
// while it stays on the GPU (offloaded to the CPU tier): it has no hash
// any more, so nothing can hit it, and it waits on the free list to be
// reused like any idle block.
const forgotten = -2

// hashed reports whether live block k of the copy, whose state is b, has
// its content hash: registering a block only moves hashedTo, so that it
// need not touch the block's state.
func (c *copyRec) hashed(k int32, b *blk) bool { return k < c.hashedTo && b.refs != forgotten }

// indexed reports whether live block k is in the prefix index: hashed and
// shareable.
func (c *copyRec) indexed(k int32, b *blk) bool { return k < c.shared && c.hashed(k, b) }

// dead marks an evicted block slot.
const dead = -1

// hash is the content hash of sequence block k of copy cp.
func (c *Cache) hash(cp *copyRec, k int32) uint64 {
	if k < cp.nprefix {
		return c.prefixes.Slice(cp.prefix)[k]
	}
	return streamHash(cp.uid, uint64(k))
}

// at is the state of sequence block k of copy cp.
func (c *Cache) at(cp *copyRec, k int32) *blk {
	i := int(cp.region)<<regionShift + int(k-cp.lo)
	return &c.chunks[i>>chunkShift][i&chunkMask]
}

// span is the state of blocks [lo, lo+n) of copy cp.
func (c *Cache) span(cp *copyRec, lo, n int32) []blk {
	i := int(cp.region)<<regionShift + int(lo-cp.lo)
	o := i & chunkMask
	return c.chunks[i>>chunkShift][o : o+int(n) : o+int(n)]
}

// statesOf is the state of every block copy cp has had.
func (c *Cache) statesOf(cp *copyRec) []blk { return c.span(cp, cp.lo, cp.n) }

// newCopy starts an empty copy of content at sequence block lo.
func (c *Cache) newCopy(content *Content, lo int32) int32 {
	id := freelist.Take(&c.copies, &c.freeCopies) // a reused record keeps its generation
	cp := &c.copies[id]
	cp.prefix, cp.nprefix = c.prefixes.ID(content.Prefix), int32(len(content.Prefix))
	cp.uid, cp.lo = content.UID, lo
	cp.total, cp.shared, cp.stream, cp.live = content.Total, content.Shared, none, 0
	cp.runLo, cp.runHi, cp.hashedTo = 0, 0, lo
	// Room for every block the filler can still take (its partial last
	// block and the token stored at completion included), so that the
	// copy need not move (moveCopy).
	cp.region, cp.class = c.takeBlocks(int(content.Total-lo) + 2)
	cp.n = 0
	return id
}

// dropBlock accounts for a slot of copy id going dead; the copy is
// recycled with its last live block (spans that still name it, in a Prev,
// see the generation change).
func (c *Cache) dropBlock(id int32) {
	cp := &c.copies[id]
	if cp.live--; cp.live == 0 {
		cp.gen++
		cp.prefix, cp.nprefix = -1, 0
		c.spare[cp.class] = append(c.spare[cp.class], cp.region)
		cp.n = 0
		c.freeCopies = append(c.freeCopies, id)
	}
}

// moveCopy moves a full copy's block states to a region twice as large.
func (c *Cache) moveCopy(cp *copyRec) {
	old, oldRegion, oldClass := c.statesOf(cp), cp.region, cp.class
	cp.region, cp.class = c.takeBlocks(2 << cp.class)
	copy(c.span(cp, cp.lo, cp.n), old)
	c.spare[oldClass] = append(c.spare[oldClass], oldRegion)
}

// Block states live in chunks of 2^chunkShift slots, addressed by slot
// index (chunk, then offset): they never move or are copied as the cache
// grows, and hold no pointer. A region is a power-of-two run of slots
// (16 at least, so that an int32 names 2^35 slots by its start / 16) that
// does not straddle a chunk; a region larger than a chunk gets chunks of
// its own, views of one array, each with the capacity to its end.
// Chunks of 1,024 slots (8 KiB): a 1,000-request run's instance fills
// about 4,600, so 4,096-slot chunks zeroed half again what it used.
const (
	regionShift = 4
	chunkShift  = 10
	chunkMask   = 1<<chunkShift - 1
)

// takeBlocks returns a region with room for n slots and its power-of-two
// class: a recycled one of its class when one is left, else a new one.
// Regions are reused, never freed.
func (c *Cache) takeBlocks(n int) (region int32, class uint8) {
	class = uint8(bits.Len(uint(max(n, 1<<regionShift) - 1)))
	for len(c.spare) <= int(class) {
		c.spare = append(c.spare, nil)
	}
	if l := c.spare[class]; len(l) > 0 {
		c.spare[class] = l[:len(l)-1]
		return l[len(l)-1], class
	}
	size := 1 << class
	if c.next&chunkMask+size > 1<<chunkShift {
		c.next = (c.next + chunkMask) &^ chunkMask // the rest of the chunk stays unused
	}
	if c.next&chunkMask == 0 {
		whole := make([]blk, max(size, 1<<chunkShift))
		for o := 0; o < len(whole); o += 1 << chunkShift {
			c.chunks = append(c.chunks, whole[o:o+1<<chunkShift:len(whole)])
		}
	}
	region = int32(c.next >> regionShift)
	c.next += size
	return region, class
}

// run is a free-list node: consecutive blocks of one copy in LRU order,
// first (the oldest) to last, ascending or descending. A request releases
// its blocks last first, so its blocks of a copy form one descending run;
// a rolled-back commit moves cached blocks to the tail in sequence order,
// an ascending one.
type run struct {
	copy        int32
	first, last int32
	prev, next  int32
}

func (r *run) step() int32 {
	if r.last < r.first {
		return -1
	}
	return 1
}

// addRun stores r as a new free-list node and links its neighbours (or
// the list's ends) to it.
func (c *Cache) addRun(r run) int32 {
	n := freelist.Take(&c.runs, &c.freeRuns)
	c.runs[n] = r
	if r.prev != none {
		c.runs[r.prev].next = n
	} else {
		c.head = n
	}
	if r.next != none {
		c.runs[r.next].prev = n
	} else {
		c.tail = n
	}
	return n
}

// pushTail appends free block k of copy id to the LRU tail, extending the
// tail run when k continues it.
func (c *Cache) pushTail(id, k int32) {
	b := c.at(&c.copies[id], k)
	if c.tail != none {
		t := &c.runs[c.tail]
		if t.copy == id && (t.last == k+1 && t.first >= t.last || t.last == k-1 && t.first <= t.last) {
			t.last = k
			b.node = c.tail
			return
		}
	}
	b.node = c.addRun(run{copy: id, first: k, last: k, prev: c.tail, next: none})
}

// unlink takes free block k of copy id off the free list: a hit commits it.
func (c *Cache) unlink(id, k int32) {
	cp := &c.copies[id]
	n := c.at(cp, k).node
	r := &c.runs[n]
	d := r.step()
	switch {
	case r.first == r.last:
		c.removeRun(n)
	case k == r.first:
		r.first += d
	case k == r.last:
		r.last -= d
	case (k-r.first)*d < (r.last-k)*d:
		// Split around k; the shorter side becomes a run of its own, so
		// that relabelling its blocks stays cheap.
		m := c.addRun(run{copy: id, first: r.first, last: k - d, prev: r.prev, next: n})
		c.runs[n].first = k + d
		c.relabel(cp, m)
	default:
		m := c.addRun(run{copy: id, first: k + d, last: r.last, prev: n, next: r.next})
		c.runs[n].last = k - d
		c.relabel(cp, m)
	}
}

// relabel points the blocks of run m at it.
func (c *Cache) relabel(cp *copyRec, m int32) {
	r := c.runs[m]
	d := r.step()
	for j := r.first; ; j += d {
		c.at(cp, j).node = m
		if j == r.last {
			return
		}
	}
}

func (c *Cache) removeRun(n int32) {
	r := &c.runs[n]
	if r.prev != none {
		c.runs[r.prev].next = r.next
	} else {
		c.head = r.next
	}
	if r.next != none {
		c.runs[r.next].prev = r.prev
	} else {
		c.tail = r.prev
	}
	c.freeRuns = append(c.freeRuns, n)
}

// popHead takes the least recently released free block off the list.
func (c *Cache) popHead() (id, k int32) {
	n := c.head
	r := &c.runs[n]
	id, k = r.copy, r.first
	if r.first == r.last {
		c.removeRun(n)
	} else {
		r.first += r.step()
	}
	return id, k
}
