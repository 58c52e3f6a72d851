package simcore

import "testing"

func TestSLOClassKnown_MapsOutOfRangeToNone(t *testing.T) {
	for c := SLONone; c < NumSLOClasses; c++ {
		if c.Known() != c {
			t.Errorf("%s.Known() = %s, want itself", c.Label(), c.Known())
		}
	}
	for _, c := range []SLOClass{NumSLOClasses, NumSLOClasses + 1, 255} {
		if c.Known() != SLONone {
			t.Errorf("SLOClass(%d).Known() = %s, want none", uint8(c), c.Known())
		}
	}
}
