package simcore

import "testing"

// The reference values are the ones blis-mechanics.md §1.3 quotes.
func TestFNVMatchesBLIS(t *testing.T) {
	for name, want := range map[string]int64{
		"router":       -6855704586828942012,
		"workload-gen": 7079132663427089759,
	} {
		if got := int64(fnv1a64(name)); got != want {
			t.Errorf("fnv1a64(%q) = %d, want %d", name, got, want)
		}
	}
}
