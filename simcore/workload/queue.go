package workload

import "optimize/simcore"

// pendingRound is a request waiting for its arrival time: a later round of
// an open-loop session, built, or a closed-loop round scheduled by Done,
// built when it is popped from its kept session (slot, round).
type pendingRound struct {
	at          simcore.Tick
	seq         uint64 // generation order within the client, breaks time ties
	req         *simcore.Request
	slot, round int32 // when req is nil
}

func (a pendingRound) before(b pendingRound) bool {
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

// roundQueue is a min-heap of pending rounds ordered by (at, seq). It is
// hand-written rather than container/heap to avoid boxing every element.
type roundQueue []pendingRound

func (q roundQueue) top() pendingRound { return q[0] }

func (q *roundQueue) push(p pendingRound) {
	*q = append(*q, p)
	h := *q
	i := len(h) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !h[i].before(h[parent]) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

func (q *roundQueue) pop() pendingRound {
	h := *q
	first := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h[last] = pendingRound{}
	h = h[:last]
	for i := 0; ; {
		smallest, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && h[l].before(h[smallest]) {
			smallest = l
		}
		if r < len(h) && h[r].before(h[smallest]) {
			smallest = r
		}
		if smallest == i {
			break
		}
		h[i], h[smallest] = h[smallest], h[i]
		i = smallest
	}
	*q = h
	return first
}

// clientQueue orders the client streams by their next arrival (ties: lower
// client index first, which reproduces BLIS's stable sort of the client
// lists concatenated in client order). It is an index heap so that one
// client's key can be fixed in place after it changes.
type clientQueue struct {
	heap    []int32 // client indexes
	pos     []int   // pos[client] = its index in heap
	keyTime []simcore.Tick
}

func newClientQueue(n int) clientQueue {
	q := clientQueue{heap: make([]int32, n), pos: make([]int, n), keyTime: make([]simcore.Tick, n)}
	for i := range q.heap {
		q.heap[i], q.pos[i] = int32(i), i
	}
	return q
}

func (q *clientQueue) less(i, j int) bool {
	a, b := q.heap[i], q.heap[j]
	ta, tb := q.keyTime[a], q.keyTime[b]
	return ta < tb || (ta == tb && a < b)
}

func (q *clientQueue) swap(i, j int) {
	q.heap[i], q.heap[j] = q.heap[j], q.heap[i]
	q.pos[q.heap[i]], q.pos[q.heap[j]] = i, j
}

// set changes a client's key and restores the heap order.
func (q *clientQueue) set(client int32, t simcore.Tick) {
	q.keyTime[client] = t
	i := q.pos[client]
	for i > 0 {
		parent := (i - 1) / 2
		if !q.less(i, parent) {
			break
		}
		q.swap(i, parent)
		i = parent
	}
	for {
		smallest, l, r := i, 2*i+1, 2*i+2
		if l < len(q.heap) && q.less(l, smallest) {
			smallest = l
		}
		if r < len(q.heap) && q.less(r, smallest) {
			smallest = r
		}
		if smallest == i {
			return
		}
		q.swap(i, smallest)
		i = smallest
	}
}

// first returns the client with the earliest next arrival.
func (q *clientQueue) first() (client int32, t simcore.Tick) {
	c := q.heap[0]
	return c, q.keyTime[c]
}
