// Package freelist hands out the slots of a slice of values, reusing
// released slots before growing the slice.
package freelist

// Take returns the index of a slot of *slots to use: the last one released
// into *free, or else a new zero element. The caller initialises the slot
// (a reused one keeps its old contents) and later appends the index to
// *free to release it.
func Take[T any](slots *[]T, free *[]int32) int32 {
	if n := len(*free); n > 0 {
		i := (*free)[n-1]
		*free = (*free)[:n-1]
		return i
	}
	var zero T
	*slots = append(*slots, zero)
	return int32(len(*slots) - 1)
}
