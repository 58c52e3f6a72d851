package kv

import "fmt"

// Check verifies the cache's internal invariants against the sequences
// that hold blocks: reference counts equal holders, the used count and the
// free list agree, and every index entry names a live block with that
// hash. It is for tests and debugging; it walks every block.
func (c *Cache) Check(seqs []*Seq) error {
	holders := make(map[blockAt]int32)
	for _, s := range seqs {
		s.settle() // a derived length; settling changes nothing else
		var n int32
		var spans []span // a sequence that holds no block lists its last attempt's
		if s.Blocks > 0 {
			spans = s.spans
		}
		for _, sp := range spans {
			if sp.lo != n {
				return fmt.Errorf("sequence spans skip from block %d to %d", n, sp.lo)
			}
			if c.copies[sp.copy].gen != sp.gen {
				return fmt.Errorf("sequence holds a span of recycled copy %d", sp.copy)
			}
			for k := sp.lo; k < sp.lo+sp.n; k++ {
				holders[blockAt{sp.copy, k}]++
			}
			n += sp.n
		}
		if n != s.Blocks {
			return fmt.Errorf("sequence counts %d blocks, its spans hold %d", s.Blocks, n)
		}
		if max := int64(s.Blocks) * c.blockSize; int64(s.Tokens) > max || int64(s.Tokens) <= max-c.blockSize && s.Blocks > 0 {
			return fmt.Errorf("sequence stores %d tokens in %d blocks", s.Tokens, s.Blocks)
		}
	}
	if err := c.checkCopies(holders); err != nil {
		return err
	}
	if err := c.checkRuns(); err != nil {
		return err
	}
	if err := c.checkTier(); err != nil {
		return err
	}
	var bad error
	c.index.Range(func(h uint64, id int32) {
		if bad == nil && !c.names(id, h) {
			bad = fmt.Errorf("index maps %x to copy %d, which holds no live indexed block with that hash", h, id)
		}
	})
	if bad != nil {
		return bad
	}
	return c.checkStreams()
}

// checkCopies verifies reference counts, the used count and the copies'
// live counts.
func (c *Cache) checkCopies(holders map[blockAt]int32) error {
	free := make(map[int32]bool)
	for _, id := range c.freeCopies {
		free[id] = true
	}
	var used int64
	for id := range c.copies {
		cp := &c.copies[id]
		var live int32
		for i, b := range c.statesOf(cp) {
			k := cp.lo + int32(i)
			if b.refs == dead {
				continue
			}
			live++
			if free[int32(id)] {
				return fmt.Errorf("recycled copy %d has live block %d", id, k)
			}
			refs := b.refs
			if refs == forgotten {
				refs = 0
			}
			if refs != holders[blockAt{int32(id), k}] {
				return fmt.Errorf("copy %d block %d: refcount %d, held by %d", id, k, b.refs, holders[blockAt{int32(id), k}])
			}
			if b.refs > 0 {
				used++
			}
		}
		if !free[int32(id)] && live != cp.live {
			return fmt.Errorf("copy %d counts %d live blocks, has %d", id, cp.live, live)
		}
	}
	if used != c.used {
		return fmt.Errorf("used count %d, but %d blocks are referenced", c.used, used)
	}
	return nil
}

// checkRuns walks the free list: runs are linked both ways, their blocks
// are idle and point back at them, and they hold every free block.
func (c *Cache) checkRuns() error {
	free, prev := int64(0), int32(none)
	for n := c.head; n != none; n = c.runs[n].next {
		r := c.runs[n]
		if r.prev != prev {
			return fmt.Errorf("free list broken at run %d", n)
		}
		cp := &c.copies[r.copy]
		for k := r.first; ; k += r.step() {
			if k < cp.lo || k >= cp.lo+cp.n {
				return fmt.Errorf("run %d names block %d outside copy %d", n, k, r.copy)
			}
			if b := c.at(cp, k); b.refs != 0 && b.refs != forgotten || b.node != n {
				return fmt.Errorf("copy %d block %d in run %d has refcount %d and run %d", r.copy, k, n, b.refs, b.node)
			}
			if free++; free > c.total {
				return fmt.Errorf("free list has a cycle")
			}
			if k == r.last {
				break
			}
		}
		prev = n
	}
	if prev != c.tail {
		return fmt.Errorf("free list tail is %d, walk ended at %d", c.tail, prev)
	}
	if free+c.unused != c.total-c.used {
		return fmt.Errorf("free list holds %d blocks and %d are unused, want %d free", free, c.unused, c.total-c.used)
	}
	return nil
}

