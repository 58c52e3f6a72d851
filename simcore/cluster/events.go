package cluster

import (
	"optimize/simcore"
	"optimize/simcore/internal/freelist"
)

type eventKind uint8

const (
	evAdmission      eventKind = iota // cluster: admission decision
	evRouting                         // cluster: routing decision
	evQueued                          // instance: request reaches the wait queue
	evStep                            // instance: run one step
	evPrefillRouting                  // cluster (P/D): route a prefill sub-request
	evTransferStart                   // cluster (P/D): a KV transfer starts (slot: the split request's)
	evTransferDone                    // cluster (P/D): a KV transfer ends
	evGatewayTTL                      // flow control: a queued request's TTL ends
	evGatewayTick                     // flow control: periodic dispatch attempt
	evGatewayEvict                    // flow control: an in-flight eviction (evict.go)
	evScaleTick                       // cluster: the autoscaler's tick (autoscale.go)
	evScaleActuate                    // cluster: a tick's decision applied (slot: the instances to add, < 0 to drain)
	evInstanceLoaded                  // cluster: an instance done loading (slot: the instance)
)

// event is a value in the heap; no interface boxing, no allocation. It
// holds no pointer, so moving events needs no GC write barriers (they were
// a tenth of a 1000-request run): a request in transit sits in an
// inTransit slot that the event names.
type event struct {
	time simcore.Tick
	seq  uint64 // FIFO among equal (time, rank)
	rank int32  // same-time order: loaded −1, admission 1, routing 2, P/D 3–5, gateway 6–7, autoscaler 8–9, instance i at 16+i
	slot int32  // the request's inTransit slot (admission, routing, queued)
	kind eventKind
	// sub orders an instance's events of one time before seq does: 0 for
	// every event in the March era; in the August era a step has 1, so a
	// request queued at the step's time joins its batch (see simcore.Era).
	sub uint8
}

// inTransit holds the requests that events carry between the source and
// a wait queue.
type inTransit struct {
	reqs []*simcore.Request
	free []int32
}

// park stores r until take and returns its slot.
func (t *inTransit) park(r *simcore.Request) int32 {
	s := freelist.Take(&t.reqs, &t.free)
	t.reqs[s] = r
	return s
}

// take returns the request parked in slot s and frees the slot.
func (t *inTransit) take(s int32) *simcore.Request {
	r := t.reqs[s]
	t.reqs[s] = nil
	t.free = append(t.free, s)
	return r
}

// Arrivals have rank 0 (they come from the source, outside the heap), so
// at one instant every arrival precedes every admission, every admission
// precedes every routing decision, and cluster events precede instance
// events, which run in instance order (as in BLIS's shared-clock loop).
// Same-time order, as BLIS ranks its cluster events: an instance's loading
// completes before the arrivals; admission, routing, then prefill/decode
// disaggregation's events (pd.go), flow control's in-flight eviction (at
// BLIS's priority 5, shared with a KV transfer's start, in push order),
// its TTL and dispatch tick,
// the autoscaler's tick and actuation; then the instances.
const (
	rankInstanceLoaded = -1
	rankAdmission      = 1
	rankRouting        = 2
	rankGatewayEvict   = rankRouting + 2 // = rankTransferStart (pd.go)
	rankGatewayTTL     = 6
	rankGatewayTick    = 7
	rankScaleTick      = 8
	rankScaleActuate   = 9
	rankInstance0      = 16
)

func (a *event) before(b *event) bool {
	if a.time != b.time {
		return a.time < b.time
	}
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	if a.sub != b.sub {
		return a.sub < b.sub
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

// push and pop move a hole instead of swapping: one copy per level.
func (h *eventHeap) push(e event) {
	e.seq = h.seq
	h.seq++
	h.items = append(h.items, e)
	i := len(h.items) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !e.before(&h.items[p]) {
			break
		}
		h.items[i] = h.items[p]
		i = p
	}
	h.items[i] = e
}

func (h *eventHeap) pop() event {
	e := h.items[0]
	last := len(h.items) - 1
	x := h.items[last]
	h.items = h.items[:last]
	if last == 0 {
		return e
	}
	i := 0
	for {
		best := -1
		for c := 4*i + 1; c <= 4*i+4 && c < last; c++ {
			if best < 0 || h.items[c].before(&h.items[best]) {
				best = c
			}
		}
		if best < 0 || !h.items[best].before(&x) {
			h.items[i] = x
			return e
		}
		h.items[i] = h.items[best]
		i = best
	}
}
