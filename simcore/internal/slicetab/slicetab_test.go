package slicetab

import "testing"

// Ids follow slice identity: the same slice (or a re-slice of the same
// length) gets its id back, an equal copy or a shorter view is another
// slice, and an empty one is -1.
func TestIDsFollowIdentity(t *testing.T) {
	var tab Table
	a := []uint64{1, 2, 3}
	b := []uint64{1, 2, 3}
	steps := []struct {
		name string
		s    []uint64
		want int32
	}{
		{"first", a, 0},
		{"again", a, 0},
		{"equal copy", b, 1},
		{"first after another", a[:3], 0},
		{"shorter view", a[:2], 2},
		{"copy again", b, 1},
		{"empty", nil, -1},
	}
	for _, st := range steps {
		got := tab.ID(st.s)
		if got != st.want {
			t.Fatalf("%s: id %d, want %d", st.name, got, st.want)
		}
		if back := tab.Slice(got); len(back) != len(st.s) || (len(back) > 0 && &back[0] != &st.s[0]) {
			t.Fatalf("%s: Slice(%d) is not the slice numbered", st.name, got)
		}
	}
}
