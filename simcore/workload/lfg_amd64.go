package workload

import "golang.org/x/sys/cpu"

// addMasked is the refill's inner loop in vector code (lfg_amd64.s): the
// Go compiler does not vectorize, and this loop makes every draw of the
// workload (a seventh of a simulation's instructions in scalar code).
// AVX2 when the CPU has it, else SSE2, which every amd64 has.
func addMasked(dst, src *int64, n int, carry uint64) uint64 {
	if hasAVX2 {
		return addMaskedAVX2(dst, src, n, carry)
	}
	return addMaskedSSE2(dst, src, n, carry)
}

var hasAVX2 = cpu.X86.HasAVX2

//go:noescape
func addMaskedSSE2(dst, src *int64, n int, carry uint64) uint64

//go:noescape
func addMaskedAVX2(dst, src *int64, n int, carry uint64) uint64
