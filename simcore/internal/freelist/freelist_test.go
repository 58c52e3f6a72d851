package freelist

import "testing"

func TestTakeReusesReleasedSlotsLastFirst(t *testing.T) {
	var slots []string
	var free []int32
	for want := int32(0); want < 3; want++ {
		if got := Take(&slots, &free); got != want {
			t.Fatalf("fresh take = %d, want %d", got, want)
		}
	}
	slots[0], slots[2] = "a", "c"
	free = append(free, 0, 2)
	if got := Take(&slots, &free); got != 2 || slots[got] != "c" {
		t.Fatalf("took %d (%q), want the last released slot 2 with its old contents", got, slots[got])
	}
	if got := Take(&slots, &free); got != 0 {
		t.Fatalf("took %d, want 0", got)
	}
	if got := Take(&slots, &free); got != 3 || len(slots) != 4 || slots[3] != "" {
		t.Fatalf("took %d of %d slots (%q), want a new zero slot 3", got, len(slots), slots[got])
	}
}
