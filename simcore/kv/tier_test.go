package kv

import "testing"

func tieredCache(t *testing.T, gpu, cpu int64, threshold float64) *Cache {
	t.Helper()
	c, err := New(gpu, 16)
	if err != nil {
		t.Fatal(err)
	}
	c.EnableTier(TierConfig{Blocks: cpu, Threshold: threshold, Bandwidth: 10, BaseLatency: 100})
	return c
}

// Above the threshold, released idle blocks move to the CPU; a request
// whose prefix is there reloads it, paying base + ceil(16/10) µs a block.
func TestOffloadAndReload(t *testing.T) {
	c := tieredCache(t, 10, 20, 0.4)
	a := allShared(1, 4)
	var s, hog Seq
	c.Allocate(&hog, content(0, 0, 5, 99), Hit{}, 5*16) // 5 of 10 used: above 0.4
	c.SetClock(5000)
	c.Allocate(&s, a, Hit{}, 4*16)
	c.Release(&s)
	st := c.TierStats()
	if st.Offloaded != 4 || c.Contains(a, 0) {
		t.Fatalf("offloaded %d blocks (want 4), GPU still holds block 0: %v", st.Offloaded, c.Contains(a, 0))
	}
	var again Seq
	cached := c.Lookup(&again, a)
	onCPU := c.CPUPrefix(a, cached.Blocks)
	if cached.Blocks != 0 || onCPU != 4 {
		t.Fatalf("lookup %d on GPU, %d on CPU; want 0 and 4", cached.Blocks, onCPU)
	}
	c.SetClock(5500) // within 1000 µs of the offload: thrashing
	if !c.AllocateReload(&again, a, cached, onCPU, 16) {
		t.Fatal("allocate with reload failed")
	}
	if got := c.TakeTransfer(); got != 4*(100+2) {
		t.Fatalf("transfer = %d µs, want 408", got)
	}
	if c.TakeTransfer() != 0 {
		t.Fatal("transfer must be charged once")
	}
	st = c.TierStats()
	if st.Reloaded != 4 || st.Thrashed != 4 || c.ThrashingRate() != 1 || !c.Contains(a, 3) {
		t.Fatalf("stats %+v, thrash rate %v", st, c.ThrashingRate())
	}
	if c.CPUPrefix(a, 0) != 0 {
		t.Fatal("reloaded blocks must leave the CPU tier")
	}
	if err := c.Check([]*Seq{&hog, &again}); err != nil {
		t.Fatal(err)
	}
}

// Below the threshold nothing moves; crossing it later sweeps the blocks
// released meanwhile.
func TestOffloadSweepsWhenThresholdCrossed(t *testing.T) {
	c := tieredCache(t, 10, 20, 0.5)
	var s, hog Seq
	c.Allocate(&s, allShared(1, 3), Hit{}, 3*16)
	c.Release(&s) // 0 used: below the threshold, stays on GPU
	if c.TierStats().Offloaded != 0 {
		t.Fatal("offloaded below the threshold")
	}
	var t2 Seq
	c.Allocate(&hog, content(0, 0, 6, 98), Hit{}, 6*16)
	c.Allocate(&t2, allShared(2, 1), Hit{}, 16)
	c.Release(&t2) // 6 used > 5: sweep the 3 old idle blocks and t2's one
	if got := c.TierStats().Offloaded; got != 4 {
		t.Fatalf("offloaded %d, want 4", got)
	}
}

// The CPU tier evicts its least recently offloaded block when full.
func TestCPUTierEvictsLRU(t *testing.T) {
	c := tieredCache(t, 10, 2, 0.0)
	var hog Seq
	c.Allocate(&hog, content(0, 0, 1, 97), Hit{}, 16) // keeps use above 0
	for i := uint64(1); i <= 3; i++ {
		var s Seq
		c.Allocate(&s, allShared(i, 1), Hit{}, 16)
		c.Release(&s)
	}
	if c.CPUPrefix(allShared(1, 1), 0) != 0 || c.CPUPrefix(allShared(3, 1), 0) != 1 {
		t.Fatal("CPU tier should hold the 2 most recently offloaded blocks only")
	}
}
