package cluster

import (
	"optimize/simcore"
	"optimize/simcore/kv"
)

// pdView is the prefix-cache view the prefix-threshold decider reads, as
// BLIS f90a1e3a keeps it: with a delay, copies of every instance's block
// hashes taken at the time copied points to (the engine advances it; the
// first copies, at time 0, are empty); without, the caches themselves.
type pdView struct {
	copied  *simcore.Tick      // nil: live
	held    []map[uint64]int32 // per instance: hash → copies, as of *copied
	pending []pdViewEvent      // changes not in held yet, in time order
	hashes  []uint64           // scratch
}

type pdViewEvent struct {
	at       simcore.Tick
	hash     uint64
	instance int32
	stored   bool
}

func newPDView(n int, copied *simcore.Tick) *pdView {
	v := &pdView{copied: copied, held: make([]map[uint64]int32, n)}
	for i := range v.held {
		v.held[i] = map[uint64]int32{}
	}
	return v
}

// grow makes room for n instances.
func (v *pdView) grow(n int) {
	for len(v.held) < n {
		v.held = append(v.held, map[uint64]int32{})
	}
}

// observe records a change of instance i's prefix cache at time at.
func (v *pdView) observe(i int, hash uint64, stored bool, at simcore.Tick) {
	if v.copied != nil {
		v.pending = append(v.pending, pdViewEvent{at: at, hash: hash, instance: int32(i), stored: stored})
	}
}

// catchUp brings the copies up to the last copy time: every change
// before it (a copy taken at a routing decision precedes what the
// instances do at that microsecond).
func (v *pdView) catchUp() {
	k := 0
	for ; k < len(v.pending) && v.pending[k].at < *v.copied; k++ {
		ev := &v.pending[k]
		m := v.held[ev.instance]
		if ev.stored {
			m[ev.hash]++
		} else if m[ev.hash] <= 1 {
			delete(m, ev.hash)
		} else {
			m[ev.hash]--
		}
	}
	v.pending = v.pending[:copy(v.pending, v.pending[k:])]
}

// cachedBlocks is how many of r's first input blocks instance i holds,
// as the view shows it (live cache c when there is no delay).
func (v *pdView) cachedBlocks(i int, r *simcore.Request, c *kv.Cache) int {
	n := int(min(r.Content.Input, r.Content.Shared))
	if v.copied == nil {
		k := 0
		for k < n && c.Contains(&r.Content, k) {
			k++
		}
		return k
	}
	v.catchUp()
	v.hashes = r.Content.AppendHashes(v.hashes[:0], n)
	m := v.held[i]
	for k, h := range v.hashes {
		if m[h] == 0 {
			return k
		}
	}
	return n
}
