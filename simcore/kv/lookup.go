package kv

import "optimize/simcore/internal/prefixmemo"

// Hit is the result of a Lookup: the leading cached blocks of a request.
type Hit struct {
	Blocks int
	spans  []span
}

// Lookup returns the longest run of leading input blocks whose hashes are
// cached: the shared ones through the prefix index, the private ones among
// the blocks s held in its last attempt. The result is valid until the
// next Lookup.
func (c *Cache) Lookup(s *Seq, content *Content) Hit {
	out := c.hit[:0]
	// The leading prefix blocks: from the memo while the prefix index is
	// as it was (most requests share one system prompt), else probed.
	prefix := min(content.Input, content.Shared, int32(len(content.Prefix)))
	k := int32(0)
	key := prefixmemo.KeyOf(content.Prefix, int(prefix), c.indexEpoch)
	if m := &c.memo; m.key.Matches(key) {
		out, k = append(out, m.spans...), m.k
	} else {
		for ; k < prefix; k++ {
			id, ok := c.index.Get(content.Prefix[k])
			if !ok {
				break
			}
			out = c.extend(out, id, k)
		}
		m.key, m.k, m.spans = key, k, append(m.spans[:0], out...)
	}
	if k < prefix {
		c.hit = out
		return Hit{Blocks: int(k), spans: out}
	}
	stream := int32(none)
	var prev []span // the last attempt's spans, while s holds no block
	if s.Blocks == 0 {
		prev = s.spans
	}
	p := 0 // prev span that may hold block k
	for ; k < content.Input; k++ {
		var id int32
		if k < content.Shared {
			if id = c.indexed(content, k, &stream); id == none {
				break
			}
		} else {
			// A private hash lives on at most one block: the one s filled.
			for p < len(prev) && prev[p].lo+prev[p].n <= k {
				p++
			}
			if p == len(prev) || prev[p].lo > k {
				break
			}
			sp := prev[p]
			cp := &c.copies[sp.copy]
			if cp.gen != sp.gen {
				break
			}
			if b := c.at(cp, k); b.refs == dead || !cp.hashed(k, b) {
				break
			}
			id = sp.copy
		}
		out = c.extend(out, id, k)
	}
	c.hit = out
	return Hit{Blocks: int(k), spans: out}
}

// extend adds block k of copy id to the hit spans out, which end at k-1.
func (c *Cache) extend(out []span, id, k int32) []span {
	if n := len(out); n > 0 && out[n-1].copy == id && out[n-1].lo+out[n-1].n == k {
		out[n-1].n++
		return out
	}
	return append(out, span{copy: id, gen: c.copies[id].gen, lo: k, n: 1})
}

// lookupMemo is the prefix part of the last Lookup: the spans found for
// the prefix blocks its key names, and how many were found. A span's copy
// cannot be recycled while the key holds: its blocks are indexed, and
// evicting one changes the index.
type lookupMemo struct {
	key   prefixmemo.Key
	k     int32
	spans []span
}

// indexed returns the copy the prefix index names for shareable block k of
// content, or none; *stream caches the stream record across calls for one
// content (none = not looked up yet).
func (c *Cache) indexed(content *Content, k int32, stream *int32) int32 {
	if int(k) < len(content.Prefix) {
		if id, ok := c.index.Get(content.Prefix[k]); ok {
			return id
		}
		return none
	}
	if *stream == none {
		if *stream = c.streams.find(content.UID); *stream == none {
			return none
		}
		c.flushStream(*stream)
	}
	return c.streams.get(*stream, int(k))
}

// Contains reports whether shareable block k of content is cached on the
// GPU.
func (c *Cache) Contains(content *Content, k int) bool {
	stream := int32(none)
	return c.indexed(content, int32(k), &stream) != none
}
