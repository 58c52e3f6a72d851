package simcore

import (
	"math/rand"
	"slices"
	"testing"
	"unsafe"

	"optimize/simcore/kv"
)

// testInstance is the instance the test queues belong to.
const testInstance = 3

// waitingRequest is a request that never ran, with every field a queue
// folds set to something distinctive. Most are routed to testInstance
// with content counted from their lengths, so the queue folds them; every
// 11th is routed elsewhere and every 13th has other block counts, so the
// queue must hold those whole to give them back unchanged.
func waitingRequest(pool *RequestPool, id int64, prefix []uint64) *Request {
	r := pool.Take()
	r.ID, r.Arrival, r.Priority, r.PriorityHint = id, 1000+id, float64(id%7), float64(id%3)
	r.InputLen, r.OutputLen, r.SLO = int32(64+id%50), int32(1+id%9), SLOClass(id%4)
	r.Client, r.Round, r.Session, r.Instance = int32(id%5), int32(id%3), int32(id/3), testInstance
	if id%11 == 0 {
		r.Instance = testInstance + 1
	}
	r.Content = kv.NewContent(prefix, uint64(id)+1, int(r.InputLen), int(r.OutputLen), 16, int(id%40))
	if id%13 == 0 {
		r.Content.Total++
	}
	r.Content.Exclusive = id%2 == 0
	return r
}

// Random pushes and pops at both ends agree with a plain slice of request
// values: a request that never ran comes back field for field (its prefix
// the very slice it was given), a preempted one (holding a released KV
// attempt) comes back as the same Request.
func TestWaitQueueMatchesASlice(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	pool := &RequestPool{}
	q := NewWaitQueue(pool, testInstance, 16)
	prefixes := [][]uint64{{11, 12}, {21, 22, 23}, nil}
	var want []Request // values, as pushed
	var whole []*Request
	for op := 0; op < 20000; op++ {
		r := waitingRequest(pool, int64(op), prefixes[op%3])
		var same *Request     // the Request the queue must hand back, nil = any
		if rng.Intn(4) == 0 { // as a preempted request: it ran
			r.FirstToken, r.ITLSum = 5, 7
			same = r
		}
		switch rng.Intn(5) {
		case 0, 1:
			want, whole = append(want, *r), append(whole, same)
			q.PushBack(r)
		case 2:
			want, whole = append([]Request{*r}, want...), append([]*Request{same}, whole...)
			q.PushFront(r)
		default:
			pool.Put(r)
			if len(want) > 0 {
				if rng.Intn(2) == 0 {
					q.Front() // unfold early: PopFront must hand over the same request
				}
				got := q.PopFront()
				if whole[0] != nil && got != whole[0] {
					t.Fatalf("op %d: a held request came back as another Request", op)
				}
				if !sameRequest(got, &want[0]) {
					t.Fatalf("op %d: popped %+v, want %+v", op, *got, want[0])
				}
				want, whole = want[1:], whole[1:]
			}
		}
		items := q.Items()
		if len(items) != len(want) {
			t.Fatalf("op %d: queue %d items, want %d", op, len(items), len(want))
		}
		for i := range items {
			if items[i].ID != want[i].ID || items[i].Priority != want[i].Priority {
				t.Fatalf("op %d: item %d is request %d, want %d", op, i, items[i].ID, want[i].ID)
			}
		}
	}
}

// sameRequest compares everything a queue keeps; a prefix must come back
// as the slice it was given, not a copy.
func sameRequest(a, b *Request) bool {
	ca, cb := a.Content, b.Content
	if len(ca.Prefix) != len(cb.Prefix) || (len(ca.Prefix) > 0 && &ca.Prefix[0] != &cb.Prefix[0]) {
		return false
	}
	return ca.UID == cb.UID && ca.Input == cb.Input && ca.Total == cb.Total && ca.Shared == cb.Shared && ca.Exclusive == cb.Exclusive && a.ID == b.ID && a.Arrival == b.Arrival && a.Priority == b.Priority &&
		a.PriorityHint == b.PriorityHint && a.InputLen == b.InputLen && a.OutputLen == b.OutputLen &&
		a.SLO == b.SLO && a.Client == b.Client && a.Round == b.Round && a.Session == b.Session &&
		a.Instance == b.Instance && a.FirstToken == b.FirstToken && a.ITLSum == b.ITLSum &&
		a.Progress == b.Progress && a.Computed == b.Computed && a.NewTokens == b.NewTokens
}

