package simcore

import "testing"

// The reference values are Go's hash/fnv New64a of each name, read as
// int64: the hashes BLIS XORs into the master seed for those streams.
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
