package simcore

import (
	"testing"
	"unsafe"
)

// The step loop relies on the hot fields sharing a cache line: Request must
// stay 256 bytes (an allocation size class aligned to 256) with the hot
// fields and the KV block list in the first 64 bytes.
func TestRequestLayout(t *testing.T) {
	var r Request
	if size := unsafe.Sizeof(r); size != 256 {
		t.Fatalf("Request is %d bytes; adjust its padding to 256", size)
	}
	if end := unsafe.Offsetof(r.KV) + unsafe.Offsetof(r.KV.IDs) + unsafe.Sizeof(r.KV.IDs); end > 64 {
		t.Fatalf("hot fields end at byte %d, past the first cache line", end)
	}
	p := &Request{}
	if uintptr(unsafe.Pointer(p))%64 != 0 {
		t.Fatalf("Request allocated at %p, not 64-byte aligned", p)
	}
}
