package kv

import (
	"math"

	"optimize/simcore/internal/freelist"
	"optimize/simcore/internal/u64map"
)

// TierConfig describes a CPU tier behind the GPU pool.
type TierConfig struct {
	Blocks      int64   // CPU capacity in blocks (> 0)
	Threshold   float64 // GPU utilisation above which idle cached blocks are offloaded
	Bandwidth   float64 // BLIS's "blocks per µs": a block costs ceil(blockSize/Bandwidth) µs
	BaseLatency int64   // µs added per reloaded block, as BLIS charges it
}

// thrashWindow is BLIS's thrashing rule: a block reloaded within 1000 µs of
// its offload was moved for nothing.
const thrashWindow = 1000

// cpuTier is an LRU of offloaded block hashes. Unlike BLIS at 7fd7a88d,
// whose CPU tier stopped offloading when full, it evicts its least
// recently offloaded block, as vLLM's offloading connector does.
type cpuTier struct {
	index      *u64map.Map // hash → slot
	slots      []cpuSlot
	head, tail int32 // LRU order, oldest first
	free       []int32
	capacity   int

	threshold float64
	cost      int64 // µs per reloaded block
	unswept   bool  // an idle hashed block entered the free list below the threshold

	offloaded, reloaded, thrashed int64
	transferred                   int64 // µs charged to steps

	observe func(hash uint64, stored bool) // hears every entry and exit, nil if none
}

type cpuSlot struct {
	hash       uint64
	offloadAt  int64
	prev, next int32
}

// tiering is a cache's CPU-tier state and the calls on it that involve no
// GPU block; both the cache and the test reference embed it.
type tiering struct {
	tier       *cpuTier // CPU offload tier, nil when single-tier
	clock      int64    // current time, for offload stamps
	pending    int64    // reload µs not yet charged to a step
	observeCPU func(hash uint64, stored bool)
}

// ObserveCPU makes fn hear every block entering or leaving the CPU tier
// (nil stops it), as vLLM's offloading connector reports them in its KV
// events with medium CPU.
func (c *tiering) ObserveCPU(fn func(hash uint64, stored bool)) {
	c.observeCPU = fn
	if c.tier != nil {
		c.tier.observe = fn
	}
}

// EnableTier puts a CPU tier behind the cache.
func (c *Cache) EnableTier(cfg TierConfig) { c.enableTier(cfg, c.blockSize) }

func (c *tiering) enableTier(cfg TierConfig, blockSize int64) {
	c.tier = &cpuTier{
		// Small at first: most runs offload a fraction of a 44k-block tier,
		// many nothing at all (a GPU KV that never reaches the offload
		// threshold), and zeroing a full-size table per instance and run
		// was a quarter of a study's CPU time. The map grows as blocks
		// arrive.
		index:     u64map.New(int(min(cfg.Blocks, 64))),
		head:      none,
		tail:      none,
		capacity:  int(cfg.Blocks),
		threshold: cfg.Threshold,
		cost:      cfg.BaseLatency + int64(math.Ceil(float64(blockSize)/cfg.Bandwidth)),
		observe:   c.observeCPU,
	}
}

// SetClock tells the cache the time, for offload stamps and thrashing.
func (c *tiering) SetClock(now int64) { c.clock = now }

// TierStats are the CPU tier's cumulative counters.
type TierStats struct {
	Offloaded, Reloaded, Thrashed int64
	TransferUs                    int64 // reload time charged to steps
}

// TierStats returns the tier's counters (zero without a tier).
func (c *tiering) TierStats() TierStats {
	if c.tier == nil {
		return TierStats{}
	}
	t := c.tier
	return TierStats{Offloaded: t.offloaded, Reloaded: t.reloaded, Thrashed: t.thrashed, TransferUs: t.transferred}
}

