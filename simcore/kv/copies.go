package kv

import (
	"math/bits"

	"optimize/simcore/internal/freelist"
)

// A copy is the unit of block storage: consecutive sequence blocks
// [lo, lo+len(st)) of one content, filled in order by the one request that
// allocated them. Every block's state sits in the copy's st array, so the
// work a request does on its blocks (filling, committing, releasing, and
// the eviction of a run of them later) walks a short array instead of
// scattered per-block records.
//
// Blocks have no ids: what BLIS's free list orders is block contents, and
// which physical block holds a content is invisible. An evicted block's
// slot in its copy is dead (refs −1) and the physical block moves on to
// the request that popped it.
type copyRec struct {
	prefix []uint64 // the filler's prefix hashes (shared, read-only)
	uid    uint64   // the filler's stream
	lo     int32    // sequence index of st[0]
	total  int32    // the filler's Content.Total: later blocks get no hash
	shared int32    // the filler's Content.Shared: earlier blocks are indexed
	stream int32    // stream record its indexed stream blocks name, or none
	gen    uint32   // bumped when the record is reused
	live   int32    // blocks not evicted
	// hashedTo: blocks [lo, hashedTo) have their hash (the filler fills
	// and registers them in order), unless forgotten one by one since.
	hashedTo int32
	// runLo, runHi: its stream blocks registered but not yet written into
	// their stream record (Cache.registerStream); empty when equal.
	runLo, runHi int32
	st           []blk
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

// hash is the content hash of sequence block k of the copy.
func (c *copyRec) hash(k int32) uint64 {
	if int(k) < len(c.prefix) {
		return c.prefix[k]
	}
	return streamHash(c.uid, uint64(k))
}

func (c *copyRec) at(k int32) *blk { return &c.st[k-c.lo] }

// span is the state of blocks [lo, lo+n) of the copy.
func (c *copyRec) span(lo, n int32) []blk { return c.st[lo-c.lo : lo-c.lo+n] }

// newCopy starts an empty copy of content at sequence block lo.
func (c *Cache) newCopy(content *Content, lo int32) int32 {
	id := freelist.Take(&c.copies, &c.freeCopies) // a reused record keeps its generation
	cp := &c.copies[id]
	cp.prefix, cp.uid, cp.lo = content.Prefix, content.UID, lo
	cp.total, cp.shared, cp.stream, cp.live = content.Total, content.Shared, none, 0
	cp.runLo, cp.runHi, cp.hashedTo = 0, 0, lo
	// Room for every block the filler can still take (its partial last
	// block and the token stored at completion included), so that the
	// copy never grows by copying.
	cp.st = c.takeBlocks(int(content.Total-lo) + 2)
	return id
}

// dropBlock accounts for a slot of copy id going dead; the copy is
// recycled with its last live block (spans that still name it, in a Prev,
// see the generation change).
func (c *Cache) dropBlock(id int32) {
	cp := &c.copies[id]
	if cp.live--; cp.live == 0 {
		cp.gen++
		cp.prefix = nil
		c.putBlocks(cp.st)
		cp.st = nil
		c.freeCopies = append(c.freeCopies, id)
	}
}

// takeBlocks returns an empty block array with room for n, from the
// spare ones when one of its power-of-two class is left.
func (c *Cache) takeBlocks(n int) []blk {
	class := bits.Len(uint(max(n, 16) - 1))
	if class < len(c.spareBlocks) {
		if l := c.spareBlocks[class]; len(l) > 0 {
			c.spareBlocks[class] = l[:len(l)-1]
			return l[len(l)-1]
		}
	}
	n = 1 << class
	if n > slabBlocks {
		return make([]blk, 0, n)
	}
	if len(c.slab)+n > cap(c.slab) {
		c.slab = make([]blk, 0, slabBlocks)
	}
	l := c.slab[len(c.slab) : len(c.slab) : len(c.slab)+n]
	c.slab = c.slab[:len(c.slab)+n]
	return l
}

// slabBlocks is how many block slots takeBlocks allocates at once: copies
// are many and short-lived, and one allocation each made up a tenth of a
// small run's garbage-collection work.
const slabBlocks = 4096

// putBlocks keeps a recycled copy's block array for takeBlocks.
func (c *Cache) putBlocks(st []blk) {
	class := bits.Len(uint(cap(st) - 1))
	if cap(st) != 1<<class {
		return // not one takeBlocks made
	}
	for len(c.spareBlocks) <= class {
		c.spareBlocks = append(c.spareBlocks, nil)
	}
	c.spareBlocks[class] = append(c.spareBlocks[class], st[:0])
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
	b := c.copies[id].at(k)
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
	n := cp.at(k).node
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
		cp.at(j).node = m
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
