package simcore

// WaitQueue is an instance's queue of requests waiting for a running slot.
// It keeps them as Waiting records in fixed-size chunks: pushing at either
// end and popping the front are O(1), and an overloaded instance's queue
// (about 90k requests per instance in the baseline on orthogonal-slo at a
// million requests) costs its records and at most two spare chunks, never a slice
// twice its size or a copy of it. A request that never ran is folded into
// its record and its Request returned to the pool; the front one is
// unfolded into a Request again when batch formation asks for it, and
// stays so until it is popped or the queue is reordered.
type WaitQueue struct {
	chunks [][]Waiting // chunks[0][first:] ... the live records, waitChunk each
	first  int         // index of the front record in chunks[0]
	n      int         // records
	spare  [][]Waiting // emptied chunks, for reuse
	front  *Request    // the front record unfolded, nil = not yet

	// Items hands out a contiguous copy of the records; it is written back
	// before the queue next changes (flat != nil until then).
	flat    []Waiting
	scratch []Waiting

	held     []*Request // requests kept whole (see Waiting), by slot
	freeHeld []int32

	// Ranked mode (see SetOrder): one heap of records per group.
	rank   Ranking
	score  Scorer
	now    Tick
	groups [][]Waiting
	head   int // the group whose top is served next, −1 = not chosen yet

	pool *RequestPool
	// The queue's instance and KV block size, which its folded records
	// leave out (blockSize 0: nothing is folded).
	instance  int32
	blockSize int64
}

const (
	waitChunk      = 1024
	maxSpareChunks = 2 // a drained queue gives the rest back to the collector
)

// NewWaitQueue returns the queue of an instance with KV blocks of
// blockSize tokens, folding requests into pool's records. The zero
// WaitQueue works too, holding every request whole.
func NewWaitQueue(pool *RequestPool, instance int32, blockSize int64) WaitQueue {
	return WaitQueue{pool: pool, instance: instance, blockSize: blockSize, head: -1}
}

// Len returns the number of waiting requests.
func (q *WaitQueue) Len() int { return q.n }

// Items returns the waiting requests, front first, as one slice. Reordering
// it in place reorders the queue and Priority may be rewritten, until the
// queue is next used. A ranked queue (SetOrder) has no such slice.
func (q *WaitQueue) Items() []Waiting {
	if q.rank != nil {
		panic("simcore: Items of a ranked WaitQueue")
	}
	q.dropFront()
	if q.flat == nil {
		q.flat = q.scratch[:0]
		for i, c := range q.chunks {
			lo, hi := 0, len(c)
			if i == 0 {
				lo = q.first
			}
			q.flat = append(q.flat, c[lo:hi]...)
		}
		q.scratch = q.flat
	}
	return q.flat
}

// settle writes back what Items handed out.
func (q *WaitQueue) settle() {
	if q.flat == nil {
		return
	}
	k := 0
	for i, c := range q.chunks {
		lo := 0
		if i == 0 {
			lo = q.first
		}
		k += copy(c[lo:], q.flat[k:])
	}
	q.flat = nil
}

// Front returns the first request, unfolded; the queue must not be empty.
// It stays the queue's until PopFront.
func (q *WaitQueue) Front() *Request {
	if q.front == nil {
		q.settle()
		var w *Waiting
		if q.rank != nil {
			w = q.rankedHead()
		} else {
			w = &q.chunks[0][q.first]
		}
		if q.score != nil {
			w.Priority = q.score.Priority(w, q.now)
		}
		if h := w.heldSlot(); h >= 0 {
			r := q.held[h]
			r.Priority, r.PriorityHint = w.Priority, w.PriorityHint
			q.front = r
		} else {
			q.front = q.pool.Take()
			q.pool.unfold(w, q.front, q.instance, q.blockSize)
		}
	}
	return q.front
}

// PopFront removes and returns the first request; it is the caller's.
func (q *WaitQueue) PopFront() *Request {
	r := q.Front()
	q.front = nil
	if h := q.frontRecord().heldSlot(); h >= 0 {
		q.held[h] = nil
		q.freeHeld = append(q.freeHeld, h)
	}
	if q.rank != nil {
		q.rankedPop()
		return r
	}
	q.first++
	q.n--
	if q.first == len(q.chunks[0]) || q.n == 0 {
		if len(q.spare) < maxSpareChunks {
			q.spare = append(q.spare, q.chunks[0][:0])
		}
		k := copy(q.chunks, q.chunks[1:])
		q.chunks[k] = nil
		q.chunks, q.first = q.chunks[:k], 0
	}
	return r
}

// PushBack appends r, which the queue takes over.
func (q *WaitQueue) PushBack(r *Request) {
	q.settle()
	w := q.park(r)
	if q.rank != nil {
		q.rankedPush(w)
		return
	}
	if k := len(q.chunks); k == 0 || len(q.chunks[k-1]) == waitChunk {
		q.chunks = append(q.chunks, q.newChunk())
	}
	last := &q.chunks[len(q.chunks)-1]
	*last = append(*last, w)
	q.n++
}

