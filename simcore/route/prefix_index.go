package route

import (
	"math/bits"
	"slices"
	"unsafe"

	"optimize/simcore/internal/prefixmemo"
)

// prefixIndex is the router's approximate record of which block hashes each
// instance has been sent, with the semantics of BLIS's PrefixCacheIndex: one
// LRU of hashes per instance, capacity blocks each; recording touches hashes
// in request order (so a request's first block is the least recent of its
// blocks); inserting into a full LRU evicts its least recently recorded
// hash; lookups never refresh recency.
//
// Layout, for one table probe per block and few cache misses:
//
//   - One hash table, shared by all instances, maps a hash to an entry
//     (prefix_table.go). Scoring probes once per leading block and narrows
//     a bitset of the instances still matching.
//   - Everything about an entry shares one record (one 64-byte line up to 8
//     instances): its hash, holder count and holder bitset, and per
//     instance the ring position of that instance's latest touch (32
//     bits, enough to find the ring slot; two to a word).
//   - Each instance's LRU is a ring of entries in touch order, with absolute
//     positions. A touch of a held hash marks its previous slot dead and
//     appends; evicting pops the oldest live slot. Nothing walks a list.
//   - An entry no instance holds is reused; its table slot goes stale
//     and is dropped at the next rebuild (prefix_table.go).
//   - Stream blocks (a session's context after its prefix) have no entry:
//     they are held per stream and instance (prefix_streams.go).
type prefixIndex struct {
	instances int
	capacity  int
	words     int // uint64 words in a holder bitset
	stride    int // uint64 words per entry record
	stampBase int // word of the first ring position in a record

	table   entryTable
	records []uint64 // per entry: hash, holder count, bitset, positions
	free    []int32  // entries held by no instance

	rings   []touchRing
	streams streamHolds

	// Scratch for one request, shared by match and record, which re-probes
	// only the blocks match did not reach when its caller says the hints
	// are for the blocks it records.
	hints  []int32 // entry of each probed block, or noEntry
	spots  []int32 // for an absent block, the empty slot it would fill
	hinted int     // leading blocks of the last match with hints

	active matchingSet // scratch of matchWords

	// epoch counts the changes that can alter a match of prefix blocks or
	// its hints: a holder joining or leaving an entry, an entry made, the
	// table rebuilt. memo answers match while it stays the same.
	epoch uint64
	memo  matchMemo
}

// touchRing is one instance's LRU: its touches, oldest first.
type touchRing struct {
	entries    []uint64 // slot touched at position p, at entries[p & (len-1)]: entry, stream block, dead or private
	head, tail uint64   // next position to write; oldest live position (== head if empty)
	count      int      // live slots = hashes held
}

// A private ring slot (privateSlot) holds a hash no other request can
// contain: it takes LRU capacity like any hash (so evictions happen
// exactly as in BLIS) but needs no table entry, since no lookup can ever
// match it.
const (
	noEntry = -1

	keyWord     = 0
	holdersWord = 1
	bitsWord    = 2
)

func newPrefixIndex(instances, capacity int) *prefixIndex {
	// Records of 4 words, or whole 64-byte lines, never straddle a line.
	words := (instances + 63) / 64
	stride := bitsWord + words + (instances+1)/2
	if stride <= 4 {
		stride = 4
	} else {
		stride = (stride + 7) &^ 7
	}
	x := &prefixIndex{
		instances: instances,
		capacity:  capacity,
		words:     words,
		stride:    stride,
		stampBase: bitsWord + words,
		rings:     make([]touchRing, instances),
		active:    newMatchingSet(instances),
		streams:   newStreamHolds(),
	}
	x.table.resize(16)
	for i := range x.rings {
		x.rings[i].entries = make([]uint64, 16)
	}
	return x
}

func (x *prefixIndex) key(e int32) uint64 { return x.records[int(e)*x.stride+keyWord] }

func (x *prefixIndex) holders(e int32) uint64 { return x.records[int(e)*x.stride+holdersWord] }

// holderBits is e's holder bitset.
func (x *prefixIndex) holderBits(e int32) []uint64 {
	return x.records[int(e)*x.stride+bitsWord : int(e)*x.stride+bitsWord+x.words]
}

func (x *prefixIndex) setPosition(e int32, inst int, p uint64) {
	x.positions()[2*(int(e)*x.stride+x.stampBase)+inst] = uint32(p)
}

// positions views the records as 32-bit halves, to read and write one
// instance's ring position without shifts.
func (x *prefixIndex) positions() []uint32 {
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(x.records))), 2*len(x.records))
}

