package workload

import (
	"math/rand"
	"testing"
)

// The fast source must be indistinguishable from math/rand's, draw for
// draw, through every rand.Rand method the generator uses.
func TestLFGMatchesMathRand(t *testing.T) {
	for _, seed := range []int64{0, 1, 42, -7, 1 << 40} {
		std := rand.New(rand.NewSource(seed))
		src := newLFG(seed)
		fast := rand.New(src)
		for i := 0; i < 20000; i++ {
			switch i % 5 {
			case 0:
				if a, b := std.Int63(), fast.Int63(); a != b {
					t.Fatalf("seed %d draw %d: Int63 %d != %d", seed, i, a, b)
				}
			case 1:
				if a, b := std.Intn(maxTokenID), int(src.tokenID()); a != b {
					t.Fatalf("seed %d draw %d: token %d != %d", seed, i, a, b)
				}
			case 2:
				if a, b := std.ExpFloat64(), fast.ExpFloat64(); a != b {
					t.Fatalf("seed %d draw %d: ExpFloat64 differs", seed, i)
				}
			case 3:
				if a, b := std.NormFloat64(), fast.NormFloat64(); a != b {
					t.Fatalf("seed %d draw %d: NormFloat64 differs", seed, i)
				}
			case 4:
				if a, b := std.Float64(), fast.Float64(); a != b {
					t.Fatalf("seed %d draw %d: Float64 differs", seed, i)
				}
			}
		}
	}
}

func TestSkipTokensMatchesIntn(t *testing.T) {
	// Seed 210's first batch, which Seed fills, rejects draw 347; the later
	// batches come from refill.
	for _, seed := range []int64{5, 99, 210} {
		counted := &countingSource{Source: rand.NewSource(seed)}
		std := rand.New(counted)
		src := newLFG(seed)
		tokens := 0
		for round := 0; round < 400; round++ {
			n := 1 + round*37%1500
			src.skipTokens(n)
			for range n {
				std.Intn(maxTokenID)
			}
			tokens += n
			if a, b := std.Int63(), src.Int63(); a != b {
				t.Fatalf("seed %d: streams diverged after round %d", seed, round)
			}
			tokens++ // that Int63
		}
		// Intn rejects about 1 draw in 78k: the test must have seen some.
		if counted.draws == tokens {
			t.Fatalf("seed %d: no rejected draw in %d tokens; the test does not exercise rejections", seed, tokens)
		}
	}
}

// countingSource counts the draws made from a source.
type countingSource struct {
	rand.Source
	draws int
}

func (c *countingSource) Int63() int64 { c.draws++; return c.Source.Int63() }

// The refill's vector loops must agree with the Go loop they replace,
// value for value and in the rejection flag, for every length's tail and
// for operands laid out as refill lays them: src ahead of dst, or trailing
// it by at least 16 in the same array.
func TestAddMaskedMatchesGo(t *testing.T) {
	for _, loop := range addMaskedLoops() {
		rng := rand.New(rand.NewSource(3))
		for n := 0; n < 40; n++ {
			for _, lag := range []int{-(lfgLen - lfgTap), -1, 16, 17, lfgTap} {
				for trial := 0; trial < 20; trial++ {
					var a [lfgLen]int64
					for i := range a {
						a[i] = rng.Int63()
						if trial%4 == 0 && rng.Intn(16) == 0 {
							a[i] = rejectFrom + rng.Int63n(mask63-rejectFrom+1) // rejected
						}
					}
					b := a
					lo, hi := max(0, lag), lfgLen-max(n, 1)+min(0, lag) // keeps &a[off], &a[off-lag] and both ranges in bounds
					off := lo + rng.Intn(hi-lo+1)
					got := loop.fn(&a[off], &a[off-lag], n, rejectCarry)
					want := addMaskedGo(b[off:off+n], b[off-lag:off-lag+n], rejectCarry)
					if a != b || got>>63 != want>>63 {
						t.Fatalf("%s, n=%d lag %d trial %d: differs from the Go loop (flag %v vs %v)", loop.name, n, lag, trial, got>>63 == 1, want>>63 == 1)
					}
				}
			}
		}
	}
}

type addMaskedLoop struct {
	name string
	fn   func(dst, src *int64, n int, carry uint64) uint64
}