// Policies rescore through Items; the unfolded front must not keep the
// priority it had before.
func TestWaitQueueItemsRefreshTheFront(t *testing.T) {
	var q WaitQueue
	r := &Request{}
	r.Reset()
	r.ID, r.Priority = 1, 3
	q.PushBack(r)
	if q.Front().Priority != 3 {
		t.Fatalf("front priority %v, want 3", q.Front().Priority)
	}
	q.Items()[0].Priority = 9
	if got := q.PopFront(); got.Priority != 9 || got.ID != 1 {
		t.Fatalf("popped id %d priority %v, want id 1 priority 9", got.ID, got.Priority)
	}
}

// A scheduler reorders the queue through Items: the order must hold across
// chunks (a pushed-front one included), for folded and held requests.
func TestWaitQueueReorderThroughItems(t *testing.T) {
	pool := &RequestPool{}
	q := NewWaitQueue(pool, testInstance, 16)
	const n = 3 * waitChunk
	for i := int64(1); i < n; i++ {
		r := waitingRequest(pool, i, nil)
		if i%5 == 0 {
			r.FirstToken = 1 // held whole
		}
		q.PushBack(r)
	}
	q.PushFront(waitingRequest(pool, 0, nil))
	q.Front() // an unfolded front must not survive the reorder
	items := q.Items()
	slices.Reverse(items)
	for i := range items {
		items[i].Priority = float64(i)
	}
	for want := int64(n - 1); want >= 0; want-- {
		r := q.PopFront()
		if r.ID != want || r.Priority != float64(n-1-want) {
			t.Fatalf("popped id %d priority %v, want id %d priority %d", r.ID, r.Priority, want, n-1-want)
		}
		if r.FirstToken != 1 && want%5 == 0 && want > 0 {
			t.Fatalf("held request %d came back folded", want)
		}
	}
}

// Waiting is what makes a million queued requests affordable: keep it
// small and pointer-free.
func TestWaitingLayout(t *testing.T) {
	if size := unsafe.Sizeof(Waiting{}); size > 72 {
		t.Fatalf("Waiting is %d bytes, want at most 72", size)
	}
}

// Putting a preempted request back in front of an emptied queue, and
// folding and unfolding requests that never ran, reuse the buffer and the
// pool's requests.
func TestWaitQueueReusesItsMemory(t *testing.T) {
	pool := &RequestPool{}
	q := NewWaitQueue(pool, testInstance, 16)
	for i := 0; i < 64; i++ {
		q.PushBack(waitingRequest(pool, int64(i), nil))
	}
	held := waitingRequest(pool, 99, nil)
	held.FirstToken = 1
	allocs := testing.AllocsPerRun(100, func() {
		for q.Len() > 0 {
			pool.Put(q.PopFront())
		}
		q.PushBack(waitingRequest(pool, 1, nil))
		q.PushFront(held)
		q.PopFront() // held again on the next run
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per round, want 0", allocs)
	}
}

// The queue folds exactly the requests whose record holds all of them:
// never run, routed to its instance, content counted from their lengths.
func TestWaitQueueFoldsOnlyWhatItCanRebuild(t *testing.T) {
	pool := &RequestPool{}
	q := NewWaitQueue(pool, testInstance, 16)
	wantHeld := 0
	for id := int64(1); id <= 200; id++ {
		r := waitingRequest(pool, id, nil)
		if id%7 == 0 {
			r.FirstToken = 3 // ran before: a preempted request
		}
		if id%7 == 0 || id%11 == 0 || id%13 == 0 {
			wantHeld++
		}
		q.PushBack(r)
	}
	if held := len(q.held) - len(q.freeHeld); held != wantHeld {
		t.Fatalf("%d requests held whole, want %d", held, wantHeld)
	}
	var zero WaitQueue // no instance or block size: nothing can be folded
	zero.PushBack(waitingRequest(pool, 1, nil))
	if len(zero.held) != 1 {
		t.Fatalf("the zero queue folded a request")
	}
}
