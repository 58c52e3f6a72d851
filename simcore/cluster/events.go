package cluster

import "optimize/simcore"

type eventKind uint8

const (
	evAdmission eventKind = iota // cluster: admission decision
	evRouting                    // cluster: routing decision
	evQueued                     // instance: request reaches the wait queue
	evStep                       // instance: run one step
)

// event is a value in the heap; no interface boxing, no allocation.
type event struct {
	time simcore.Tick
	rank int32 // same-time order: admission 1, routing 2, instance i at 3+i
	kind eventKind
	seq  uint64 // FIFO among equal (time, rank)
	req  *simcore.Request
}

// Arrivals have rank 0 (they come from the source, outside the heap), so
// at one instant every arrival precedes every admission, every admission
// precedes every routing decision, and cluster events precede instance
// events, which run in instance order (as in BLIS's shared-clock loop).
const (
	rankAdmission = 1
	rankRouting   = 2
	rankInstance0 = 3
)

func (a *event) before(b *event) bool {
	if a.time != b.time {
		return a.time < b.time
	}
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	return a.seq < b.seq
}

// eventHeap is a 4-ary min-heap: shallower than a binary heap, and its
// children share a cache line.
type eventHeap struct {
	items []event
	seq   uint64
}

func (h *eventHeap) Len() int { return len(h.items) }

func (h *eventHeap) top() *event { return &h.items[0] }

func (h *eventHeap) push(e event) {
	e.seq = h.seq
	h.seq++
	h.items = append(h.items, e)
	i := len(h.items) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !h.items[i].before(&h.items[p]) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *eventHeap) pop() event {
	e := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items[last] = event{}
	h.items = h.items[:last]
	i, n := 0, last
	for {
		best := i
		for c := 4*i + 1; c <= 4*i+4 && c < n; c++ {
			if h.items[c].before(&h.items[best]) {
				best = c
			}
		}
		if best == i {
			return e
		}
		h.items[i], h.items[best] = h.items[best], h.items[i]
		i = best
	}
}