// ThrashingRate is thrashing reloads per offload.
func (c *tiering) ThrashingRate() float64 {
	if c.tier == nil || c.tier.offloaded == 0 {
		return 0
	}
	return float64(c.tier.thrashed) / float64(c.tier.offloaded)
}

// TakeTransfer returns the reload time accumulated since the last call and
// clears it: the engine adds it to the step that loads the blocks, so every
// co-batched request pays it.
func (c *tiering) TakeTransfer() int64 {
	p := c.pending
	c.pending = 0
	if c.tier != nil {
		c.tier.transferred += p
	}
	return p
}

// CPUPrefix returns how many blocks, from block from on, the CPU tier
// holds in an unbroken run of the request's input: the part of its prefix
// a reload would bring back.
func (c *tiering) CPUPrefix(content *Content, from int) int {
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

// reload brings content block k back from the CPU into a fresh GPU block
// committed to s; capacity was checked by the caller.
func (c *Cache) reload(s *Seq, content *Content, k int32) {
	t := c.tier
	h := content.Hash(int(k))
	slot, _ := t.index.Get(h)
	if c.clock > 0 && c.clock-t.slots[slot].offloadAt < thrashWindow {
		t.thrashed++
	}
	t.remove(slot)
	c.ownSpan(s, content)
	c.pop()
	id := c.grow(s)
	c.hits++
	c.register(id, k)
	s.Tokens += int32(c.blockSize)
	c.pending += t.cost
	t.reloaded++
}

// afterRelease offloads idle cached blocks while GPU use is above the
// threshold: the blocks just released, and every older idle one the first
// time the threshold is crossed. Offloaded blocks stay where they are on
// the free list, now empty (BLIS moves them to the tail; an empty block's
// position changes nothing).
func (c *Cache) afterRelease(released []blockAt) {
	t := c.tier
	if c.belowOffload() {
		for _, b := range released {
			if cp := &c.copies[b.copy]; c.at(cp, b.k).refs == 0 && cp.hashed(b.k, c.at(cp, b.k)) {
				t.unswept = true
				break
			}
		}
		return
	}
	if t.unswept {
		t.unswept = false
		for n := c.head; n != none; n = c.runs[n].next {
			r := c.runs[n]
			for k := r.first; ; k += r.step() {
				c.offload(r.copy, k)
				if k == r.last {
					break
				}
			}
		}
		return
	}
	for _, b := range released { // in release order: last block first
		c.offload(b.copy, b.k)
	}
}

// belowOffload reports whether GPU use is at or below the CPU tier's
// offload threshold, where nothing is offloaded.
func (c *Cache) belowOffload() bool { return float64(c.used) <= c.tier.threshold*float64(c.total) }

// offload moves an idle hashed block's content to the CPU tier.
func (c *Cache) offload(id, k int32) {
	cp := &c.copies[id]
	if b := c.at(cp, k); b.refs != 0 || !cp.hashed(k, b) {
		return
	}
	c.tier.put(c.hash(cp, k), c.clock)
	c.forget(id, k)
	c.tier.offloaded++
}

// put records h as offloaded at time at, evicting the LRU entry if full.
func (t *cpuTier) put(h uint64, at int64) {
	held := false
	if slot, ok := t.index.Get(h); ok {
		// Offloaded again: refreshed, and still held (no event).
		observe := t.observe
		t.observe = nil
		t.remove(slot)
		t.observe, held = observe, true
	}
	if t.index.Len() >= t.capacity {
		t.remove(t.head)
	}
	slot := freelist.Take(&t.slots, &t.free)
	t.slots[slot] = cpuSlot{hash: h, offloadAt: at, prev: t.tail, next: none}
	if t.tail != none {
		t.slots[t.tail].next = slot
	} else {
		t.head = slot
	}
	t.tail = slot
	t.index.Set(h, slot)
	if t.observe != nil && !held {
		t.observe(h, true)
	}
}

func (t *cpuTier) remove(slot int32) {
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
	if t.observe != nil {
		t.observe(s.hash, false)
	}
}
