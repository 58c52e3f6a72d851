// Package memlimit keeps a long simulation's heap close to what it holds.
//
// Go's collector lets the heap grow to twice what the last collection
// found live (GOGC=100). A million-request run holds about 130 MiB at its
// peak (mostly queued requests), so it would reach about 290 MiB of RSS
// where 180 MiB suffice. A fixed soft limit (GOMEMLIMIT) fixes that run
// but makes any larger one collect without pause. Instead, after every
// collection the limit is set to the live heap plus a headroom, never
// below a floor: small runs never meet it, large ones keep a heap a
// fraction larger than what they hold, and none collects without end.
package memlimit

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// Adaptive is a soft memory limit that follows the live heap.
type Adaptive struct {
	floor    uint64  // the least limit, bytes
	headroom float64 // the limit is live·(1+headroom) above the floor
	previous int64   // the limit before Start, restored by Stop
	stopped  atomic.Bool
	sample   []metrics.Sample
	mu       sync.Mutex
}

// New returns a limit of at least floor bytes and otherwise the live heap
// plus the given fraction of it.
func New(floor uint64, headroom float64) *Adaptive {
	return &Adaptive{
		floor:    floor,
		headroom: headroom,
		sample:   []metrics.Sample{{Name: "/gc/heap/live:bytes"}},
	}
}

// Start sets the limit and keeps it up to date after every collection
// until Stop; the headroom also covers what the runtime keeps besides the
// heap's objects (a few per cent of it). It does nothing, and reports false, when GOMEMLIMIT is set:
// the user's limit wins.
func (a *Adaptive) Start() bool {
	if os.Getenv("GOMEMLIMIT") != "" {
		return false
	}
	a.stopped.Store(false)
	a.previous = debug.SetMemoryLimit(-1)
	a.adjust()
	a.arm()
	return true
}

// Stop restores the limit in force before Start.
func (a *Adaptive) Stop() {
	if a.stopped.Swap(true) {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	debug.SetMemoryLimit(a.previous)
}

// Limit returns the limit for a live heap of live bytes.
func (a *Adaptive) Limit(live uint64) uint64 {
	return max(a.floor, uint64(math.Ceil(float64(live)*(1+a.headroom))))
}

// adjust sets the limit from the live heap the last collection found.
func (a *Adaptive) adjust() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped.Load() {
		return
	}
	metrics.Read(a.sample)
	live := uint64(0)
	if a.sample[0].Value.Kind() == metrics.KindUint64 {
		live = a.sample[0].Value.Uint64()
	}
	debug.SetMemoryLimit(int64(min(a.Limit(live), math.MaxInt64)))
}

// collected is an object whose finalizer runs after the collection that
// finds it unreachable, one per cycle: the hook that follows each
// collection. It is larger than the tiny allocator's 16 bytes, which
// would batch it with other objects.
type collected struct{ _ [32]byte }

func (a *Adaptive) arm() {
	runtime.SetFinalizer(&collected{}, func(*collected) {
		if a.stopped.Load() {
			return
		}
		a.adjust()
		a.arm()
	})
}
