package simcore

import (
	"math/rand"
	"slices"
	"testing"
)

// Random pushes and pops at both ends agree with a plain slice, and no slot
// outside the live region keeps a request alive.
func TestWaitQueueMatchesASlice(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var q WaitQueue
	var want []*Request
	for op := 0; op < 20000; op++ {
		switch r := (&Request{ID: int64(op)}); rng.Intn(5) {
		case 0, 1:
			q.PushBack(r)
			want = append(want, r)
		case 2:
			q.PushFront(r)
			want = append([]*Request{r}, want...)
		default:
			if len(want) > 0 {
				if got := q.PopFront(); got != want[0] {
					t.Fatalf("op %d: popped %d, want %d", op, got.ID, want[0].ID)
				}
				want = want[1:]
			}
		}
		if !slices.Equal(q.Items(), want) {
			t.Fatalf("op %d: queue %d items, want %d", op, q.Len(), len(want))
		}
		for i, r := range q.buf[:q.head] {
			if r != nil {
				t.Fatalf("op %d: slot %d before the head still holds request %d", op, i, r.ID)
			}
		}
	}
}

// Putting a preempted request back in front of an emptied queue reuses the
// buffer.
func TestWaitQueuePushFrontReusesTheBuffer(t *testing.T) {
	var q WaitQueue
	for i := 0; i < 64; i++ {
		q.PushBack(&Request{})
	}
	r := &Request{}
	allocs := testing.AllocsPerRun(100, func() {
		for q.Len() > 0 {
			q.PopFront()
		}
		q.PushBack(r)
		q.PushFront(r)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per round, want 0", allocs)
	}
}
