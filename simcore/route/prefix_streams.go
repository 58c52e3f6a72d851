package route

import (
	"optimize/simcore/internal/freelist"
	"optimize/simcore/internal/u64map"
	"optimize/simcore/kv"
)

// blockSeq is what the prefix index sees of a request's shareable input
// blocks (kv.Content): the hashes of its prefix's leading blocks, then the
// blocks len(prefix) ≤ k < end of the stream named uid.
type blockSeq struct {
	prefix []uint64
	uid    uint64
	end    int
}

func seqOf(c *kv.Content) blockSeq {
	n := min(int(c.Input), int(c.Shared))
	return blockSeq{prefix: c.Prefix[:min(n, len(c.Prefix))], uid: c.UID, end: n}
}

// streamHolds is the part of the prefix index that holds stream blocks:
// per stream, a list of holds, one per instance holding any of its blocks,
// each with the ring position of every block it holds. A multi-turn
// session re-records its whole context with every round; kept per stream,
// that is one map lookup per request and then sequential array accesses,
// where an entry per block costs random memory accesses per block (the
// router's largest cost before). Block (uid, k) is the block whose hash
// is kv's stream hash of (uid, k), so this is the same LRU as one keyed by
// those hashes.
type streamHolds struct {
	// byUID: stream uid → its record. Scoring and recording a request
	// ask for the same uid in a row, so it remembers.
	byUID     *u64map.Memo
	streams   []heldStream
	holds     []streamHold
	freeRecs  []int32
	freeHolds []int32
	// slab is where new position arrays are carved from: a hold per
	// request and instance, each its own allocation, was a twentieth of a
	// 1,000-request run's CPU. A freed hold keeps its array for reuse.
	slab []uint64
}

// slabSize is the positions a slab holds (32 KiB).
const slabSize = 4096

type heldStream struct {
	uid   uint64
	first int32 // first hold of the list, noHold when none
}

type streamHold struct {
	stream, inst int32
	next         int32 // next hold of the stream, or noHold
	count        int32 // blocks held
	// pos[k] is 1 + the ring position of inst's latest touch of block k.
	// inst holds the block while that touch is in its ring, at or above
	// the ring's tail (held); evicting the touch moves the tail past it
	// and need not come here. 0 = never touched.
	pos []uint64
}

const noHold = -1

// Ring slots name a hashed entry (its index, below 2^31), a stream block
// (streamSlot | hold<<32 | k), or are dead or private.
const (
	streamSlot  = uint64(1) << 63
	deadSlot    = uint64(1) << 62
	privateSlot = deadSlot | 1
)

// held reports whether a block whose latest touch is at pos (plus one) is
// still held by a ring whose oldest live touch is at tail.
func held(pos, tail uint64) bool { return pos > tail }

func streamSlotOf(h int32, k int) uint64 { return streamSlot | uint64(h)<<32 | uint64(uint32(k)) }

func splitStreamSlot(s uint64) (h int32, k int) { return int32(s>>32) & 0x7fffffff, int(uint32(s)) }

func newStreamHolds() streamHolds { return streamHolds{byUID: u64map.NewMemo(64)} }

// find returns uid's stream record, or none.
func (x *streamHolds) find(uid uint64) (int32, bool) { return x.byUID.Get(uid) }

// holdFor returns inst's hold of uid's stream, creating the stream and the
// hold as needed, with room for blocks [0, end).
func (x *streamHolds) holdFor(uid uint64, inst int, end int) int32 {
	s, ok := x.find(uid)
	if !ok {
		s = freelist.Take(&x.streams, &x.freeRecs)
		x.streams[s] = heldStream{uid: uid, first: noHold}
		x.byUID.Set(uid, s)
	}
	h := x.streams[s].first
	for h != noHold && x.holds[h].inst != int32(inst) {
		h = x.holds[h].next
	}
	if h == noHold {
		h = freelist.Take(&x.holds, &x.freeHolds)
		hold := &x.holds[h]
		hold.stream, hold.inst, hold.next, hold.count = s, int32(inst), x.streams[s].first, 0
		hold.pos = hold.pos[:0] // a reused hold keeps its array, cleared as it grows
		x.streams[s].first = h
	}
	if hold := &x.holds[h]; len(hold.pos) < end {
		if end > cap(hold.pos) {
			grown := x.carve(max(end, 2*cap(hold.pos), 16))[:len(hold.pos)]
			copy(grown, hold.pos)
			hold.pos = grown
		}
		old := len(hold.pos)
		hold.pos = hold.pos[:end]
		clear(hold.pos[old:]) // another ring's positions, in a reused array
	}
	return h
}

// carve returns n zeroed positions, from the slab while it has room.
func (x *streamHolds) carve(n int) []uint64 {
	if n > len(x.slab) {
		x.slab = make([]uint64, max(n, slabSize))
	}
	p := x.slab[:n:n]
	x.slab = x.slab[n:]
	return p
}

// evict drops a block from hold h, whose touch of it the ring just
// evicted; a hold without blocks leaves its stream's list, and a stream
// without holds leaves the map.
func (x *streamHolds) evict(h int32) {
	hold := &x.holds[h]
	if hold.count--; hold.count > 0 {
		return
	}
	st := &x.streams[hold.stream]
	if st.first == h {
		st.first = hold.next
	} else {
		p := st.first
		for x.holds[p].next != h {
			p = x.holds[p].next
		}
		x.holds[p].next = hold.next
	}
	x.freeHolds = append(x.freeHolds, h)
	if st.first == noHold {
		x.byUID.Delete(st.uid)
		x.freeRecs = append(x.freeRecs, hold.stream)
	}
}

// matchStream extends, for every instance that holds all of seq's prefix
// blocks, the leading run through the stream blocks it holds.
func (x *streamHolds) matchStream(seq blockSeq, matched []int32, rings []touchRing) {
	base := len(seq.prefix)
	s, ok := x.find(seq.uid)
	if !ok {
		return
	}
	for h := x.streams[s].first; h != noHold; h = x.holds[h].next {
		hold := &x.holds[h]
		if matched[hold.inst] != int32(base) {
			continue
		}
		pos := hold.pos[:min(seq.end, len(hold.pos))]
		n, tail := base, rings[hold.inst].tail
		for n < len(pos) && held(pos[n], tail) {
			n++
		}
		matched[hold.inst] = int32(n)
	}
}
