// Package simtest holds helpers for simulator tests: a request source over
// a fixed list and builders for requests with known block contents.
package simtest

import (
	"optimize/simcore"
	"optimize/simcore/kv"
)

// SliceSource replays a fixed list of requests in order and records when
// each one left the system.
type SliceSource struct {
	reqs []*simcore.Request
	next int
	// Left records, per request id, the time it left (−1 while in flight).
	Left      []simcore.Tick
	Completed []bool
}

// NewSliceSource returns a source over reqs, which must be sorted by
// arrival; ids are assigned in order.
func NewSliceSource(reqs []*simcore.Request) *SliceSource {
	s := &SliceSource{reqs: reqs, Left: make([]simcore.Tick, len(reqs)), Completed: make([]bool, len(reqs))}
	for i, r := range reqs {
		r.ID = int64(i)
		s.Left[i] = -1
	}
	return s
}

func (s *SliceSource) Peek() (simcore.Tick, bool) {
	if s.next >= len(s.reqs) {
		return 0, false
	}
	return s.reqs[s.next].Arrival, true
}

func (s *SliceSource) Pop(r *simcore.Request) bool {
	if s.next >= len(s.reqs) {
		return false
	}
	*r = *s.reqs[s.next]
	s.next++
	return true
}

// Done records when r left and writes its final state back into the list,
// so that tests read each request as the engine last had it.
func (s *SliceSource) Done(r *simcore.Request, at simcore.Tick, completed bool) {
	*s.reqs[r.ID] = *r
	s.Left[r.ID] = at
	s.Completed[r.ID] = completed
}

// Prefix returns the block hashes of a shared prefix of n full blocks,
// distinct for each family.
func Prefix(family uint64, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = family<<32 | uint64(i+1)
	}
	return out
}

// Request builds a request whose input starts with the shared prefix
// blocks and whose other tokens are its own (stream uid), for block size
// blockSize.
func Request(arrival simcore.Tick, input, output int32, blockSize int, prefix []uint64, uid uint64) *simcore.Request {
	r := &simcore.Request{}
	r.Reset()
	r.Arrival, r.InputLen, r.OutputLen = arrival, input, output
	r.Content = kv.NewContent(prefix, uid, int(input), int(output), blockSize, len(prefix))
	return r
}
