package simcore

import (
	"testing"
	"unsafe"

	"optimize/simcore/kv"
)

// The step loop relies on the hot fields sharing a cache line: the hot
// fields and the KV block list must fit in the first 64 bytes.
//
// The size is a budget, not a pin: a Request is kept to at most three
// 64-byte cache lines, so that the hot loop touches at most three lines per
// request and the allocation size class stays 192 (whose objects are
// 64-byte aligned). Growing past 192 bytes costs measured speed; shrinking
// is fine as long as the size stays a whole number of lines (64 or 128),
// since otherwise requests carved from a chunk, or a smaller size class,
// would not start on a line and the hot fields would straddle two.
func TestRequestLayout(t *testing.T) {
	var r Request
	if end := unsafe.Offsetof(r.KV) + kv.SeqHotBytes; end > 64 {
		t.Fatalf("hot fields end at byte %d, past the first cache line", end)
	}
	size := unsafe.Sizeof(r)
	if size > 192 {
		t.Fatalf("Request is %d bytes, over its 192-byte budget: three cache lines per request "+
			"and the 192 size class; growing past it costs measured speed", size)
	}
	if size%64 != 0 {
		t.Fatalf("Request is %d bytes, not a whole number of 64-byte lines: pad it to %d "+
			"so that every request starts a line", size, (size+63)/64*64)
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