// matchMemo is the prefix part of the last match: what matchOneWord or
// matchWords returned, the matched counts and the hints, for the prefix
// blocks its key names.
type matchMemo struct {
	key          prefixmemo.Key
	k            int
	matched      []int32
	hints, spots []int32
}

// match writes into matched[i] the number of leading blocks of seq that
// instance i holds. It probes each prefix block once, narrowing the set of
// instances still matching, and stops as soon as that set is empty; the
// instances left go on through the stream. The entries it found are hints
// for a record of the same blocks.
//
// Most requests share a prefix (a system prompt) that the index already
// holds, so the probes would find what they found for the last request
// with that prefix; the memo keeps that answer until the epoch changes.
func (x *prefixIndex) match(seq blockSeq, matched []int32) {
	blocks := seq.prefix
	hints, spots := x.scratchHints(len(blocks))
	var k int
	key := prefixmemo.KeyOf(blocks, len(blocks), x.epoch)
	if m := &x.memo; m.key.Matches(key) {
		k = m.k
		copy(matched, m.matched)
		copy(hints, m.hints)
		copy(spots, m.spots)
	} else {
		if x.words == 1 {
			k = x.matchOneWord(blocks, matched, hints, spots)
		} else {
			k = x.matchWords(blocks, matched, hints, spots)
		}
		m.key, m.k = key, k
		m.matched = append(m.matched[:0], matched...)
		m.hints = append(m.hints[:0], hints...)
		m.spots = append(m.spots[:0], spots...)
	}
	x.hinted = min(k+1, len(blocks))
	if k == len(blocks) && seq.end > len(blocks) {
		x.streams.matchStream(seq, matched, x.rings)
	}
}

// matchOneWord is match for up to 64 instances, the common case, with the
// set of matching instances in a register. It returns the index of the
// block where the last instances dropped out, len(blocks) if some never did.
func (x *prefixIndex) matchOneWord(blocks []uint64, matched []int32, hints, spots []int32) int {
	records, stride := x.records, x.stride
	t := &x.table
	tags, slotEntry, tmask := t.tags, t.slotEntry, len(t.tags)-1
	active := uint64(1)<<uint(x.instances) - 1 // x.instances == 64 gives all ones
	for k, h := range blocks {
		// find, inlined: this loop is the hottest in routing.
		e := int32(noEntry)
		s, tag := t.hashOf(h)
		for ; tags[s] != 0; s = (s + 1) & tmask {
			if c := int(slotEntry[s]) * stride; tags[s] == tag && records[c+keyWord] == h && records[c+holdersWord] != 0 {
				e = slotEntry[s]
				break
			}
		}
		hints[k], spots[k] = e, int32(s)
		kept := uint64(0)
		if e != noEntry {
			kept = active & records[int(e)*stride+bitsWord]
		}
		if kept != active {
			settle(matched, 0, active&^kept, int32(k))
			if active = kept; active == 0 {
				return k
			}
		}
	}
	settle(matched, 0, active, int32(len(blocks)))
	return len(blocks)
}

// matchWords is match for any number of instances.
func (x *prefixIndex) matchWords(blocks []uint64, matched []int32, hints, spots []int32) int {
	x.active.fill()
	for k, h := range blocks {
		e, s := x.find(h)
		hints[k], spots[k] = e, int32(s)
		var held []uint64
		if e != noEntry {
			held = x.holderBits(e)
		}
		if !x.active.narrow(held, matched, int32(k)) {
			return k
		}
	}
	x.active.settleAll(matched, int32(len(blocks)))
	return len(blocks)
}

// matchingSet is the bitset of the instances still matching a request's
// leading blocks, narrowed block by block: the multi-word match of the
// prefix index and of the KV-event mirror.
type matchingSet struct {
	words     []uint64
	instances int
}

func newMatchingSet(instances int) matchingSet {
	return matchingSet{words: make([]uint64, (instances+63)/64), instances: instances}
}

// fill puts every instance in the set.
func (a matchingSet) fill() {
	for w := range a.words {
		a.words[w] = ^uint64(0)
	}
	if tailBits := a.instances & 63; tailBits != 0 {
		a.words[len(a.words)-1] = 1<<uint(tailBits) - 1
	}
}

// narrow keeps the instances in held (a holder bitset of as many words;
// nil = none), settling the others at k matched blocks. It reports whether
// any instance is left.
func (a matchingSet) narrow(held []uint64, matched []int32, k int32) bool {
	remaining := uint64(0)
	for w, bits := range a.words {
		kept := uint64(0)
		if held != nil {
			kept = bits & held[w]
		}
		settle(matched, w, bits&^kept, k)
		a.words[w] = kept
		remaining |= kept
	}
	return remaining != 0
}

