package cluster

import (
	"optimize/simcore"
	"optimize/simcore/kv"
)

// pdView is the prefix-cache view the prefix-threshold decider reads, as
// BLIS f90a1e3a keeps it: with a delay D > 0, a frozen copy of every
// instance's block hashes, all copied again at the first routing or
// admission decision at least D µs after the last copy (the first copy,
// at time 0, is empty); with D = 0, the caches themselves.
type pdView struct {
	delay   simcore.Tick
	last    simcore.Tick
	held    []map[uint64]int32 // per instance: hash → copies, as of last
	pending []pdViewEvent      // changes since last, in order
	hashes  []uint64           // scratch
}

type pdViewEvent struct {
	hash     uint64
	instance int32
	stored   bool
}

func newPDView(n int, delay simcore.Tick) *pdView {
	v := &pdView{delay: delay, held: make([]map[uint64]int32, n)}
	for i := range v.held {
		v.held[i] = map[uint64]int32{}
	}
	return v
}

// observe records a change of instance i's prefix cache.
func (v *pdView) observe(i int, hash uint64, stored bool) {
	if v.delay > 0 {
		v.pending = append(v.pending, pdViewEvent{hash: hash, instance: int32(i), stored: stored})
	}
}

// refresh copies the caches again when the last copy is delay old.
func (v *pdView) refresh(now simcore.Tick) {
	if v.delay == 0 || now-v.last < v.delay {
		return
	}
	v.last = now
	for _, ev := range v.pending {
		m := v.held[ev.instance]
		if ev.stored {
			m[ev.hash]++
		} else if m[ev.hash] <= 1 {
			delete(m, ev.hash)
		} else {
			m[ev.hash]--
		}
	}
	v.pending = v.pending[:0]
}

// cachedBlocks is how many of r's first input blocks instance i holds,
// as the view shows it (live cache c when there is no delay).
func (v *pdView) cachedBlocks(i int, r *simcore.Request, c *kv.Cache) int {
	n := int(min(r.Content.Input, r.Content.Shared))
	if v.delay == 0 {
		k := 0
		for k < n && c.Contains(&r.Content, k) {
			k++
		}
		return k
	}
	v.hashes = r.Content.AppendHashes(v.hashes[:0], n)
	m := v.held[i]
	for k, h := range v.hashes {
		if m[h] == 0 {
			return k
		}
	}
	return n
}
