package metrics

import (
	"math"
	"slices"

	"optimize/simcore"
)

// column holds one latency per request, in µs, or unset. A million
// requests keep three of them until the run ends, so values are 32 bits
// while every one fits (up to 71 minutes), and the column turns 64-bit
// for good the first time one does not.
type column struct {
	narrow []uint32 // narrowUnset = unset; in use while wide is nil
	wide   []int64
}

const narrowUnset = math.MaxUint32

func (c *column) reserve(n int) {
	if c.wide != nil {
		c.wide = slices.Grow(c.wide, n)
	} else {
		c.narrow = slices.Grow(c.narrow, n)
	}
}

// appendUnset adds a request with no value yet.
func (c *column) appendUnset() {
	if c.wide != nil {
		c.wide = append(c.wide, unset)
	} else {
		c.narrow = append(c.narrow, narrowUnset)
	}
}

func (c *column) set(i int64, v int64) {
	if c.wide == nil {
		if v >= 0 && v < narrowUnset {
			c.narrow[i] = uint32(v)
			return
		}
		c.widen()
	}
	c.wide[i] = v
}

// clear unsets request i's value.
func (c *column) clear(i int64) {
	if c.wide != nil {
		c.wide[i] = unset
		return
	}
	c.narrow[i] = narrowUnset
}

func (c *column) get(i int) int64 {
	if c.wide != nil {
		return c.wide[i]
	}
	if v := c.narrow[i]; v != narrowUnset {
		return int64(v)
	}
	return unset
}

// widen turns the column 64-bit, keeping its length and capacity.
func (c *column) widen() {
	wide := make([]int64, len(c.narrow), cap(c.narrow))
	for i := range wide {
		wide[i] = c.get(i)
	}
	c.wide, c.narrow = wide, nil
}

// pick appends to out the set values of the requests whose class is cl
// (every set value, for allClasses).
func (c *column) pick(out []int64, class []simcore.SLOClass, cl simcore.SLOClass) []int64 {
	if c.wide != nil {
		for i, v := range c.wide {
			if v != unset && (cl == allClasses || class[i] == cl) {
				out = append(out, v)
			}
		}
		return out
	}
	for i, v := range c.narrow {
		if v != narrowUnset && (cl == allClasses || class[i] == cl) {
			out = append(out, int64(v))
		}
	}
	return out
}
