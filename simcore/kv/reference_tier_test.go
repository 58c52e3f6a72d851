package kv

// The reference cache's CPU-tier calls that touch GPU blocks (see
// reference_test.go); the tier itself is the cache's.

func (c *refCache) EnableTier(cfg TierConfig) { c.enableTier(cfg, c.blockSize) }

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
