package workload

import (
	"math"

	"optimize/simcore"
	"optimize/simcore/kv"
)

// session holds what a multi-turn session's later rounds need. Every
// round is drawn when the session starts (clientDraws.session). Only
// lengths are kept: with accumulate, every round re-reads and extends one
// token stream (prefix, in0, out0, in1, out1, …), named by uid; otherwise
// round r has a stream of its own, uid + r.
type session struct {
	id     int32
	client int32 // its rounds are its client's plan.rounds
	issued int32 // closed loop: the round handed out last
	uid    uint64
	// Its rounds are the table's rounds[first : first+rounds], in a region
	// with room for room; the region stays with the slot.
	first, room int32
}

// roundLen is one round's input (prefix and context included) and output
// length.
type roundLen struct{ input, output int32 }

// sessionTable holds sessions: the closed-loop ones waiting for a round's
// Done, and the one being drawn. A million queued sessions must stay
// small, so they live in chunks of values (no object and no map entry
// each), found by id through a dense id → slot array, their rounds in one
// shared array: no session holds a pointer for the garbage collector to
// follow.
type sessionTable struct {
	// chunks hold the slots, sessionChunk each: the table grows by a chunk
	// instead of copying every slot into one twice as large.
	chunks [][]session
	slots  int32   // slots made
	free   []int32 // unused slots
	byID   []int32 // session id → slot + 1; 0 = not waiting
	rounds []roundLen
}

const sessionChunk = 1024

func (t *sessionTable) at(slot int32) *session {
	return &t.chunks[slot/sessionChunk][slot%sessionChunk]
}

// take returns a cleared session and its slot.
func (t *sessionTable) take() (*session, int32) {
	var i int32
	if n := len(t.free); n > 0 {
		i = t.free[n-1]
		t.free = t.free[:n-1]
	} else {
		if t.slots%sessionChunk == 0 {
			t.chunks = append(t.chunks, make([]session, sessionChunk))
		}
		i = t.slots
		t.slots++
	}
	s := t.at(i)
	*s = session{first: s.first, room: s.room}
	return s, i
}

// setRounds gives s n rounds (their lengths to be written through
// roundsOf), in its slot's region when it has room.
func (t *sessionTable) setRounds(s *session, n int32) {
	if n > s.room {
		s.first, s.room = int32(len(t.rounds)), n
		t.rounds = append(t.rounds, make([]roundLen, n)...)
	}
}

// roundsOf returns the n rounds of s, valid until the next setRounds.
func (t *sessionTable) roundsOf(s *session, n int32) []roundLen {
	return t.rounds[s.first : s.first+n]
}

// keep makes s, in slot, findable by its id until release.
func (t *sessionTable) keep(s *session, slot int32) {
	for int(s.id) >= len(t.byID) {
		t.byID = append(t.byID, 0)
	}
	t.byID[s.id] = slot + 1
}

// get returns the kept session with the given id and its slot, or nil.
func (t *sessionTable) get(id int32) (*session, int32) {
	if id < 0 || int(id) >= len(t.byID) || t.byID[id] == 0 {
		return nil, -1
	}
	return t.at(t.byID[id] - 1), t.byID[id] - 1
}

// release frees s's slot. Ids are unique, so an entry for s.id can only
// be s's.
func (t *sessionTable) release(s *session, slot int32) {
	if int(s.id) < len(t.byID) {
		t.byID[s.id] = 0
	}
	t.free = append(t.free, slot)
}

