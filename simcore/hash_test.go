package simcore

import (
	"math/rand"
	"slices"
	"testing"
)

// AddTokens must equal Add token by token, however the tokens are split
// into calls and whatever the block size.
func TestAddTokensMatchesAdd(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, size := range []int{1, 2, 3, 7, 16, 17} {
		tokens := make([]int32, 500)
		for i := range tokens {
			tokens[i] = int32(rng.Intn(128000))
		}
		slow := NewBlockHasher(size)
		var want []uint64
		for _, tok := range tokens {
			if x, ok := slow.Add(tok); ok {
				want = append(want, x)
			}
		}
		fast := NewBlockHasher(size)
		var got []uint64
		for rest := tokens; len(rest) > 0; {
			k := min(len(rest), 1+rng.Intn(40))
			got = fast.AddTokens(rest[:k], got)
			rest = rest[k:]
		}
		if !slices.Equal(got, want) || fast != slow {
			t.Fatalf("block size %d: AddTokens differs from Add", size)
		}
	}
}

// Equal prefixes give equal chains; one changed token changes its block
// and every later one, never an earlier one.
func TestChainedHashes(t *testing.T) {
	a := make([]int32, 64)
	for i := range a {
		a[i] = int32(i * 7)
	}
	b := slices.Clone(a)
	b[37]++
	ha, hb := NewBlockHasher(16), NewBlockHasher(16)
	x := ha.AddTokens(a, nil)
	y := hb.AddTokens(b, nil)
	if len(x) != 4 || x[0] != y[0] || x[1] != y[1] || x[2] == y[2] || x[3] == y[3] {
		t.Fatalf("chain %x vs %x", x, y)
	}
}
