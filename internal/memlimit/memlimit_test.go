package memlimit

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestLimitIsLiveHeapPlusHeadroomAboveTheFloor(t *testing.T) {
	a := New(100, 0.25)
	for _, c := range []struct{ live, want uint64 }{
		{0, 100}, {80, 100}, {81, 102}, {1000, 1250},
	} {
		if got := a.Limit(c.live); got != c.want {
			t.Errorf("Limit(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}

// After collections the limit follows a live heap above the floor, and
// Stop puts the previous limit back.
func TestLimitFollowsTheLiveHeap(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetMemoryLimit(-1)
	const floor = 8 << 20
	a := New(floor, 0.25)
	if !a.Start() {
		t.Fatal("Start refused without GOMEMLIMIT")
	}
	t.Cleanup(a.Stop)
	if got := debug.SetMemoryLimit(-1); got != floor {
		t.Fatalf("limit %d after Start with a small heap, want the floor %d", got, floor)
	}
	held := make([][]byte, 64) // 64 MiB live, pointer-free
	for i := range held {
		held[i] = make([]byte, 1<<20)
	}
	want := int64(64 << 20 * 1.25)
	deadline := time.Now().Add(10 * time.Second)
	for debug.SetMemoryLimit(-1) < want {
		if time.Now().After(deadline) {
			t.Fatalf("limit %d after collections with 64 MiB live, want at least %d", debug.SetMemoryLimit(-1), want)
		}
		runtime.GC()
		time.Sleep(time.Millisecond) // the finalizer runs on its own goroutine
	}
	if got := debug.SetMemoryLimit(-1); got > 2*want {
		t.Fatalf("limit %d with 64 MiB live, want about %d", got, want)
	}
	runtime.KeepAlive(held)
	a.Stop()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Fatalf("limit %d after Stop, want %d", got, before)
	}
}

func TestUserLimitWins(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "1GiB")
	before := debug.SetMemoryLimit(-1)
	if New(8<<20, 0.25).Start() {
		t.Fatal("Start took over although GOMEMLIMIT is set")
	}
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Fatalf("limit changed to %d", got)
	}
}
