package mix

import (
	"math/bits"
	"testing"
)

// Flipping any one input bit flips between a quarter and three quarters of
// the output bits (avalanche), and distinct inputs stay distinct.
func TestSplitmix64Avalanche(t *testing.T) {
	seen := map[uint64]bool{}
	for x := uint64(1); x < 2000; x++ {
		y := Splitmix64(x * 0x9e3779b97f4a7c15)
		if seen[y] {
			t.Fatalf("collision at %d", x)
		}
		seen[y] = true
		for b := 0; b < 64; b += 7 {
			if d := bits.OnesCount64(y ^ Splitmix64(x*0x9e3779b97f4a7c15^1<<b)); d < 16 || d > 48 {
				t.Fatalf("input %d bit %d flips %d output bits", x, b, d)
			}
		}
	}
}
