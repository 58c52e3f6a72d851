package kv

// refCache is the block-table cache this package used before copies
// (sessions 1-4), with per-block records, block ids and an intrusive LRU
// list: a direct transcription of BLIS's mechanics. It is kept, test-only,
// as the reference FuzzMatchesReference checks the copy cache against.

import "optimize/simcore/internal/u64map"

type refSeq struct {
	Tokens int32
	IDs    []int32
	Prev   []int32
}

type refCache struct {
	blockSize int64
	total     int64
	used      int64

	blocks     refBlockTable
	head, tail int32 // free list of blocks released at least once, LRU first
	fresh      int32

	index   *u64map.Map // prefix blocks: hash → refBlock id (the newest registered)
	streams streamIndex // stream blocks: (UID, k) → refBlock id, likewise

	hits, misses int64
	scratch      []int32
	lists        [][]int32 // spare refBlock-id lists for requests being admitted

	tiering
	observe func(hash uint64, stored bool)
}

type refBlock struct {
	hash       uint64 // content hash of a full, hashed refBlock; 0 = none
	refs       int32
	prev, next int32 // free-list links
	stream, k  int32
	indexed    bool // hash is in the prefix index (a shareable refBlock)
}

func newRef(total, blockSize int64) *refCache {
	return &refCache{
		blockSize: blockSize,
		total:     total,
		index:     u64map.New(1024),
		streams:   newStreamIndex(),
		head:      none,
		tail:      none,
	}
}

func (c *refCache) Used() int64 { return c.used }

func (c *refCache) Free() int64 { return c.total - c.used }

func (c *refCache) Lookup(s *refSeq, content *Content) []int32 {
	out := c.scratch[:0]
	stream := int32(none)
	for k := 0; k < int(content.Input); k++ {
		if k < int(content.Shared) {
			id := c.indexed(s, content, k, &stream)
			if id == none {
				break
			}
			out = append(out, id)
			continue
		}
		if k >= len(s.Prev) || c.blocks.at(s.Prev[k]).hash != content.Hash(k) {
			break
		}
		out = append(out, s.Prev[k])
	}
	c.scratch = out
	return out
}

func (c *refCache) indexed(s *refSeq, content *Content, k int, stream *int32) int32 {
	if k < len(content.Prefix) {
		if id, ok := c.index.Get(content.Prefix[k]); ok {
			return id
		}
		return none
	}
	if *stream == none {
		if *stream = c.streams.find(content.UID); *stream == none {
			return none
		}
	}
	return c.streams.get(*stream, k)
}

func (c *refCache) Contains(content *Content, k int) bool {
	stream := int32(none)
	return c.indexed(&refSeq{}, content, k, &stream) != none
}

func (c *refCache) Need(s *refSeq, n int64) int64 {
	spare := int64(len(s.IDs))*c.blockSize - int64(s.Tokens)
	if n -= spare; n <= 0 {
		return 0
	}
	return (n + c.blockSize - 1) / c.blockSize
}

func (c *refCache) AllocateReload(s *refSeq, content *Content, cached []int32, reload int, n int64) bool {
	if n <= 0 {
		return true
	}
	if len(s.IDs) > 0 {
		cached, reload = nil, 0
	}
	if s.IDs == nil {
		s.IDs = c.takeList()
	}
	need := c.Need(s, n) // committed cached blocks are full: no spare
	if need > c.Free() {
		return false
	}
	idleCached := int64(0)
	for _, id := range cached {
		if c.blocks.at(id).refs == 0 {
			idleCached++
		}
	}
	if need+idleCached+int64(reload) > c.Free() {
		for _, id := range cached {
			if c.blocks.at(id).refs == 0 {
				c.unlink(id)
				c.pushTail(id)
			}
		}
		return false
	}
	for _, id := range cached {
		if c.blocks.at(id).refs == 0 {
			c.unlink(id)
			c.used++
		}
		c.blocks.at(id).refs++
		c.hits++
		s.IDs = append(s.IDs, id)
		s.Tokens += int32(c.blockSize)
	}
	for k := len(cached); k < len(cached)+reload; k++ {
		c.reload(s, content, k)
	}
	c.store(s, content, n)
	return true
}

func (c *refCache) AppendToken(s *refSeq, content *Content) bool {
	if int64(s.Tokens) < int64(len(s.IDs))*c.blockSize {
		s.Tokens++
		if int64(s.Tokens)%c.blockSize == 0 {
			c.register(s, s.IDs[len(s.IDs)-1], content, int64(s.Tokens)/c.blockSize-1)
		}
		return true
	}
	if c.used == c.total {
		return false
	}
	c.store(s, content, 1)
	return true
}

