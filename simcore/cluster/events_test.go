package cluster

import (
	"math/rand"
	"slices"
	"testing"

	"optimize/simcore"
	"optimize/simcore/simtest"
)

// The heap pops events in (time, rank, push order) order whatever the
// interleaving of pushes and pops, with many equal times and ranks.
func TestEventHeap_PopsInTimeRankFIFOOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var h eventHeap
	var want []event // a sorted model of the heap's contents
	for op := range 20000 {
		if h.Len() > 0 && rng.Intn(5) < 2 {
			got := h.pop()
			if got != want[0] {
				t.Fatalf("op %d: popped %+v, want %+v", op, got, want[0])
			}
			want = want[1:]
			continue
		}
		e := event{time: simcore.Tick(rng.Intn(50)), rank: int32(rng.Intn(4)), slot: int32(op)}
		h.push(e)
		e.seq = h.seq - 1
		i, _ := slices.BinarySearchFunc(want, e, func(a, b event) int {
			if a.before(&b) {
				return -1
			}
			return 1
		})
		want = slices.Insert(want, i, e)
		if h.Len() != len(want) {
			t.Fatalf("op %d: %d events, want %d", op, h.Len(), len(want))
		}
	}
	for h.Len() > 0 {
		if got := h.pop(); got != want[0] {
			t.Fatalf("drain: popped %+v, want %+v", got, want[0])
		}
		want = want[1:]
	}
}

// A parked request comes back from its slot once, and slots are reused.
func TestInTransit_ParkTakeReusesSlots(t *testing.T) {
	var tr inTransit
	a, b := &simcore.Request{ID: 1}, &simcore.Request{ID: 2}
	sa, sb := tr.park(a), tr.park(b)
	if got := tr.take(sa); got != a {
		t.Fatalf("slot %d gave request %d, want 1", sa, got.ID)
	}
	if sc := tr.park(b); sc != sa {
		t.Fatalf("new park took slot %d, want the freed slot %d", sc, sa)
	}
	if got := tr.take(sb); got != b || tr.reqs[sb] != nil {
		t.Fatalf("slot %d gave request %d and kept a pointer %v", sb, got.ID, tr.reqs[sb] != nil)
	}
}

// An admission or routing decision skips the heap only when it would be
// the next event handled: no arrival left at its instant, and no queued
// event before it (an earlier one, or one of the same instant with a
// lower rank or the same rank pushed earlier).
func TestNextAtOnlyWhenNothingPrecedes(t *testing.T) {
	const now = 100
	cases := []struct {
		name    string
		arrival simcore.Tick // next arrival; -1 = none
		queued  []event
		rank    int32
		want    bool
	}{
		{"nothing else", -1, nil, rankAdmission, true},
		{"arrival at the same instant", now, nil, rankAdmission, false},
		{"arrival later", now + 1, nil, rankAdmission, true},
		{"earlier event", -1, []event{{time: now - 1, rank: rankInstance0}}, rankAdmission, false},
		{"admission of the same instant", -1, []event{{time: now, rank: rankAdmission}}, rankAdmission, false},
		{"routing of the same instant, for an admission", -1, []event{{time: now, rank: rankRouting}}, rankAdmission, true},
		{"routing of the same instant, for a routing", -1, []event{{time: now, rank: rankRouting}}, rankRouting, false},
		{"admission of the same instant, for a routing", -1, []event{{time: now, rank: rankAdmission}}, rankRouting, false},
		{"step of the same instant", -1, []event{{time: now, rank: rankInstance0}}, rankRouting, true},
		{"later event", -1, []event{{time: now + 1, rank: rankAdmission}}, rankRouting, true},
	}
	for _, tc := range cases {
		var reqs []*simcore.Request
		if tc.arrival >= 0 {
			reqs = append(reqs, simtest.Request(int64(tc.arrival), 16, 1, 16, nil, 1))
		}
		eng, err := New(testConfig(1, 100), simtest.NewSliceSource(reqs))
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range tc.queued {
			eng.events.push(ev)
		}
		if got := eng.nextAt(now, tc.rank); got != tc.want {
			t.Errorf("%s: nextAt %v, want %v", tc.name, got, tc.want)
		}
	}
}