// PushFront puts r, which the queue takes over, before every waiting
// request.
func (q *WaitQueue) PushFront(r *Request) {
	q.dropFront()
	q.settle()
	w := q.park(r)
	if q.rank != nil {
		q.rankedPush(w) // where its rank puts it
		return
	}
	if q.first == 0 {
		// A chunk of its own in front, filled from its end.
		c := q.newChunk()[:waitChunk]
		q.chunks = append(q.chunks, nil)
		copy(q.chunks[1:], q.chunks)
		q.chunks[0], q.first = c, waitChunk
	}
	q.first--
	q.chunks[0][q.first] = w
	q.n++
}

func (q *WaitQueue) newChunk() []Waiting {
	if k := len(q.spare); k > 0 {
		c := q.spare[k-1]
		q.spare = q.spare[:k-1]
		return c
	}
	return make([]Waiting, 0, waitChunk)
}

// park folds a request that never ran into its record and recycles it;
// any other is held whole.
func (q *WaitQueue) park(r *Request) Waiting {
	if q.foldable(r) {
		w := q.pool.fold(r)
		q.pool.Put(r)
		return w
	}
	w := WaitingOf(r)
	var slot int32
	if n := len(q.freeHeld); n > 0 {
		slot = q.freeHeld[n-1]
		q.freeHeld = q.freeHeld[:n-1]
		q.held[slot] = r
	} else {
		slot = int32(len(q.held))
		q.held = append(q.held, r)
	}
	w.ref = -2 - slot
	return w
}

// foldable reports whether r's record holds all of it: it never ran, it
// is routed here, and its content's block counts follow from its lengths.
func (q *WaitQueue) foldable(r *Request) bool {
	if q.pool == nil || q.blockSize <= 0 || r.Instance != q.instance || !fresh(r) {
		return false
	}
	input, total := blockCounts(r.InputLen, r.OutputLen, q.blockSize)
	return r.Content.Input == input && r.Content.Total == total
}

// dropFront forgets the unfolded front: its record stays authoritative.
func (q *WaitQueue) dropFront() {
	if q.front != nil {
		if q.frontRecord().heldSlot() < 0 {
			q.pool.Put(q.front)
		}
		q.front = nil
	}
}

// frontRecord returns the record of the front request.
func (q *WaitQueue) frontRecord() *Waiting {
	if q.rank != nil {
		return &q.groups[q.head][0]
	}
	return &q.chunks[0][q.first]
}

// Remove takes the waiting request with the given ID out of the queue,
// the others keeping their order, and returns it whole; false when it
// does not wait here. It costs O(n): flow control's in-flight eviction
// is its only caller.
func (q *WaitQueue) Remove(id int64) (*Request, bool) {
	q.dropFront()
	q.settle()
	var w Waiting
	if q.rank != nil {
		if !q.rankedRemove(id, &w) {
			return nil, false
		}
	} else if !q.fifoRemove(id, &w) {
		return nil, false
	}
	if h := w.heldSlot(); h >= 0 {
		r := q.held[h]
		q.held[h] = nil
		q.freeHeld = append(q.freeHeld, h)
		r.Priority, r.PriorityHint = w.Priority, w.PriorityHint
		return r, true
	}
	r := q.pool.Take()
	q.pool.unfold(&w, r, q.instance, q.blockSize)
	return r, true
}

// fifoRemove removes the record of id from the chunks into w, moving the
// records behind it one place forward.
func (q *WaitQueue) fifoRemove(id int64, w *Waiting) bool {
	at := func(k int) *Waiting {
		k += q.first
		if k < len(q.chunks[0]) {
			return &q.chunks[0][k]
		}
		k -= len(q.chunks[0])
		return &q.chunks[1+k/waitChunk][k%waitChunk]
	}
	k := 0
	for ; k < q.n && at(k).ID != id; k++ {
	}
	if k == q.n {
		return false
	}
	*w = *at(k)
	for ; k+1 < q.n; k++ {
		*at(k) = *at(k + 1)
	}
	*at(q.n - 1) = Waiting{}
	q.n--
	last := len(q.chunks) - 1
	q.chunks[last] = q.chunks[last][:len(q.chunks[last])-1]
	if len(q.chunks[last]) == 0 || q.n == 0 {
		if len(q.spare) < maxSpareChunks {
			q.spare = append(q.spare, q.chunks[last][:0])
		}
		q.chunks[last] = nil
		q.chunks = q.chunks[:last]
		if last == 0 {
			q.first = 0
		}
	}
	return true
}

// rankedRemove removes the record of id from its group's heap into w.
func (q *WaitQueue) rankedRemove(id int64, w *Waiting) bool {
	for g, h := range q.groups {
		for i := range h {
			if h[i].ID != id {
				continue
			}
			*w = h[i]
			last := len(h) - 1
			h[i] = h[last]
			h[last] = Waiting{}
			h = h[:last]
			q.groups[g] = h
			q.n--
			q.head = -1
			if i < last {
				q.sift(h, i)
			}
			return true
		}
	}
	return false
}

// sift restores the heap h after its record i was replaced: up, or down.
func (q *WaitQueue) sift(h []Waiting, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !q.rank.Less(&h[i], &h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && q.rank.Less(&h[c+1], &h[c]) {
			c++
		}
		if !q.rank.Less(&h[c], &h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}
