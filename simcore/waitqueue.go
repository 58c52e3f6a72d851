package simcore

// WaitQueue is an instance's queue of requests waiting for a running slot.
// It keeps them as Waiting records in a slice with a movable head: popping
// the front and putting a preempted request back in front are O(1) and
// allocation-free in steady state, and Items exposes the live region for
// schedulers to reorder and policies to rescore. A request that never ran
// is folded into its record and its Request returned to the pool; the
// front one is unfolded into a Request again when batch formation asks
// for it, and stays so until it is popped or the queue is reordered.
type WaitQueue struct {
	buf   []Waiting
	head  int
	front *Request // buf[head] unfolded, nil = not yet

	held     []*Request // requests kept whole (see Waiting), by slot
	freeHeld []int32

	pool *RequestPool
}

// NewWaitQueue returns a queue that folds requests into pool's records.
// The zero WaitQueue works too, with a pool of its own.
func NewWaitQueue(pool *RequestPool) WaitQueue { return WaitQueue{pool: pool} }

func (q *WaitQueue) requests() *RequestPool {
	if q.pool == nil {
		q.pool = &RequestPool{}
	}
	return q.pool
}

// Len returns the number of waiting requests.
func (q *WaitQueue) Len() int { return len(q.buf) - q.head }

// Items returns the waiting requests, front first. Reordering the slice in
// place reorders the queue; Priority may be rewritten.
func (q *WaitQueue) Items() []Waiting {
	q.dropFront()
	return q.buf[q.head:]
}

// Front returns the first request, unfolded; the queue must not be empty.
// It stays the queue's until PopFront.
func (q *WaitQueue) Front() *Request {
	if q.front == nil {
		w := &q.buf[q.head]
		if w.held >= 0 {
			r := q.held[w.held]
			r.Priority, r.PriorityHint = w.Priority, w.PriorityHint
			q.front = r
		} else {
			q.front = q.requests().Take()
			q.pool.unfold(w, q.front)
		}
	}
	return q.front
}

// PopFront removes and returns the first request; it is the caller's.
func (q *WaitQueue) PopFront() *Request {
	r := q.Front()
	q.front = nil
	if h := q.buf[q.head].held; h >= 0 {
		q.held[h] = nil
		q.freeHeld = append(q.freeHeld, h)
	}
	q.head++
	if q.head == len(q.buf) {
		q.buf, q.head = q.buf[:0], 0
	}
	return r
}

// PushBack appends r, which the queue takes over.
func (q *WaitQueue) PushBack(r *Request) {
	w := q.park(r)
	if q.head > 0 && len(q.buf) == cap(q.buf) && q.head >= len(q.buf)/2 {
		q.compact(0)
	}
	q.buf = append(q.buf, w)
}

// PushFront puts r, which the queue takes over, before every waiting
// request.
func (q *WaitQueue) PushFront(r *Request) {
	q.dropFront()
	w := q.park(r)
	if q.head == 0 {
		q.compact(max(8, q.Len()/2))
	}
	q.head--
	q.buf[q.head] = w
}

// park folds a request that never ran into its record and recycles it;
// any other is held whole.
func (q *WaitQueue) park(r *Request) Waiting {
	if fresh(r) {
		w := q.requests().fold(r)
		q.pool.Put(r)
		return w
	}
	w := WaitingOf(r)
	if n := len(q.freeHeld); n > 0 {
		w.held = q.freeHeld[n-1]
		q.freeHeld = q.freeHeld[:n-1]
		q.held[w.held] = r
	} else {
		w.held = int32(len(q.held))
		q.held = append(q.held, r)
	}
	return w
}

// dropFront forgets the unfolded front: its record stays authoritative.
func (q *WaitQueue) dropFront() {
	if q.front != nil {
		if q.buf[q.head].held < 0 {
			q.pool.Put(q.front)
		}
		q.front = nil
	}
}

// compact moves the live region so that gap free slots precede it, within
// the buffer when it is large enough.
func (q *WaitQueue) compact(gap int) {
	n := q.Len()
	if gap+n > cap(q.buf) {
		nb := make([]Waiting, gap+n, max(2*(gap+n), 16))
		copy(nb[gap:], q.buf[q.head:])
		q.buf, q.head = nb, gap
		return
	}
	end := len(q.buf)
	q.buf = q.buf[:max(end, gap+n)]
	copy(q.buf[gap:], q.buf[q.head:end])
	q.buf, q.head = q.buf[:gap+n], gap
}
