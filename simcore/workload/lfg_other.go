//go:build !amd64

package workload

import "unsafe"

func addMasked(dst, src *int64, n int, carry uint64) uint64 {
	return addMaskedGo(unsafe.Slice(dst, n), unsafe.Slice(src, n), carry)
}
