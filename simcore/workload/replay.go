package workload

import (
	"sync"
	"sync/atomic"

	"optimize/simcore"
)

// Draws is a workload's random draws for one spec and one set of options
// (seed, block size, request cap, horizon): the prefix groups and every
// client's arrivals, each an arrival time and the lengths of its request
// or of every round of its session. Generators made by Generator replay
// them and produce exactly the requests a NewGenerator with the same spec
// and options would, under any simulation feedback: a closed-loop round
// still arrives when Done says (that is the generator's own state), only
// its length comes from here.
//
// A client's arrivals are drawn when a generator first needs them and then
// kept, so a Draws grows to the arrivals of the run that went furthest (in
// batches of feedBatch per client). It holds 8 bytes (the time) plus 8 per
// drawn length (a session's rounds, or the single request) per arrival —
// 32 bytes for a 3-round session — with up to a quarter more of slice
// room, and each client's random stream (about 5 KB) to draw more.
//
// A Draws is safe for concurrent use: replays share no cursor, and the
// arrivals a client has drawn are appended under its lock and published
// whole; a published arrival never changes.
type Draws struct {
	layout *layout
	feeds  []clientFeed
}

// clientFeed is one client's shared arrivals.
type clientFeed struct {
	layout *layout
	plan   *clientPlan
	stride int
	mu     sync.Mutex
	draws  clientDraws // guarded by mu
	drawn  atomic.Pointer[drawnArrivals]
}

// drawnArrivals is a client's arrivals drawn so far: arrival k arrives at
// at[k] with lengths rounds[k·stride : (k+1)·stride]. Elements below len
// are never written again (a later publication may append in place, past
// this one's len).
type drawnArrivals struct {
	at     []simcore.Tick
	rounds []roundLen
	over   bool // the process ended after these
}

// feedBatch is how many arrivals a feed draws at once when a replay needs
// one more: enough to take the lock rarely, few enough to be a small
// excess over what the furthest run needs.
const feedBatch = 32

// NewDraws validates spec and options (as NewGenerator does) and prepares
// the streams; arrivals are drawn as replays need them.
func NewDraws(spec *Spec, opt Options) (*Draws, error) {
	l, err := newLayout(spec, opt)
	if err != nil {
		return nil, err
	}
	d := &Draws{layout: l, feeds: make([]clientFeed, len(l.plans))}
	for i := range d.feeds {
		f := &d.feeds[i]
		f.layout = l
		f.plan = &l.plans[i]
		f.stride = f.plan.stride()
		f.draws = newClientDraws(l.seeds[i])
		f.drawn.Store(&drawnArrivals{})
	}
	return d, nil
}

// Generator returns a new generator replaying d from its first request.
func (d *Draws) Generator() *Generator {
	g := newGenerator(d.layout)
	for i := range g.clients {
		c := &g.clients[i]
		c.feed = &d.feeds[i]
		c.drawn = c.feed.drawn.Load()
	}
	g.start()
	return g
}

// Arrivals counts the arrivals drawn so far, and the round lengths they
// hold.
func (d *Draws) Arrivals() (arrivals, lengths int) {
	for i := range d.feeds {
		a := d.feeds[i].drawn.Load()
		arrivals += len(a.at)
		lengths += len(a.rounds)
	}
	return arrivals, lengths
}

// replay takes the client's next arrival from its feed; the lengths are
// shared and read-only.
func (c *clientStream) replay() (simcore.Tick, []roundLen, bool) {
	k := c.next
	if k >= len(c.drawn.at) {
		if c.drawn.over {
			return 0, nil, false
		}
		c.drawn = c.feed.extend(k)
		if k >= len(c.drawn.at) {
			return 0, nil, false
		}
	}
	c.next++
	s := c.feed.stride
	return c.drawn.at[k], c.drawn.rounds[k*s : (k+1)*s : (k+1)*s], true
}

// extend draws arrivals to the end of arrival k's batch (feedBatch
// arrivals) or to the end of the process, and returns the arrivals then
// known.
func (f *clientFeed) extend(k int) *drawnArrivals {
	f.mu.Lock()
	defer f.mu.Unlock()
	cur := f.drawn.Load()
	if k < len(cur.at) || cur.over {
		return cur // another replay drew it meanwhile
	}
	want := (k/feedBatch + 1) * feedBatch // to the end of k's batch
	n := want - len(cur.at)
	next := &drawnArrivals{at: reserve(cur.at, n), rounds: reserve(cur.rounds, n*f.stride)}
	for len(next.at) < want {
		n := len(next.rounds)
		next.rounds = next.rounds[:n+f.stride]
		at, ok := f.draws.next(f.plan, f.layout, next.rounds[n:])
		if !ok {
			next.rounds = next.rounds[:n]
			next.over = true
			break
		}
		next.at = append(next.at, at)
	}
	f.drawn.Store(next)
	return next
}

// reserve returns s with room for n more elements. It grows by a quarter
// (append doubles), which keeps a kept Draws within 1.25 times its
// arrivals; growing geometrically keeps the copying linear overall.
func reserve[T any](s []T, n int) []T {
	if cap(s)-len(s) >= n {
		return s
	}
	out := make([]T, len(s), len(s)+max(n, len(s)/4))
	copy(out, s)
	return out
}
