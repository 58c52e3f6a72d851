package route

import "math/bits"

// entryTable is the prefix index's hash table: it maps a block hash to the
// entry that holds it, by linear probing over two parallel arrays. Probing
// reads the one-byte tags (8 bits of the hash, 0 for an empty slot) and
// reads further only on a tag match; the hash itself lives in the entry's
// record, read to confirm the match.
//
// Freeing an entry does not touch the table: at steady state each new block
// evicts one recorded thousands of requests earlier, and clearing its slot
// would cost a cache miss per eviction. The stale slot simply stops
// matching (find checks that the entry is in use and still carries the
// hash), and stale slots are dropped wholesale when the table is rebuilt
// from the entries in use, which happens when used slots reach half the
// table. The table is kept large enough (at least 8 slots per entry in use)
// that rebuilds are rare.
type entryTable struct {
	tags      []uint8
	slotEntry []int32
	shift     uint // 64 - log2(slot count)
	used      int  // non-empty slots, stale ones included
}

// hashOf gives key's home slot and tag. Block hashes are well mixed
// already; the bijective mix keeps structured test keys spread too.
func (t *entryTable) hashOf(key uint64) (home int, tag uint8) {
	m := key * 0x9e3779b97f4a7c15
	m ^= m >> 32
	m *= 0xd6e8feb86659fd93
	tag = uint8(m >> 24)
	if tag == 0 {
		tag = 1
	}
	return int(m >> t.shift), tag
}

func (t *entryTable) resize(size int) {
	t.tags = make([]uint8, size)
	t.slotEntry = make([]int32, size)
	t.shift = uint(64 - bits.TrailingZeros(uint(size)))
	t.used = 0
}

// find returns the entry in use that holds h and its slot, or, when there
// is none, noEntry and the empty slot where h would go (valid until the
// table changes).
func (x *prefixIndex) find(h uint64) (e int32, slot int) {
	t := &x.table
	mask := len(t.tags) - 1
	s, tag := t.hashOf(h)
	for ; t.tags[s] != 0; s = (s + 1) & mask {
		if t.tags[s] == tag && x.holdsKey(t.slotEntry[s], h) {
			return t.slotEntry[s], s
		}
	}
	return noEntry, s
}

// holdsKey reports whether entry e is in use for hash h. An entry is in
// use while some instance holds it, and from its creation until record
// gives it its first holder, which happens before the table is probed
// again.
func (x *prefixIndex) holdsKey(e int32, h uint64) bool {
	rec := x.records[int(e)*x.stride:]
	return rec[keyWord] == h && rec[holdersWord] != 0
}

// occupy records h → e in the empty slot s that find returned for h.
func (x *prefixIndex) occupy(s int, h uint64, e int32) {
	t := &x.table
	_, t.tags[s] = t.hashOf(h)
	t.slotEntry[s] = e
	t.used++
}

// reserve makes room for n more hashes, rebuilding the table when stale
// slots have filled it, and reports whether slots moved.
func (x *prefixIndex) reserve(n int) bool {
	t := &x.table
	if 2*(t.used+n) <= len(t.tags) {
		return false
	}
	x.epoch++ // every slot moves
	inUse := len(x.records)/x.stride - len(x.free)
	size := len(t.tags)
	for size < 8*(inUse+n) {
		size *= 2
	}
	if size == len(t.tags) {
		clear(t.tags) // entries of empty slots are never read
		t.used = 0
	} else {
		t.resize(size)
	}
	for e := range int32(len(x.records) / x.stride) {
		if x.holders(e) != 0 { // in use; nothing is mid-creation here
			h := x.key(e)
			_, s := x.find(h)
			x.occupy(s, h, e)
		}
	}
	return true
}
