package simcore

import (
	"slices"
	"testing"
)

// Equal prefixes give equal chains; one changed token changes its block
// and every later one, never an earlier one.
func TestChainedHashes(t *testing.T) {
	a := make([]int32, 64)
	for i := range a {
		a[i] = int32(i * 7)
	}
	b := slices.Clone(a)
	b[37]++
	x, y := hashAll(16, a), hashAll(16, b)
	if len(x) != 4 || x[0] != y[0] || x[1] != y[1] || x[2] == y[2] || x[3] == y[3] {
		t.Fatalf("chain %x vs %x", x, y)
	}
}

// hashAll feeds tokens one by one and returns the hash of every full block.
func hashAll(size int, tokens []int32) []uint64 {
	h := NewBlockHasher(size)
	var out []uint64
	for _, tok := range tokens {
		if x, ok := h.Add(tok); ok {
			out = append(out, x)
		}
	}
	return out
}
