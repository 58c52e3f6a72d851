package traffic

import (
	"strconv"

	"optimize/simcore"
	"optimize/simcore/workload"
)

// traceStream reads a trace's rows as requests.
type traceStream struct{ r *workload.TraceReader }

// FromTrace streams a trace's rows; Mooncake's hash ids are the blocks
// (workload.MooncakeBlockTokens tokens each).
func FromTrace(r *workload.TraceReader) Stream { return traceStream{r} }

func (t traceStream) Next() (Request, error) {
	row, err := t.r.Next()
	if err != nil {
		return Request{}, err
	}
	return Request{Arrival: row.Arrival, Input: row.Input, Output: row.Output, Blocks: row.HashIDs,
		BlockTokens: workload.MooncakeBlockTokens, Session: row.Session}, nil
}

// generatorStream draws a synthetic workload's requests.
type generatorStream struct {
	g         *workload.Generator
	blockSize int
	first     simcore.Tick
	started   bool
	req       simcore.Request
}

// FromGenerator streams a generator's requests, their blocks the full
// blocks of blockSize tokens of the prompt (shared prefixes and session
// context share theirs). A closed-loop session's next round is released
// as if the round before it had been served the moment it arrived: the
// stream is the workload's offered traffic with no service time.
func FromGenerator(g *workload.Generator, blockSize int) Stream {
	return &generatorStream{g: g, blockSize: blockSize}
}

func (s *generatorStream) Next() (Request, error) {
	s.req = simcore.Request{}
	if !s.g.Pop(&s.req) {
		return Request{}, errEOF
	}
	r := &s.req
	if !s.started {
		s.started, s.first = true, r.Arrival
	}
	out := Request{Arrival: r.Arrival - s.first, Input: int(r.InputLen), Output: int(r.OutputLen), BlockTokens: s.blockSize,
		Blocks: r.Content.AppendHashes(make([]uint64, 0, r.Content.Input), int(r.Content.Input))}
	if r.Session >= 0 {
		out.Session = strconv.Itoa(int(r.Session))
	}
	s.g.Done(r, r.Arrival, true)
	return out, nil
}
