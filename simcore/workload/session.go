package workload

import (
	"math"

	"optimize/simcore"
)

// session holds what a multi-turn session's later rounds need. BLIS draws
// every round of a session when the session starts; so does this package
// (whatever the loop mode), which keeps each client's random stream — and so
// every round-0 arrival and length — identical to BLIS's. Only lengths are
// kept: with accumulate, every round re-reads and extends one token stream
// (prefix, in0, out0, in1, out1, …), named by uid; otherwise round r has a
// stream of its own, uid + r.
type session struct {
	id       int32
	client   int32
	issued   int32 // closed loop: the round handed out last
	uid      uint64
	inputLen []int32
	output   []int32
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
	prefixLen, _ := g.prefix(p.group)
	s.uid = c.uid(0) // rounds take uid(0) … uid(rounds-1)
	context := 0     // accumulated new-input and output tokens of earlier rounds
	for r := int32(0); r < p.rounds; r++ {
		in := p.input.sample(c.rng)
		out := p.output.sample(c.rng)
		c.src.skipTokens(in + out)
		if p.accumulate {
			s.inputLen = append(s.inputLen, int32(prefixLen+context+in))
			context += in + out
		} else {
			s.inputLen = append(s.inputLen, int32(prefixLen+in))
		}
		s.output = append(s.output, int32(out))
		if p.hasReason {
			p.reasonRatio.sample(c.rng) // drawn and discarded, as BLIS draws it
		}
	}
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

// roundRequest builds round r of s arriving at at.
func (g *Generator) roundRequest(c *clientStream, s *session, r int32, at simcore.Tick) *simcore.Request {
	req := g.takeRequest()
	_, prefix := g.prefix(c.plan.group)
	in, out := int(s.inputLen[r]), int(s.output[r])
	if c.plan.accumulate {
		// Later rounds re-read every block; the last round's own blocks are
		// read by nobody, so only its context (the previous round's whole
		// sequence, already indexed) is shareable.
		shared := math.MaxInt32
		if int(r) == len(s.inputLen)-1 {
			shared = len(prefix)
			if r > 0 {
				shared = int(s.inputLen[r-1]+s.output[r-1]) / g.blockSize
			}
		}
		req.Content = g.content(prefix, s.uid, in, out, shared)
	} else {
		req.Content = g.content(prefix, s.uid+uint64(r), in, out, len(prefix))
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
	*s = session{inputLen: s.inputLen[:0], output: s.output[:0]}
	g.freeSessions = append(g.freeSessions, s)
}

// addTicks adds a non-negative duration, saturating instead of overflowing.
func addTicks(t, d simcore.Tick) simcore.Tick {
	if d > math.MaxInt64-t {
		return math.MaxInt64
	}
	return t + d
}
