package simcore

import "optimize/simcore/internal/mix"

// BlockHasher computes chained hashes of fixed-size token blocks: the hash
// of block k covers the tokens of blocks 0..k, so equal hashes mean equal
// prefixes. A 64-bit hash matches exactly as BLIS's SHA-256 chain does for
// any realistic number of blocks, at a fraction of the cost.
//
// Within a block, tokens are taken in pairs (two 31-bit values packed in
// one word, one multiply per pair), which halves the multiply chain; an odd
// last token is mixed in alone. It hashes the token ids of prefix groups
// and of replayed traces.
type BlockHasher struct {
	size    int32  // tokens per block
	n       int32  // tokens in the current block
	parent  uint64 // hash of the last full block
	acc     uint64 // running hash of the current block
	pending uint64 // first token of an incomplete pair
}

const (
	hashSeed  = 0x9e3779b97f4a7c15
	hashPrime = 0x100000001b3
)

// NewBlockHasher starts a chain for blocks of size tokens.
func NewBlockHasher(size int) BlockHasher {
	return BlockHasher{size: int32(size), parent: hashSeed, acc: hashSeed}
}

// Add feeds one token; when it completes a block, the block's chained hash
// is returned with ok = true.
func (h *BlockHasher) Add(token int32) (hash uint64, ok bool) {
	t := uint64(uint32(token))
	if h.n&1 == 0 {
		h.pending = t
	} else {
		h.acc = (h.acc ^ (h.pending | t<<32)) * hashPrime
	}
	if h.n++; h.n < h.size {
		return 0, false
	}
	h.parent = h.close()
	return h.parent, true
}

// close finishes the current (full) block.
func (h *BlockHasher) close() uint64 {
	acc := h.acc
	if h.n&1 == 1 {
		acc = (acc ^ h.pending) * hashPrime
	}
	h.acc, h.n = hashSeed, 0
	return finish(acc, h.parent)
}

// finish turns a block's running hash and its parent's hash into the
// block's chained hash.
func finish(acc, parent uint64) uint64 {
	return mix.Splitmix64(acc ^ parent*0xff51afd7ed558ccd)
}
