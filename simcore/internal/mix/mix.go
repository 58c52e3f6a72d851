// Package mix holds the bit mixer behind the simulator's content hashes.
package mix

// Splitmix64 is splitmix64's finaliser: a bijection on uint64 in which
// every input bit flips about half the output bits.
func Splitmix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
