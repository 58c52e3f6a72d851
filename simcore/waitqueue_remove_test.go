package simcore

import (
	"math/rand"
	"slices"
	"testing"
)

// Removing by ID (in-flight eviction) agrees with a plain slice: random
// pushes at both ends, pops and removals anywhere, over several chunks;
// the others keep their order, a removed request comes back whole (the
// very Request when the queue held it), an absent ID is refused.
func TestWaitQueueRemoveMatchesASlice(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	pool := &RequestPool{}
	q := NewWaitQueue(pool, testInstance, 16)
	prefixes := [][]uint64{{11, 12}, nil}
	var want []Request
	var whole []*Request
	removed := 0
	for op := 0; op < 12000; op++ {
		r := waitingRequest(pool, int64(op), prefixes[op%2])
		var same *Request
		if rng.Intn(4) == 0 {
			r.FirstToken, r.ITLSum = 5, 7
			same = r
		}
		switch k := rng.Intn(8); {
		case k < 4:
			want, whole = append(want, *r), append(whole, same)
			q.PushBack(r)
		case k == 4:
			want, whole = append([]Request{*r}, want...), append([]*Request{same}, whole...)
			q.PushFront(r)
		case k == 5:
			pool.Put(r)
			if len(want) > 0 {
				q.PopFront()
				want, whole = want[1:], whole[1:]
			}
		default:
			pool.Put(r)
			if _, ok := q.Remove(-1); ok {
				t.Fatalf("op %d: removed an ID that is not queued", op)
			}
			if len(want) == 0 {
				continue
			}
			if rng.Intn(2) == 0 {
				q.Front() // an unfolded front, maybe the one removed
			}
			i := rng.Intn(len(want))
			got, ok := q.Remove(want[i].ID)
			if !ok || !sameRequest(got, &want[i]) || (whole[i] != nil && got != whole[i]) {
				t.Fatalf("op %d: removed %v (ok %v), want request %d whole", op, got, ok, want[i].ID)
			}
			want, whole = slices.Delete(want, i, i+1), slices.Delete(whole, i, i+1)
			removed++
		}
		if q.Len() != len(want) {
			t.Fatalf("op %d: queue holds %d, want %d", op, q.Len(), len(want))
		}
		if op%97 == 0 {
			items := q.Items()
			for i := range items {
				if items[i].ID != want[i].ID {
					t.Fatalf("op %d: item %d is request %d, want %d", op, i, items[i].ID, want[i].ID)
				}
			}
		}
	}
	if removed < 1000 || len(want) < 2*waitChunk {
		t.Fatalf("%d removals with %d left: the test should remove often from a queue of several chunks", removed, len(want))
	}
	for i := range want {
		if got := q.PopFront(); got.ID != want[i].ID {
			t.Fatalf("pop %d: request %d, want %d", i, got.ID, want[i].ID)
		}
	}
}

// byPriority ranks a queue in two groups (even and odd IDs), each by
// priority then ID; heads compare the same way.
type byPriority struct{}

func (byPriority) Group(w *Waiting) int { return int(w.ID % 2) }
func (byPriority) Less(a, b *Waiting) bool {
	return a.Priority < b.Priority || a.Priority == b.Priority && a.ID < b.ID
}
func (b byPriority) Ahead(x, y *Waiting, _ Tick) bool { return b.Less(x, y) }

// A ranked queue removes from the middle of a group's heap and still
// serves the rest in rank order.
func TestWaitQueueRemoveRanked(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	pool := &RequestPool{}
	q := NewWaitQueue(pool, testInstance, 16)
	q.SetOrder(byPriority{}, nil)
	var left []Request
	for id := int64(0); id < 500; id++ {
		r := waitingRequest(pool, id, nil)
		r.Priority = float64(rng.Intn(50))
		left = append(left, *r)
		q.PushBack(r)
	}
	for k := 0; k < 200; k++ {
		i := rng.Intn(len(left))
		got, ok := q.Remove(left[i].ID)
		if !ok || got.ID != left[i].ID || got.Priority != left[i].Priority {
			t.Fatalf("removal %d: got %v (ok %v), want request %d", k, got, ok, left[i].ID)
		}
		left = slices.Delete(left, i, i+1)
	}
	slices.SortFunc(left, func(a, b Request) int {
		if byPriority.Less(byPriority{}, &Waiting{ID: a.ID, Priority: a.Priority}, &Waiting{ID: b.ID, Priority: b.Priority}) {
			return -1
		}
		return 1
	})
	for i := range left {
		if got := q.PopFront(); got.ID != left[i].ID {
			t.Fatalf("pop %d: request %d, want %d", i, got.ID, left[i].ID)
		}
	}
	if q.Len() != 0 {
		t.Fatalf("%d left", q.Len())
	}
}
