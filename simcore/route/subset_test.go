package route

import (
	"slices"
	"testing"

	"optimize/simcore"
)

// Round-robin among a changing set, by hand. Slots 0, 1, 2 route two
// requests (0, 1); slot 0 leaves and two more are routed among {1, 2};
// slot 3 joins and three more are routed among {1, 2, 3}. BLIS's counter
// modulo the set: 2 mod 2 = 0 → slot 1 again, 3 mod 2 = 1 → slot 2, then
// 4 mod 3 = 1 → slot 2 again, 5 mod 3 = 2 → 3, 6 mod 3 = 0 → 1: slots 1
// and 2 each get a turn twice running. Resuming after the last slot: 2, 1
// (wrapped), then 2, 3, 1: each of the set in turn.
func TestRoundRobinAmongAChangingSet(t *testing.T) {
	sets := [][]int32{{0, 1, 2}, {0, 1, 2}, {1, 2}, {1, 2}, {1, 2, 3}, {1, 2, 3}, {1, 2, 3}}
	for _, c := range []struct {
		resume bool
		want   []int32
	}{
		{false, []int32{0, 1, 1, 2, 2, 3, 1}},
		{true, []int32{0, 1, 2, 1, 2, 3, 1}},
	} {
		r := mustNew(t, Config{Policy: "round-robin", RoundRobinResume: c.resume}, 4, nil).(Subset)
		var got []int32
		for _, ids := range sets {
			snaps := make([]Snapshot, len(ids))
			got = append(got, ids[r.RouteAmong(&simcore.Request{}, snaps, ids, 0)])
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("resume %v: slots %v, want %v", c.resume, got, c.want)
		}
	}
	// Over a fixed set resuming is the counter: 0, 1, 2, 0, 1.
	r := mustNew(t, Config{Policy: "round-robin", RoundRobinResume: true}, 3, nil).(Subset)
	ids := []int32{0, 1, 2}
	var got []int
	for range 5 {
		got = append(got, r.RouteAmong(&simcore.Request{}, make([]Snapshot, 3), ids, 0))
	}
	if !slices.Equal(got, []int{0, 1, 2, 0, 1}) {
		t.Errorf("fixed set, resuming: %v, want [0 1 2 0 1]", got)
	}
}
