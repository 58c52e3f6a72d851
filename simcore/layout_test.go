package simcore

import (
	"testing"
	"unsafe"

	"optimize/simcore/kv"
)

// The step loop relies on the hot fields sharing a cache line: the hot
// fields and the KV block list must fit in the first 64 bytes.
func TestRequestLayout(t *testing.T) {
	var r Request
	if end := unsafe.Offsetof(r.KV) + kv.SeqHotBytes; end > 64 {
		t.Fatalf("hot fields end at byte %d, past the first cache line", end)
	}
	if size := unsafe.Sizeof(r); size != 192 {
		t.Fatalf("Request is %d bytes; keep it at 192 (whole lines, a 64-byte-aligned size class)", size)
	}
	for i := 0; i < 8; i++ {
		sink = append(sink, new(Request)) // escapes: a heap allocation
		if p := sink[len(sink)-1]; uintptr(unsafe.Pointer(p))%64 != 0 {
			t.Fatalf("Request allocated at %p, not 64-byte aligned", p)
		}
	}
	chunk := make([]Request, 256) // as the workload's request pool carves them
	chunks = append(chunks, chunk)
	for i := range chunk {
		if p := &chunk[i]; uintptr(unsafe.Pointer(p))%64 != 0 {
			t.Fatalf("request %d of a chunk at %p, not 64-byte aligned", i, p)
		}
	}
}

var (
	sink   []*Request
	chunks [][]Request
)
