package metrics

import (
	"math"
	"slices"
	"testing"

	"optimize/simcore"
)

// A column stores values exactly at either width: it stays 32-bit while
// values fit, keeps unset apart from every value, and turns 64-bit
// without losing what it held when one does not fit.
func TestColumnWidensWithoutLoss(t *testing.T) {
	cases := []struct {
		name string
		vals []int64 // unset = never set
		wide bool
	}{
		{"fits", []int64{0, 5, unset, narrowUnset - 1}, false},
		{"just too big", []int64{7, unset, narrowUnset, 9}, true},
		{"huge", []int64{1, math.MaxInt64, unset}, true},
		{"negative", []int64{3, -2, unset}, true},
	}
	for _, tc := range cases {
		var c column
		c.reserve(2)
		for range tc.vals {
			c.appendUnset()
		}
		for i, v := range tc.vals {
			if v != unset {
				c.set(int64(i), v)
			}
		}
		c.appendUnset() // after widening too
		if got := c.wide != nil; got != tc.wide {
			t.Fatalf("%s: wide %v, want %v", tc.name, got, tc.wide)
		}
		want := append(tc.vals, unset)
		for i, v := range want {
			if got := c.get(i); got != v {
				t.Fatalf("%s: value %d = %d, want %d", tc.name, i, got, v)
			}
		}
		// Requests alternate between two classes: pick keeps the set
		// values of one class, or of all, in request order.
		class := make([]simcore.SLOClass, len(want))
		var all, odd []int64
		for i, v := range want {
			class[i] = simcore.SLOClass(i % 2)
			if v != unset {
				all = append(all, v)
				if i%2 == 1 {
					odd = append(odd, v)
				}
			}
		}
		if got := c.pick(nil, class, allClasses); !slices.Equal(got, all) {
			t.Fatalf("%s: pick %v, want %v", tc.name, got, all)
		}
		if got := c.pick(nil, class, 1); !slices.Equal(got, odd) {
			t.Fatalf("%s: pick of class 1 %v, want %v", tc.name, got, odd)
		}
	}
}