// settleAll settles every instance left at n matched blocks.
func (a matchingSet) settleAll(matched []int32, n int32) {
	for w, bits := range a.words {
		settle(matched, w, bits, n)
	}
}

// settle sets matched[i] = n for every instance i whose bit is set in
// dropped, bitset word w.
func settle(matched []int32, w int, dropped uint64, n int32) {
	for ; dropped != 0; dropped &= dropped - 1 {
		matched[w<<6+bits.TrailingZeros64(dropped)] = n
	}
}

// record touches every block of seq, in order, in inst's LRU, then own
// more hashes that are the request's own (see privateSlot). hinted says
// that seq begins with the blocks of the last match, with no record
// since: record then reuses the entries match found instead of probing
// again.
//
// It appends every touch first and evicts the overflow afterwards. The
// outcome is the same as touching one hash at a time, because an LRU always
// holds the capacity most recently touched distinct hashes. Evicting last
// means no entry is freed while the request's hints are in use.
func (x *prefixIndex) record(seq blockSeq, own int, inst int, hinted bool) {
	blocks := seq.prefix
	start := 0
	if moved := x.reserve(len(blocks)); hinted && !moved {
		start = min(x.hinted, len(blocks))
	}
	hints, spots := x.scratchHints(len(blocks))
	for k := start; k < len(blocks); k++ {
		e, s := x.find(blocks[k])
		hints[k], spots[k] = e, int32(s)
	}
	x.hinted = 0 // the index changes below: the hints are spent
	// Entries are only created here, never freed, so a hint stays right; an
	// insertion spot stays right while it is empty, since the slots before
	// it on the probe path only fill up. (It fills when a hash repeats
	// within the request.) Creating every missing entry first, and making
	// ring room for every touch, leaves the touch loops without calls, so
	// that their state stays in registers.
	for k, h := range blocks {
		if hints[k] != noEntry {
			continue
		}
		e, s := int32(noEntry), int(spots[k])
		if x.table.tags[s] != 0 {
			// An entry made in this pass took the spot. It has no holder
			// yet, so find skips it: it may be this very hash, repeated.
			if j := slices.Index(blocks[:k], h); j >= 0 {
				hints[k] = hints[j]
				continue
			}
			e, s = x.find(h)
		}
		if e == noEntry {
			e = x.newEntry(s, h)
		}
		hints[k] = e
	}
	hold := int32(noHold)
	if seq.end > len(blocks) {
		hold = x.streams.holdFor(seq.uid, inst, seq.end)
	}
	x.ringRoom(inst, seq.end+own)

	r := &x.rings[inst]
	head, added := x.touchEntries(r.entries, r.head, hints, inst)
	if added > 0 {
		x.epoch++ // new holders
	}
	if hold != noHold {
		h := &x.streams.holds[hold]
		var held int
		head, held = touchStream(r.entries, head, r.tail, h.pos[len(blocks):seq.end], hold, len(blocks))
		h.count += int32(held)
		added += held
	}
	mask := uint64(len(r.entries) - 1)
	for range own {
		r.entries[head&mask] = privateSlot
		head++
	}
	r.head, r.count = head, r.count+added+own
	r.skipDead()
	if r.count > x.capacity {
		x.evictOverflow(inst)
	}
}

// touchEntries appends a touch of entries es to inst's ring, from
// position head: a held entry's previous slot dies, a new holder joins
// the entry. It returns the next head and the number of new holdings.
func (x *prefixIndex) touchEntries(ring []uint64, head uint64, es []int32, inst int) (uint64, int) {
	records, stride, positions := x.records, x.stride, x.positions()
	mask := uint64(len(ring) - 1)
	bitWord, bit := bitsWord+inst>>6, uint64(1)<<(uint(inst)&63)
	pos := 2*x.stampBase + inst // inst's position, in 32-bit halves from a record's start
	added := 0
	for _, e := range es {
		base := int(e) * stride
		p := &positions[2*base+pos]
		if held := records[base+bitWord]; held&bit != 0 {
			ring[uint64(*p)&mask] = deadSlot
		} else {
			records[base+bitWord] = held | bit
			records[base+holdersWord]++
			added++
		}
		ring[head&mask] = uint64(e)
		*p = uint32(head)
		head++
	}
	return head, added
}

// touchStream appends a touch of stream blocks first, first+1, … of hold
// h, whose latest ring positions (plus one; see held) pos lists, to a
// ring from position head, its oldest live touch at tail. It returns the
// next head and the number of blocks newly held.
func touchStream(ring []uint64, head, tail uint64, pos []uint64, h int32, first int) (uint64, int) {
	mask := uint64(len(ring) - 1)
	added := 0
	for i := range pos {
		if p := pos[i]; held(p, tail) {
			ring[(p-1)&mask] = deadSlot
		} else {
			added++
		}
		ring[head&mask] = streamSlotOf(h, first+i)
		pos[i] = head + 1
		head++
	}
	return head, added
}

