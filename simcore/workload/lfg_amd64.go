package workload

// addMasked is the refill's inner loop in SSE2 (lfg_amd64.s): the Go
// compiler does not vectorize, and this loop makes every draw of the
// workload (a seventh of a simulation's instructions in scalar code).
//
//go:noescape
func addMasked(dst, src *int64, n int, carry uint64) uint64