// names reports whether copy id holds a live indexed block hashed h.
func (c *Cache) names(id int32, h uint64) bool {
	cp := &c.copies[id]
	for i, b := range c.statesOf(cp) {
		if k := cp.lo + int32(i); b.refs != dead && cp.indexed(k, &b) && c.hash(cp, k) == h {
			return true
		}
	}
	return false
}

// checkStreams verifies that every stream-index entry (a pending run's
// included) names a copy holding that stream block, that each record
// counts the blocks naming it, and that pending runs and records agree.
func (c *Cache) checkStreams() error {
	naming := make(map[int32]int32)
	for id := range c.copies {
		cp := &c.copies[id]
		for i, b := range c.statesOf(cp) {
			if k := cp.lo + int32(i); b.refs != dead && cp.indexed(k, &b) && k >= cp.nprefix {
				naming[cp.stream]++
			}
		}
		if cp.runHi > cp.runLo {
			if cp.stream == none || c.streams.recs[cp.stream].pending != int32(id) {
				return fmt.Errorf("copy %d has a pending run its stream record does not name", id)
			}
			if cp.live == 0 {
				return fmt.Errorf("recycled copy %d has a pending run", id)
			}
		}
	}
	for r, rec := range c.streams.recs {
		if rec.uid == 0 {
			if naming[int32(r)] != 0 {
				return fmt.Errorf("free stream record %d is named by %d blocks", r, naming[int32(r)])
			}
			continue
		}
		if got, ok := c.streams.byUID.Get(rec.uid); !ok || got != int32(r) {
			return fmt.Errorf("stream %x: record %d is not indexed", rec.uid, r)
		}
		blocks, runLo, runHi := rec.blocks, int32(0), int32(0)
		if p := rec.pending; p != none {
			runLo, runHi = c.copies[p].runLo, c.copies[p].runHi
			if runHi <= runLo || c.copies[p].stream != int32(r) {
				return fmt.Errorf("stream %x names copy %d as pending, which has no run for it", rec.uid, p)
			}
			blocks += runHi - runLo
		}
		if blocks != naming[int32(r)] {
			return fmt.Errorf("stream %x counts %d blocks, %d name it", rec.uid, blocks, naming[int32(r)])
		}
		for k := rec.base; k < max(rec.base+int32(len(rec.ids)), runHi); k++ {
			id := int32(none)
			if k >= runLo && k < runHi {
				id = rec.pending
			} else if i := k - rec.base; i < int32(len(rec.ids)) {
				id = rec.ids[i]
			}
			if id == none {
				continue
			}
			cp := &c.copies[id]
			if k < cp.lo || k >= cp.lo+cp.n || cp.uid != rec.uid || cp.stream != int32(r) {
				return fmt.Errorf("stream %x block %d names copy %d, which holds other content", rec.uid, k, id)
			}
			if b := c.at(cp, k); b.refs == dead || !cp.indexed(k, b) {
				return fmt.Errorf("stream %x block %d names copy %d, whose block is not indexed", rec.uid, k, id)
			}
		}
	}
	return nil
}

// checkTier verifies that the CPU tier's LRU list and index agree and that
// it never holds more than its capacity.
func (c *Cache) checkTier() error {
	t := c.tier
	if t == nil {
		return nil
	}
	n := 0
	for slot := t.head; slot != none; slot = t.slots[slot].next {
		if got, ok := t.index.Get(t.slots[slot].hash); !ok || got != slot {
			return fmt.Errorf("CPU slot %d (hash %x) is not indexed", slot, t.slots[slot].hash)
		}
		if n++; n > t.capacity {
			return fmt.Errorf("CPU tier holds more than its %d blocks", t.capacity)
		}
	}
	if n != t.index.Len() {
		return fmt.Errorf("CPU LRU has %d blocks, index %d", n, t.index.Len())
	}
	return nil
}
