// Package simtest holds helpers for simulator tests: a request source over
// a fixed list and builders for requests with known block hashes.
package simtest

import "optimize/simcore"

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

func (s *SliceSource) Pop() *simcore.Request {
	r := s.reqs[s.next]
	s.next++
	return r
}

func (s *SliceSource) Done(r *simcore.Request, at simcore.Tick, completed bool) {
	s.Left[r.ID] = at
	s.Completed[r.ID] = completed
}

// Request builds a request with distinct block hashes derived from tag,
// the first shared blocks taken from the shared prefix family prefix.
func Request(arrival simcore.Tick, input, output int32, blockSize int, prefix uint64, shared int, tag uint64) *simcore.Request {
	r := &simcore.Request{}
	r.Reset()
	r.Arrival, r.InputLen, r.OutputLen = arrival, input, output
	r.InputBlocks = input / int32(blockSize)
	r.SharedBlocks = int32(shared)
	n := int(input+output) / blockSize
	for i := 0; i < n; i++ {
		if i < shared {
			r.Blocks = append(r.Blocks, prefix<<32|uint64(i+1))
		} else {
			r.Blocks = append(r.Blocks, tag<<32|uint64(i+1)|1<<63)
		}
	}
	return r
}
