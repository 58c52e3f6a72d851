package kv

import "fmt"

// Check verifies the cache's internal invariants against the sequences
// that hold blocks: reference counts equal holders, the used count and the
// free list agree, and every index entry names a block with that hash. It
// is for tests and debugging; it walks every block.
func (c *Cache) Check(seqs []*Seq) error {
	holders := make([]int32, c.total)
	for _, s := range seqs {
		for _, id := range s.IDs {
			holders[id]++
		}
		if max := int64(len(s.IDs)) * c.blockSize; int64(s.Tokens) > max || int64(s.Tokens) <= max-c.blockSize && len(s.IDs) > 0 {
			return fmt.Errorf("sequence stores %d tokens in %d blocks", s.Tokens, len(s.IDs))
		}
	}
	var used int64
	for id := int32(0); id < c.fresh; id++ {
		if c.blocks.at(id).refs != holders[id] {
			return fmt.Errorf("block %d: refcount %d, held by %d", id, c.blocks.at(id).refs, holders[id])
		}
		if c.blocks.at(id).refs > 0 {
			used++
		}
	}
	if used != c.used {
		return fmt.Errorf("used count %d, but %d blocks are referenced", c.used, used)
	}
	free, prev := int64(0), int32(none)
	for id := c.head; id != none; id = c.blocks.at(id).next {
		if c.blocks.at(id).refs != 0 {
			return fmt.Errorf("block %d on the free list with refcount %d", id, c.blocks.at(id).refs)
		}
		if c.blocks.at(id).prev != prev {
			return fmt.Errorf("free list broken at block %d", id)
		}
		prev = id
		if free++; free > c.total {
			return fmt.Errorf("free list has a cycle")
		}
	}
	if prev != c.tail {
		return fmt.Errorf("free list tail is %d, walk ended at %d", c.tail, prev)
	}
	free += c.total - int64(c.fresh)
	if free != c.total-c.used {
		return fmt.Errorf("free list holds %d blocks, want %d", free, c.total-c.used)
	}
	if err := c.checkTier(); err != nil {
		return err
	}
	var bad error
	c.index.Range(func(h uint64, id int32) {
		if (c.blocks.at(id).hash != h || !c.blocks.at(id).indexed) && bad == nil {
			bad = fmt.Errorf("index maps %x to block %d whose hash is %x", h, id, c.blocks.at(id).hash)
		}
	})
	if bad != nil {
		return bad
	}
	return c.checkStreams()
}

// checkStreams verifies that every stream-index entry names a block holding
// that stream block, and that each record counts the blocks naming it.
func (c *Cache) checkStreams() error {
	naming := make(map[int32]int32)
	for id := int32(0); id < c.fresh; id++ {
		if b := c.blocks.at(id); b.indexed && b.stream != none {
			naming[b.stream]++
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
		if rec.blocks != naming[int32(r)] {
			return fmt.Errorf("stream %x counts %d blocks, %d name it", rec.uid, rec.blocks, naming[int32(r)])
		}
		for i, id := range rec.ids {
			if id == none {
				continue
			}
			b := c.blocks.at(id)
			if k := rec.base + int32(i); !b.indexed || b.stream != int32(r) || b.k != k || b.hash != streamHash(rec.uid, uint64(k)) {
				return fmt.Errorf("stream %x block %d names block %d, which holds other content", rec.uid, rec.base+int32(i), id)
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
