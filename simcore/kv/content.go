package kv

import "optimize/simcore/internal/mix"

// Content identifies a request's token sequence block by block, without
// storing a hash per block. Full blocks of a shared prefix (a prefix group's
// system prompt) carry the prefix's chained hashes; every later block k
// carries a hash of (UID, k), where UID names the token stream after the
// prefix: a session (whose rounds repeat and extend the same stream) or a
// single request. Two blocks are equal exactly when their hashes are, as
// with hashes of real token ids, because distinct streams never share
// tokens: their tokens are independent random draws.
type Content struct {
	Prefix []uint64 // chained hashes of the prefix's full blocks (shared, read-only)
	UID    uint64   // identity of the stream after the prefix; never 0
	Input  int32    // full blocks of the input
	Total  int32    // full blocks of input and output
	// Shared is how many leading blocks another request may also contain
	// (the prefix, or a whole session stream that later rounds re-read).
	// Later blocks are private: only this request, after a preemption, can
	// ever look them up again, so they stay out of the prefix index.
	Shared int32
	// Exclusive says that no other request with this UID is in the
	// system while this one is (a single request, a closed-loop session's
	// round, a round with a stream of its own): nothing else can look up
	// or hold its stream blocks, so the
	// cache may register a decode block one step late, at the request's
	// next visit, without anyone seeing the difference.
	Exclusive bool
}

// NewContent describes input tokens (the prefix's included) followed by
// output tokens, in blocks of blockSize tokens: prefix holds the chained
// hashes of the prefix's full blocks, uid names the stream after it, and
// the first shared blocks (all of them at most) are shareable.
func NewContent(prefix []uint64, uid uint64, input, output, blockSize, shared int) Content {
	total := (input + output) / blockSize
	return Content{Prefix: prefix, UID: uid, Input: int32(input / blockSize), Total: int32(total), Shared: int32(min(shared, total))}
}

// Hash returns the hash of block k (k < Total).
func (c *Content) Hash(k int) uint64 {
	if k < len(c.Prefix) {
		return c.Prefix[k]
	}
	return streamHash(c.UID, uint64(k))
}

// AppendHashes appends the hashes of blocks [0, n) to dst.
func (c *Content) AppendHashes(dst []uint64, n int) []uint64 {
	p := min(n, len(c.Prefix))
	dst = append(dst, c.Prefix[:p]...)
	for k := p; k < n; k++ {
		dst = append(dst, streamHash(c.UID, uint64(k)))
	}
	return dst
}

// streamHash mixes a stream id and a block index; the odd constant keeps
// UID 1, block 0 away from 0, the "no hash" mark.
func streamHash(uid, k uint64) uint64 {
	return mix.Splitmix64(uid*0x9e3779b97f4a7c15^(k+1)*0xd1b54a32d192ed03) | 1
}