func (c *refCache) store(s *refSeq, content *Content, n int64) {
	bs := c.blockSize
	if spare := int64(len(s.IDs))*bs - int64(s.Tokens); spare > 0 {
		k := min(spare, n)
		s.Tokens += int32(k)
		n -= k
		if int64(s.Tokens)%bs == 0 {
			c.register(s, s.IDs[len(s.IDs)-1], content, int64(s.Tokens)/bs-1)
		}
	}
	if s.IDs == nil {
		s.IDs = c.takeList()
	}
	for n > 0 {
		id := c.pop()
		c.blocks.at(id).refs = 1
		c.used++
		c.misses++
		s.IDs = append(s.IDs, id)
		k := min(bs, n)
		s.Tokens += int32(k)
		n -= k
		if k == bs {
			c.register(s, id, content, int64(len(s.IDs)-1))
		}
	}
}

func (c *refCache) register(s *refSeq, id int32, content *Content, k int64) {
	if k >= int64(content.Total) {
		return
	}
	b := c.blocks.at(id)
	b.hash = content.Hash(int(k))
	if b.indexed = k < int64(content.Shared); b.indexed {
		if k < int64(len(content.Prefix)) {
			c.index.Set(b.hash, id)
			b.stream = none
		} else {
			b.stream, b.k = c.streams.set(none, content.UID, int32(len(content.Prefix)), int(k), id), int32(k)
		}
		if c.observe != nil {
			c.observe(b.hash, true)
		}
	}
}

func (c *refCache) forget(b *refBlock) {
	if b.indexed {
		if b.stream == none {
			c.index.Delete(b.hash)
		} else {
			c.streams.evict(b.stream, b.k)
		}
		if c.observe != nil {
			c.observe(b.hash, false)
		}
	}
	b.hash, b.indexed = 0, false
}

func (c *refCache) Observe(fn func(hash uint64, stored bool)) { c.observe = fn }

func (c *refCache) Release(s *refSeq) {
	for i := len(s.IDs) - 1; i >= 0; i-- {
		id := s.IDs[i]
		b := c.blocks.at(id)
		if b.refs--; b.refs == 0 {
			c.used--
			c.pushTail(id)
		}
	}
	if c.tier != nil {
		c.afterRelease(s.IDs)
	}
	s.IDs, s.Prev, s.Tokens = s.Prev[:0], s.IDs, 0
}

func (c *refCache) Retire(s *refSeq) {
	c.Release(s)
	for _, l := range [][]int32{s.IDs, s.Prev} {
		if cap(l) > 0 {
			c.lists = append(c.lists, l[:0])
		}
	}
	s.IDs, s.Prev = nil, nil
}

func (c *refCache) takeList() []int32 {
	if n := len(c.lists); n > 0 {
		l := c.lists[n-1]
		c.lists = c.lists[:n-1]
		return l
	}
	return make([]int32, 0, 64)
}

func (c *refCache) pop() int32 {
	if c.fresh < int32(c.total) {
		c.blocks.grow(c.fresh)
		c.fresh++
		return c.fresh - 1
	}
	id := c.head
	c.unlink(id)
	if b := c.blocks.at(id); b.hash != 0 {
		c.forget(b)
	}
	return id
}

func (c *refCache) pushTail(id int32) {
	b := c.blocks.at(id)
	b.prev, b.next = c.tail, none
	if c.tail != none {
		c.blocks.at(c.tail).next = id
	} else {
		c.head = id
	}
	c.tail = id
}

func (c *refCache) unlink(id int32) {
	b := c.blocks.at(id)
	p, n := b.prev, b.next
	if p != none {
		c.blocks.at(p).next = n
	} else {
		c.head = n
	}
	if n != none {
		c.blocks.at(n).prev = p
	} else {
		c.tail = p
	}
	b.prev, b.next = none, none
}

type refBlockTable struct {
	chunks [][]refBlock
}

const refChunkBits = 12 // 4096 blocks (128 KiB) per chunk

func (t *refBlockTable) at(id int32) *refBlock {
	return &t.chunks[id>>refChunkBits][id&(1<<refChunkBits-1)]
}

func (t *refBlockTable) grow(id int32) {
	if int(id>>refChunkBits) == len(t.chunks) {
		t.chunks = append(t.chunks, make([]refBlock, 1<<refChunkBits))
	}
}
