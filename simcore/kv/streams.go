package kv

import (
	"optimize/simcore/internal/freelist"
	"optimize/simcore/internal/u64map"
)

// streamIndex is the part of the prefix index that holds stream blocks
// (block k ≥ len(Prefix) of a content, named by (UID, k)): one record per
// stream, the copy registered for each of its blocks, in sequence order. A multi-turn session registers
// every block it fills for its next round, so these entries churn with
// every request; kept per stream they are one map lookup per request and
// then array writes in one place, where a hash table keyed by block costs
// two random memory accesses per block.
//
// It behaves exactly like hash → block entries: registering a block
// overwrites the entry, and evicting a block deletes its entry even when a
// newer duplicate owns it (BLIS does the same).
type streamIndex struct {
	// byUID: stream UID → record. A request's lookup and its first
	// registration ask for the same UID in a row, so it remembers.
	byUID *u64map.Memo
	recs  []streamRec
	free  []int32 // records no block names
	// spareIDs are the entry arrays of freed records. Most live records
	// have had no entry written yet (their copies keep their runs pending),
	// so arrays go with entries, not with records.
	spareIDs [][]int32
}

type streamRec struct {
	uid    uint64  // 0 = free record
	base   int32   // sequence index of ids[0]: len(Prefix)
	blocks int32   // indexed blocks that name this record, pending ones aside
	ids    []int32 // copy registered for sequence block base+i, or none
	// pending is the copy whose latest run of registered blocks is not
	// written into ids yet (see Cache.registerStream), or none.
	pending int32
}

func newStreamIndex() streamIndex { return streamIndex{byUID: u64map.NewMemo(256)} }

// find returns uid's record or none.
func (x *streamIndex) find(uid uint64) int32 {
	if r, ok := x.byUID.Get(uid); ok {
		return r
	}
	return none
}

// get returns the copy registered for sequence block k of record r, or none.
func (x *streamIndex) get(r int32, k int) int32 {
	rec := &x.recs[r]
	if i := k - int(rec.base); i < len(rec.ids) {
		return rec.ids[i]
	}
	return none
}

// set registers copy id for sequence block k of stream uid (whose stream
// blocks start at base) and returns the stream's record; hint is the
// record the copy's earlier blocks named, or none.
func (x *streamIndex) set(hint int32, uid uint64, base int32, k int, id int32) int32 {
	r := x.locate(hint, uid, base)
	rec := &x.recs[r]
	switch i := k - int(rec.base); {
	case i < len(rec.ids):
		rec.ids[i] = id
	case i == len(rec.ids) && i < cap(rec.ids):
		rec.ids = append(rec.ids, id) // the next block of a growing stream
	default:
		x.grow(rec, i+1)
		rec.ids[i] = id
	}
	rec.blocks++
	return r
}

// locate returns the record of stream uid (whose stream blocks start at
// base), made if there is none; hint is the record it probably is, or none.
func (x *streamIndex) locate(hint int32, uid uint64, base int32) int32 {
	if hint != none && x.recs[hint].uid == uid {
		return hint
	}
	if r := x.find(uid); r != none {
		return r
	}
	return x.create(uid, base)
}

// setRun registers copy id for sequence blocks [lo, hi) of record r.
func (x *streamIndex) setRun(r, lo, hi, id int32) {
	rec := &x.recs[r]
	if n := int(hi - rec.base); n > len(rec.ids) {
		x.grow(rec, n)
	}
	for i := lo - rec.base; i < hi-rec.base; i++ {
		rec.ids[i] = id
	}
	rec.blocks += hi - lo
}

// minIDs is the least capacity of a record's entry array.
const minIDs = 64

// grow extends rec's entries to n, the new ones none.
func (x *streamIndex) grow(rec *streamRec, n int) {
	if k := len(x.spareIDs); rec.ids == nil && n <= minIDs && k > 0 {
		rec.ids = x.spareIDs[k-1]
		x.spareIDs = x.spareIDs[:k-1]
	}
	if n > cap(rec.ids) {
		ids := make([]int32, len(rec.ids), max(n, 2*cap(rec.ids), minIDs))
		copy(ids, rec.ids)
		rec.ids = ids
	}
	old := len(rec.ids)
	rec.ids = rec.ids[:n]
	for j := old; j < n; j++ {
		rec.ids[j] = none
	}
}

func (x *streamIndex) create(uid uint64, base int32) int32 {
	r := freelist.Take(&x.recs, &x.free)
	x.recs[r].uid, x.recs[r].base, x.recs[r].pending = uid, base, none
	x.byUID.Set(uid, r)
	return r
}

// evict deletes the entry of sequence block k of record r, whichever copy
// it names, for an evicted block that was registered there; the record is
// freed with the last such block.
func (x *streamIndex) evict(r, k int32) {
	rec := &x.recs[r]
	rec.ids[k-rec.base] = none
	if rec.blocks--; rec.blocks == 0 {
		x.byUID.Delete(rec.uid)
		if cap(rec.ids) == minIDs {
			x.spareIDs = append(x.spareIDs, rec.ids[:0])
		}
		rec.uid, rec.ids = 0, nil
		x.free = append(x.free, r)
	}
}