// scratchHints returns the hint slices sized for n blocks, keeping their
// contents.
func (x *prefixIndex) scratchHints(n int) (hints, spots []int32) {
	if cap(x.hints) < n {
		x.hints = append(x.hints[:cap(x.hints)], make([]int32, n-cap(x.hints))...)
		x.spots = append(x.spots[:cap(x.spots)], make([]int32, n-cap(x.spots))...)
	}
	return x.hints[:n], x.spots[:n]
}

// newEntry creates h's entry, held by nobody, in empty slot s.
func (x *prefixIndex) newEntry(s int, h uint64) int32 {
	var e int32
	if n := len(x.free); n > 0 {
		e = x.free[n-1]
		x.free = x.free[:n-1]
		clear(x.records[int(e)*x.stride : int(e+1)*x.stride])
	} else {
		e = int32(len(x.records) / x.stride)
		if len(x.records)+x.stride > cap(x.records) {
			// Double: append's 1.25× growth for large slices copied the
			// records five times over (14 % of a 1000-request run).
			grown := make([]uint64, len(x.records), max(2*cap(x.records), 64*x.stride))
			copy(grown, x.records)
			x.records = grown
		}
		x.records = x.records[:len(x.records)+x.stride]
	}
	x.records[int(e)*x.stride+keyWord] = h
	x.occupy(s, h, e)
	x.epoch++
	return e
}

// skipDead moves the tail to the oldest live slot.
func (r *touchRing) skipDead() {
	r.tail = r.liveFrom(r.tail)
}

// liveFrom returns the first live position at or after p (head if none).
// It works on locals: through r, each step would reload the ring's fields.
func (r *touchRing) liveFrom(p uint64) uint64 {
	entries, mask, head := r.entries, uint64(len(r.entries)-1), r.head
	for p < head && entries[p&mask] == deadSlot {
		p++
	}
	return p
}

// evictOverflow pops inst's oldest touches until it holds capacity hashes.
func (x *prefixIndex) evictOverflow(inst int) {
	r := &x.rings[inst]
	mask := uint64(len(r.entries) - 1)
	for r.count > x.capacity {
		s := r.entries[r.tail&mask]
		r.tail = r.liveFrom(r.tail + 1)
		r.count--
		if s == privateSlot {
			continue
		}
		if s&streamSlot != 0 {
			h, _ := splitStreamSlot(s)
			x.streams.evict(h)
			continue
		}
		e := int32(s)
		x.records[int(e)*x.stride+bitsWord+inst>>6] &^= 1 << (uint(inst) & 63)
		x.epoch++
		if x.records[int(e)*x.stride+holdersWord]--; x.holders(e) == 0 {
			x.free = append(x.free, e) // its table slot goes stale
		}
	}
}

// ringRoom makes room in inst's ring for n more touches: when the live
// slots and the new ones fill at most half of it, the dead slots are
// squeezed out (renumbering the live ones upward from the tail), otherwise
// the ring doubles until they fit. A squeeze frees at least half the ring
// for the touches that follow, so its walk costs at most two slot visits
// per touch; squeezing only at a quarter doubled the rings once more than
// needed (every request re-touches its shared prefix, leaving that many
// dead slots), and the doublings' fresh memory was a tenth of a
// 1,000-request run's CPU.
func (x *prefixIndex) ringRoom(inst, n int) {
	r := &x.rings[inst]
	if r.head-r.tail+uint64(n) <= uint64(len(r.entries)) {
		return
	}
	mask := uint64(len(r.entries) - 1)
	if 2*(r.count+n) <= len(r.entries) {
		w := r.tail
		for p := r.tail; p < r.head; p++ {
			switch s := r.entries[p&mask]; {
			case s == deadSlot:
				continue
			case s&streamSlot != 0:
				h, k := splitStreamSlot(s)
				x.streams.holds[h].pos[k] = w + 1
				r.entries[w&mask] = s
			case s != privateSlot:
				x.setPosition(int32(s), inst, w)
				fallthrough
			default:
				r.entries[w&mask] = s
			}
			w++
		}
		r.head = w
		return
	}
	size := 2 * len(r.entries)
	for r.head-r.tail+uint64(n) > uint64(size) {
		size *= 2
	}
	entries := make([]uint64, size)
	for p := r.tail; p < r.head; p++ {
		entries[p&uint64(size-1)] = r.entries[p&mask]
	}
	r.entries = entries
}
