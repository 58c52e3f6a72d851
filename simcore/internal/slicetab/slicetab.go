// Package slicetab numbers read-only hash slices by identity, so that a
// record can name one with an int32 instead of holding a slice: records
// without pointers are neither scanned by the garbage collector nor
// written through its barriers. A table keeps every slice it has numbered
// for its lifetime: sources hand every request of a prefix group the same
// slice, so it stays as small as the number of groups (a source making a
// slice per request would grow it with every request).
package slicetab

import "unsafe"

// Table maps slices to ids and back. The zero value is empty.
type Table struct {
	slices [][]uint64
	byKey  map[key]int32
	last   int32 // id of the slice numbered last: a one-entry memo
}

// key tells slices apart by their first element's address and length.
type key struct {
	data *uint64
	n    int
}

func keyOf(s []uint64) key { return key{unsafe.SliceData(s), len(s)} }

// ID returns s's id, numbering it if new; an empty slice is -1.
func (t *Table) ID(s []uint64) int32 {
	if len(s) == 0 {
		return -1
	}
	k := keyOf(s)
	if i := t.last; int(i) < len(t.slices) && keyOf(t.slices[i]) == k {
		return i
	}
	i, ok := t.byKey[k]
	if !ok {
		if t.byKey == nil {
			t.byKey = map[key]int32{}
		}
		i = int32(len(t.slices))
		t.slices = append(t.slices, s)
		t.byKey[k] = i
	}
	t.last = i
	return i
}

// Slice returns the slice numbered id (nil for -1).
func (t *Table) Slice(id int32) []uint64 {
	if id < 0 {
		return nil
	}
	return t.slices[id]
}
