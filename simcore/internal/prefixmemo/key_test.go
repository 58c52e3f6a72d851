package prefixmemo

import "testing"

func TestKeyMatchesSameSliceLengthAndEpochOnly(t *testing.T) {
	a := []uint64{1, 2, 3}
	b := []uint64{1, 2, 3} // equal hashes, another slice: not known to be the same
	kept := KeyOf(a, 3, 7)
	for _, c := range []struct {
		name  string
		other Key
		want  bool
	}{
		{"same", KeyOf(a, 3, 7), true},
		{"same array, sliced again", KeyOf(a[:3], 3, 7), true},
		{"other slice", KeyOf(b, 3, 7), false},
		{"fewer blocks", KeyOf(a, 2, 7), false},
		{"later epoch", KeyOf(a, 3, 8), false},
	} {
		if got := kept.Matches(c.other); got != c.want {
			t.Errorf("%s: Matches = %v, want %v", c.name, got, c.want)
		}
	}
	var never Key
	if never.Matches(KeyOf(nil, 0, 0)) || never.Matches(never) {
		t.Error("a memo never kept matched")
	}
}