// startSession starts a session at start whose rounds have the drawn
// lengths, and makes round 0 the client's head. Open loop: the later
// rounds are queued right away at start + Σ(think + output of earlier
// rounds), as BLIS 7fd7a88d does. Closed loop: they wait for Done.
func (g *Generator) startSession(c *clientStream, start simcore.Tick, drawn []roundLen) {
	p := &c.plan
	s, slot := g.sessions.take()
	s.id = g.nextSessionID
	g.nextSessionID++
	s.client = c.index
	s.uid = c.uid(0) // rounds take uid(0) … uid(rounds-1)
	g.sessions.setRounds(s, p.rounds)
	rounds := g.sessions.roundsOf(s, p.rounds)
	copy(rounds, drawn)
	c.generated += int64(p.rounds)

	c.head = g.roundRequest(c, s, 0, start)
	c.headSeq = c.nextSeq()
	if p.closedLoop && p.rounds > 1 {
		g.sessions.keep(s, slot)
		return
	}
	at := start
	for r := int32(1); r < p.rounds; r++ {
		at = addTicks(addTicks(at, p.thinkUs), simcore.Tick(rounds[r-1].output))
		if at >= g.horizon {
			break // rounds are chronological
		}
		if !p.active(at) {
			continue // BLIS suppresses rounds outside the lifecycle windows
		}
		c.later.push(pendingRound{at: at, seq: c.nextSeq(), req: g.roundRequest(c, s, r, at)})
	}
	g.sessions.release(s, slot)
}

// nextRound handles the Done of a closed-loop session's current round: a
// completed round is followed think_time_us later by the next one (unless it
// would arrive at or after the horizon, or the request cap is reached); a
// rejected or dropped one ends the session.
func (g *Generator) nextRound(s *session, slot int32, at simcore.Tick, completed bool) {
	c := &g.clients[s.client]
	next := s.issued + 1
	arrival := addTicks(at, c.plan.thinkUs)
	capped := g.limit > 0 && g.popped >= g.limit
	if !completed || next >= c.plan.rounds || arrival >= g.horizon || capped {
		g.sessions.release(s, slot)
		return
	}
	s.issued = next
	c.later.push(pendingRound{at: arrival, seq: c.nextSeq(), slot: slot, round: next})
	g.refresh(c)
}

// popRound fills dst with the closed-loop round p names; the session is
// released with its last round, as nothing is left to wait for.
func (g *Generator) popRound(c *clientStream, p pendingRound, dst *simcore.Request) {
	s := g.sessions.at(p.slot)
	g.fillRound(dst, c, s, p.round, p.at)
	if p.round+1 >= c.plan.rounds {
		g.sessions.release(s, p.slot)
	}
}

// roundRequest builds round r of s arriving at at.
func (g *Generator) roundRequest(c *clientStream, s *session, r int32, at simcore.Tick) *simcore.Request {
	req := g.requests.Take()
	g.fillRound(req, c, s, r, at)
	return req
}

// fillRound fills the reset request req with round r of s arriving at at.
func (g *Generator) fillRound(req *simcore.Request, c *clientStream, s *session, r int32, at simcore.Tick) {
	_, prefix := g.prefix(c.plan.group)
	rounds := g.sessions.roundsOf(s, c.plan.rounds)
	in, out := int(rounds[r].input), int(rounds[r].output)
	if c.plan.accumulate {
		// Later rounds re-read every block; the last round's own blocks are
		// read by nobody, so only its context (the previous round's whole
		// sequence, already indexed) is shareable.
		shared := math.MaxInt32
		if int(r) == len(rounds)-1 {
			shared = len(prefix)
			if r > 0 {
				shared = int(rounds[r-1].input+rounds[r-1].output) / g.blockSize
			}
		}
		req.Content = kv.NewContent(prefix, s.uid, in, out, g.blockSize, shared)
		// Rounds share the stream: one at a time only in a closed loop.
		req.Content.Exclusive = c.plan.closedLoop
	} else {
		req.Content = kv.NewContent(prefix, s.uid+uint64(r), in, out, g.blockSize, len(prefix))
		req.Content.Exclusive = true
	}
	req.Arrival = at
	req.InputLen = rounds[r].input
	req.OutputLen = rounds[r].output
	req.SLO = c.plan.slo
	req.Client = c.index
	req.Session = s.id
	req.Round = r
}

// addTicks adds a non-negative duration, saturating instead of overflowing.
func addTicks(t, d simcore.Tick) simcore.Tick {
	if d > math.MaxInt64-t {
		return math.MaxInt64
	}
	return t + d
}
