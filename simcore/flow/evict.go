package flow

import "container/heap"

// Tracker holds the routed sheddable requests that in-flight eviction may
// end (BLIS f90a1e3a's eviction tracker): the most evictable first, the
// lowest band's, then the one dispatched last; ties fall as a binary heap
// (container/heap) leaves them, so the order of Track, Untrack and Pop
// calls decides them, as in BLIS.
type Tracker struct {
	h    trackHeap
	byID map[int64]*tracked
}

// tracked is one routed sheddable request.
type tracked struct {
	id         int64
	priority   int
	dispatched int64 // µs: when it left the gateway queue
	instance   int
	index      int // its place in the heap
}

type trackHeap []*tracked

func (h trackHeap) Len() int { return len(h) }

func (h trackHeap) Less(i, j int) bool {
	if h[i].priority != h[j].priority {
		return h[i].priority < h[j].priority
	}
	return h[i].dispatched > h[j].dispatched
}

func (h trackHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}

func (h *trackHeap) Push(x any) {
	t := x.(*tracked)
	t.index = len(*h)
	*h = append(*h, t)
}

func (h *trackHeap) Pop() any {
	old := *h
	n := len(old) - 1
	t := old[n]
	old[n] = nil
	*h = old[:n]
	return t
}

// NewTracker returns an empty tracker.
func NewTracker() *Tracker { return &Tracker{byID: map[int64]*tracked{}} }

// Len is the number of tracked requests.
func (t *Tracker) Len() int { return t.h.Len() }

// Track adds request id of priority p, dispatched at the given time to
// instance i, if its band is sheddable (priority < 0).
func (t *Tracker) Track(id int64, p int, dispatched int64, i int) {
	if !Sheddable(p) {
		return
	}
	e := &tracked{id: id, priority: p, dispatched: dispatched, instance: i}
	heap.Push(&t.h, e)
	t.byID[id] = e
}

// Untrack removes request id (it left its instance); a request not
// tracked is ignored.
func (t *Tracker) Untrack(id int64) {
	e, ok := t.byID[id]
	if !ok {
		return
	}
	heap.Remove(&t.h, e.index)
	delete(t.byID, id)
}

// Pop removes the most evictable request and returns its id and
// instance; false when none is tracked.
func (t *Tracker) Pop() (id int64, instance int, ok bool) {
	if t.h.Len() == 0 {
		return 0, 0, false
	}
	e := heap.Pop(&t.h).(*tracked)
	delete(t.byID, e.id)
	return e.id, e.instance, true
}
