package simcore

import "math/rand"

// SubsystemRNG returns the random stream BLIS gives a subsystem: the master
// seed XOR the 64-bit FNV-1a hash of its name, feeding math/rand (v1), so
// that tie-breaking and workload draws follow BLIS's sequences. Every
// consumer gets its own stream; nothing uses the global source.
func SubsystemRNG(seed int64, name string) *rand.Rand {
	return rand.New(rand.NewSource(seed ^ int64(fnv1a64(name))))
}

func fnv1a64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}
