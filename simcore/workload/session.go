package workload

import (
	"math"

	"optimize/simcore"
)

// session holds what a multi-turn session's later rounds need. BLIS draws
// every round of a session when the session starts; so does this package
// (whatever the loop mode), which keeps each client's random stream — and so
// every round-0 arrival and length — identical to BLIS's. Only block hashes
// and lengths are kept, never token ids.
type session struct {
	id       int64
	client   int32
	issued   int32 // closed loop: the round handed out last
	inputLen []int32
	output   []int32
	// blocks: with accumulate, the chain over prefix, in0, out0, in1, out1,
	// …, so round r's blocks are its first inputLen[r]/blockSize entries;
	// otherwise round r's blocks are blocks[offset[r]:offset[r+1]].
	blocks []uint64
	offset []int32
}

// startSession draws a session starting at start in BLIS's order (session id,
// then per round: input length, output length, input tokens, output tokens,
// reason ratio) and makes round 0 the client's head. Open loop: the later
// rounds are queued right away at start + Σ(think + output of earlier
// rounds), as BLIS 7fd7a88d does. Closed loop: they wait for Done.
func (g *Generator) startSession(c *clientStream, start simcore.Tick) {
	p := &c.plan
	s := g.takeSession()
	s.id = g.nextSessionID
	g.nextSessionID++
	s.client = c.index
	c.rng.Int63() // BLIS's random session id, drawn to keep the stream aligned
	h, prefixLen, prefixBlocks := g.prefixState(p.group)
	context := 0 // accumulated new-input and output tokens of earlier rounds
	for r := int32(0); r < p.rounds; r++ {
		in := p.input.sample(c.rng)
		out := p.output.sample(c.rng)
		if p.accumulate {
			if r == 0 {
				s.blocks = append(s.blocks, prefixBlocks...)
			}
			s.blocks = hashTokens(c.src, &h, in, s.blocks)
			s.blocks = hashTokens(c.src, &h, out, s.blocks)
			s.inputLen = append(s.inputLen, int32(prefixLen+context+in))
			context += in + out
		} else {
			s.offset = append(s.offset, int32(len(s.blocks)))
			h, _, _ = g.prefixState(p.group) // each round restarts after the prefix
			s.blocks = hashTokens(c.src, &h, in, append(s.blocks, prefixBlocks...))
			s.blocks = hashTokens(c.src, &h, out, s.blocks)
			s.inputLen = append(s.inputLen, int32(prefixLen+in))
		}
		s.output = append(s.output, int32(out))
		if p.hasReason {
			p.reasonRatio.sample(c.rng) // drawn and discarded, as BLIS draws it
		}
	}
	s.offset = append(s.offset, int32(len(s.blocks)))
	c.generated += int64(p.rounds)

	c.head = g.roundRequest(c, s, 0, start)
	c.headSeq = c.nextSeq()
	if p.closedLoop && p.rounds > 1 {
		s.issued = 0
		g.sessions[s.id] = s
		return
	}
	at := start
	for r := int32(1); r < p.rounds; r++ {
		at = addTicks(addTicks(at, p.thinkUs), simcore.Tick(s.output[r-1]))
		if at >= g.horizon {
			break // rounds are chronological
		}
		if !p.active(at) {
			continue // BLIS suppresses rounds outside the lifecycle windows
		}
		c.later.push(pendingRound{at: at, seq: c.nextSeq(), req: g.roundRequest(c, s, r, at)})
	}
	g.releaseSession(s)
}

// nextRound handles the Done of a closed-loop session's current round: a
// completed round is followed think_time_us later by the next one (unless it
// would arrive at or after the horizon, or the request cap is reached); a
// rejected or dropped one ends the session.
func (g *Generator) nextRound(s *session, at simcore.Tick, completed bool) {
	c := &g.clients[s.client]
	next := s.issued + 1
	arrival := addTicks(at, c.plan.thinkUs)
	capped := g.limit > 0 && g.popped >= g.limit
	if !completed || int(next) >= len(s.inputLen) || arrival >= g.horizon || capped {
		g.endSession(s)
		return
	}
	s.issued = next
	c.later.push(pendingRound{at: arrival, seq: c.nextSeq(), req: g.roundRequest(c, s, next, arrival)})
	g.refresh(c)
	if int(next)+1 >= len(s.inputLen) {
		g.endSession(s) // last round built: nothing left to wait for
	}
}

// roundRequest builds round r of s arriving at at; its blocks are copied so
// that the request owns them (recycling must not touch the session).
func (g *Generator) roundRequest(c *clientStream, s *session, r int32, at simcore.Tick) *simcore.Request {
	req := g.takeRequest()
	var blocks []uint64
	if c.plan.accumulate {
		// Input and output blocks: decoding fills (and hashes) the latter.
		blocks = s.blocks[:min(len(s.blocks), int(s.inputLen[r]+s.output[r])/g.blockSize)]
	} else {
		blocks = s.blocks[s.offset[r]:s.offset[r+1]]
	}
	req.Blocks = append(req.Blocks[:0], blocks...)
	req.InputBlocks = s.inputLen[r] / int32(g.blockSize)
	req.SharedBlocks = int32(len(req.Blocks)) // later rounds reuse them
	if !c.plan.accumulate {
		_, _, prefix := g.prefixState(c.plan.group)
		req.SharedBlocks = int32(len(prefix))
	}
	req.Arrival = at
	req.InputLen = s.inputLen[r]
	req.OutputLen = s.output[r]
	req.SLO = c.plan.slo
	req.Client = c.index
	req.Session = s.id
	req.Round = r
	return req
}

func (g *Generator) takeSession() *session {
	if n := len(g.freeSessions); n > 0 {
		s := g.freeSessions[n-1]
		g.freeSessions = g.freeSessions[:n-1]
		return s
	}
	return &session{}
}

func (g *Generator) endSession(s *session) {
	delete(g.sessions, s.id)
	g.releaseSession(s)
}

// releaseSession keeps the session's slices for the next one.
func (g *Generator) releaseSession(s *session) {
	*s = session{inputLen: s.inputLen[:0], output: s.output[:0], blocks: s.blocks[:0], offset: s.offset[:0]}
	g.freeSessions = append(g.freeSessions, s)
}

// addTicks adds a non-negative duration, saturating instead of overflowing.
func addTicks(t, d simcore.Tick) simcore.Tick {
	if d > math.MaxInt64-t {
		return math.MaxInt64
	}
	return t + d
}
