package simcore

// WaitQueue is an instance's queue of requests waiting for a running slot.
// It is a slice with a movable head: popping the front and putting a
// preempted request back in front are O(1) and allocation-free in steady
// state, and Items exposes the live region for schedulers to reorder.
type WaitQueue struct {
	buf  []*Request
	head int
}

// Len returns the number of waiting requests.
func (q *WaitQueue) Len() int { return len(q.buf) - q.head }

// Items returns the waiting requests, front first. Reordering the slice in
// place reorders the queue.
func (q *WaitQueue) Items() []*Request { return q.buf[q.head:] }

// Front returns the first request; the queue must not be empty.
func (q *WaitQueue) Front() *Request { return q.buf[q.head] }

// PushBack appends r.
func (q *WaitQueue) PushBack(r *Request) {
	if q.head > 0 && len(q.buf) == cap(q.buf) && q.head >= len(q.buf)/2 {
		q.compact(0)
	}
	q.buf = append(q.buf, r)
}

// PushFront puts r before every waiting request.
func (q *WaitQueue) PushFront(r *Request) {
	if q.head == 0 {
		q.compact(max(8, q.Len()/2))
	}
	q.head--
	q.buf[q.head] = r
}

// PopFront removes and returns the first request.
func (q *WaitQueue) PopFront() *Request {
	r := q.buf[q.head]
	q.buf[q.head] = nil
	q.head++
	if q.head == len(q.buf) {
		q.buf, q.head = q.buf[:0], 0
	}
	return r
}

// compact moves the live region so that gap free slots precede it,
// within the buffer when it is large enough, and drops the references left
// outside the live region.
func (q *WaitQueue) compact(gap int) {
	n := q.Len()
	if gap+n > cap(q.buf) {
		nb := make([]*Request, gap+n, max(2*(gap+n), 16))
		copy(nb[gap:], q.buf[q.head:])
		q.buf, q.head = nb, gap
		return
	}
	end := len(q.buf)
	q.buf = q.buf[:max(end, gap+n)]
	copy(q.buf[gap:], q.buf[q.head:end])
	clear(q.buf[:gap])
	clear(q.buf[gap+n:])
	q.buf, q.head = q.buf[:gap+n], gap
}
