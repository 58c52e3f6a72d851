package simcore

import (
	"optimize/simcore/internal/slicetab"
	"optimize/simcore/kv"
)

// Waiting is a request while it waits in an instance's queue: what
// schedulers and priority policies read, and what the running Request is
// rebuilt from when batch formation reaches it. An overloaded cluster
// queues most of its arrivals (about 700k at once in the baseline on
// orthogonal-slo at a million requests), so a waiting request is 72 bytes without a
// pointer where a Request is 192 with two slices: the queues hold the most
// memory of a long run, and the garbage collector skips them. What the
// queue knows is left out: the instance, and the content's block counts,
// which follow from the lengths (a request whose content says otherwise
// is held whole).
//
// A preempted request is not folded either: its KV sequence remembers the
// blocks of its last attempt, which its next lookup may find again, so the
// queue holds it whole, and of its record only what schedulers read and
// policies write (Priority) is used.
type Waiting struct {
	ID           int64
	Arrival      Tick
	Priority     float64
	PriorityHint float64
	UID          uint64 // Content.UID
	InputLen     int32
	OutputLen    int32
	Client       int32
	Round        int32
	Session      int32
	shared       int32 // Content.Shared
	// ref is a folded request's prefix, as an index into the pool's table
	// of prefixes (−1 = none), or, as −2 − slot, the slot of a request the
	// queue holds whole.
	ref       int32
	SLO       SLOClass
	exclusive bool // Content.Exclusive
}

// heldSlot returns the slot of the whole request the queue holds for w,
// or −1 when w is folded.
func (w *Waiting) heldSlot() int32 {
	if w.ref <= -2 {
		return -2 - w.ref
	}
	return -1
}

// WaitingOf returns r's Waiting form: the fields a policy or scheduler
// reads, for a request that is not parked (a running one being rescored).
func WaitingOf(r *Request) Waiting {
	return Waiting{
		ID: r.ID, Arrival: r.Arrival, Priority: r.Priority, PriorityHint: r.PriorityHint,
		UID: r.Content.UID, InputLen: r.InputLen, OutputLen: r.OutputLen,
		Client: r.Client, Round: r.Round, Session: r.Session, SLO: r.SLO,
		shared: r.Content.Shared, ref: -1, exclusive: r.Content.Exclusive,
	}
}

// fresh reports whether r has never run: nothing but its description,
// routing and priority is set, so Waiting holds all of it.
func fresh(r *Request) bool {
	return r.FirstToken < 0 && r.ITLSum == 0 && r.Progress == 0 && r.Computed == 0 &&
		r.NewTokens == 0 && kv.Untouched(&r.KV)
}

// RequestPool recycles an engine's Requests and folds waiting ones into
// Waiting records and back. Shared prefixes are kept once, in a table
// indexed by the prefix slice they were given as (a source hands every
// request of a group the same slice).
type RequestPool struct {
	free     []*Request
	chunk    []Request // new requests are carved from it
	prefixes slicetab.Table
}

// requestChunk is how many requests the pool allocates at once.
const requestChunk = 256

// Take returns a reset request, recycled when possible.
func (p *RequestPool) Take() *Request {
	if n := len(p.free); n > 0 {
		r := p.free[n-1]
		p.free = p.free[:n-1]
		return r
	}
	if len(p.chunk) == 0 {
		p.chunk = make([]Request, requestChunk)
	}
	r := &p.chunk[0]
	p.chunk = p.chunk[1:]
	r.Reset()
	return r
}

// Put resets r and keeps it for reuse; r must not be used after.
func (p *RequestPool) Put(r *Request) {
	r.Reset()
	p.free = append(p.free, r)
}

// fold returns r's Waiting form, prefix included; r itself is unchanged.
func (p *RequestPool) fold(r *Request) Waiting {
	w := WaitingOf(r)
	w.ref = p.prefixes.ID(r.Content.Prefix)
	return w
}

// unfold fills the reset request r from w, folded by a queue of the given
// instance and block size.
func (p *RequestPool) unfold(w *Waiting, r *Request, instance int32, blockSize int64) {
	r.ID, r.Arrival, r.Priority, r.PriorityHint = w.ID, w.Arrival, w.Priority, w.PriorityHint
	r.InputLen, r.OutputLen, r.SLO = w.InputLen, w.OutputLen, w.SLO
	r.Client, r.Round, r.Session, r.Instance = w.Client, w.Round, w.Session, instance
	input, total := blockCounts(r.InputLen, r.OutputLen, blockSize)
	r.Content = kv.Content{
		Prefix: p.prefixes.Slice(w.ref), UID: w.UID,
		Input: input, Total: total, Shared: w.shared, Exclusive: w.exclusive,
	}
}

// blockCounts returns the full blocks of a request's input and of its
// input and output together, as every source's content counts them.
func blockCounts(inputLen, outputLen int32, blockSize int64) (input, total int32) {
	return int32(int64(inputLen) / blockSize), int32((int64(inputLen) + int64(outputLen)) / blockSize)
}
