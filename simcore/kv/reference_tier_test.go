package kv

// The reference cache's stream index and CPU tier (see reference_test.go).

import (
	"math"

	"optimize/simcore/internal/freelist"
	"optimize/simcore/internal/u64map"
)

type refStreamIndex struct {
	byUID *u64map.Map // stream UID → record
	recs  []refStreamRec
	free  []int32 // records no refBlock names
}

type refStreamRec struct {
	uid    uint64  // 0 = free record
	base   int32   // sequence index of ids[0]: len(Prefix)
	blocks int32   // indexed blocks that name this record
	ids    []int32 // refBlock registered for sequence refBlock base+i, or none
}

func newRefStreamIndex() refStreamIndex { return refStreamIndex{byUID: u64map.New(256)} }

func (x *refStreamIndex) find(hint *int32, uid uint64) int32 {
	if h := *hint; h >= 0 && int(h) < len(x.recs) && x.recs[h].uid == uid {
		return h
	}
	r, ok := x.byUID.Get(uid)
	if !ok {
		return none
	}
	*hint = r
	return r
}

func (x *refStreamIndex) get(r int32, k int) int32 {
	rec := &x.recs[r]
	if i := k - int(rec.base); i < len(rec.ids) {
		return rec.ids[i]
	}
	return none
}

func (x *refStreamIndex) set(hint *int32, content *Content, k int, id int32) int32 {
	r := x.find(hint, content.UID)
	if r == none {
		r = x.create(content.UID, int32(len(content.Prefix)))
		*hint = r
	}
	rec := &x.recs[r]
	i := k - int(rec.base)
	if i >= len(rec.ids) {
		rec.grow(i + 1)
	}
	rec.ids[i] = id
	rec.blocks++
	return r
}

func (rec *refStreamRec) grow(n int) {
	if n > cap(rec.ids) {
		ids := make([]int32, len(rec.ids), max(n, 2*cap(rec.ids), 64))
		copy(ids, rec.ids)
		rec.ids = ids
	}
	old := len(rec.ids)
	rec.ids = rec.ids[:n]
	for j := old; j < n; j++ {
		rec.ids[j] = none
	}
}

func (x *refStreamIndex) create(uid uint64, base int32) int32 {
	r := freelist.Take(&x.recs, &x.free)
	x.recs[r].uid, x.recs[r].base = uid, base
	x.byUID.Set(uid, r)
	return r
}

func (x *refStreamIndex) evict(r, k int32) {
	rec := &x.recs[r]
	rec.ids[k-rec.base] = none
	if rec.blocks--; rec.blocks == 0 {
		x.byUID.Delete(rec.uid)
		rec.uid, rec.ids = 0, rec.ids[:0]
		x.free = append(x.free, r)
	}
}

type refCPUTier struct {
	index      *u64map.Map // hash → slot
	slots      []refCPUSlot
	head, tail int32 // LRU order, oldest first
	free       []int32
	capacity   int

	threshold float64
	cost      int64 // µs per reloaded refBlock
	unswept   bool  // an idle hashed refBlock entered the free list below the threshold

	offloaded, reloaded, thrashed int64
	transferred                   int64 // µs charged to steps
}

type refCPUSlot struct {
	hash       uint64
	offloadAt  int64
	prev, next int32
}

func (c *refCache) EnableTier(cfg TierConfig) {
	c.tier = &refCPUTier{
		index:     u64map.New(int(min(cfg.Blocks, 1024))),
		head:      none,
		tail:      none,
		capacity:  int(cfg.Blocks),
		threshold: cfg.Threshold,
		cost:      cfg.BaseLatency + int64(math.Ceil(float64(c.blockSize)/cfg.Bandwidth)),
	}
}

func (c *refCache) SetClock(now int64) { c.clock = now }

func (c *refCache) TierStats() TierStats {
	if c.tier == nil {
		return TierStats{}
	}
	t := c.tier
	return TierStats{Offloaded: t.offloaded, Reloaded: t.reloaded, Thrashed: t.thrashed, TransferUs: t.transferred}
}

func (c *refCache) ThrashingRate() float64 {
	if c.tier == nil || c.tier.offloaded == 0 {
		return 0
	}
	return float64(c.tier.thrashed) / float64(c.tier.offloaded)
}

func (c *refCache) TakeTransfer() int64 {
	p := c.pending
	c.pending = 0
	if c.tier != nil {
		c.tier.transferred += p
	}
	return p
}

func (c *refCache) CPUPrefix(content *Content, from int) int {
	if c.tier == nil {
		return 0
	}
	n := 0
	for k := from; k < int(content.Input); k++ {
		if _, ok := c.tier.index.Get(content.Hash(k)); !ok {
			break
		}
		n++
	}
	return n
}

func (c *refCache) reload(s *refSeq, content *Content, k int) {
	t := c.tier
	h := content.Hash(k)
	slot, _ := t.index.Get(h)
	if c.clock > 0 && c.clock-t.slots[slot].offloadAt < thrashWindow {
		t.thrashed++
	}
	t.remove(slot)
	id := c.pop()
	c.blocks.at(id).refs = 1
	c.used++
	c.hits++
	c.register(s, id, content, int64(k))
	s.IDs = append(s.IDs, id)
	s.Tokens += int32(c.blockSize)
	c.pending += t.cost
	t.reloaded++
}

func (c *refCache) afterRelease(released []int32) {
	t := c.tier
	if float64(c.used) <= t.threshold*float64(c.total) {
		for _, id := range released {
			if b := c.blocks.at(id); b.refs == 0 && b.hash != 0 {
				t.unswept = true
			}
		}
		return
	}
	if t.unswept {
		t.unswept = false
		for id := c.head; id != none; id = c.blocks.at(id).next {
			c.offload(id)
		}
		return
	}
	for i := len(released) - 1; i >= 0; i-- { // release order: last refBlock first
		c.offload(released[i])
	}
}

func (c *refCache) offload(id int32) {
	b := c.blocks.at(id)
	if b.refs != 0 || b.hash == 0 {
		return
	}
	c.tier.put(b.hash, c.clock)
	c.forget(b)
	c.tier.offloaded++
}

func (t *refCPUTier) put(h uint64, at int64) {
	if slot, ok := t.index.Get(h); ok {
		t.remove(slot) // offloaded again: refresh
	}
	if t.index.Len() >= t.capacity {
		t.remove(t.head)
	}
	slot := freelist.Take(&t.slots, &t.free)
	t.slots[slot] = refCPUSlot{hash: h, offloadAt: at, prev: t.tail, next: none}
	if t.tail != none {
		t.slots[t.tail].next = slot
	} else {
		t.head = slot
	}
	t.tail = slot
	t.index.Set(h, slot)
}

func (t *refCPUTier) remove(slot int32) {
	s := &t.slots[slot]
	if s.prev != none {
		t.slots[s.prev].next = s.next
	} else {
		t.head = s.next
	}
	if s.next != none {
		t.slots[s.next].prev = s.prev
	} else {
		t.tail = s.prev
	}
	t.index.Delete(s.hash)
	t.free = append(t.free, slot)
}
