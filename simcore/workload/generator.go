package workload

import (
	"hash/fnv"
	"math"

	"optimize/simcore"
	"optimize/simcore/kv"
)

// maxTokenID bounds synthetic token ids, as BLIS's sim.MaxTokenID.
const maxTokenID = 128000

// never is the key of a client with nothing to offer now.
const never = simcore.Tick(math.MaxInt64)

// Options tune a Generator.
type Options struct {
	// Seed is the workload seed. The caller resolves precedence between a
	// --seed flag and the spec's seed (pass spec.Seed to use the file's).
	Seed int64
	// BlockSize is the KV block size in tokens (> 0), which sets how
	// Request.Content counts blocks.
	BlockSize int
	// NumRequests caps the requests produced; 0 = the spec's num_requests
	// (0 there too = no cap).
	NumRequests int
	// Horizon in µs: requests arriving at or after it are not produced.
	// 0 = the spec's horizon (0 there too = none).
	Horizon int64
}

// Generator produces a spec's requests lazily in arrival order; it
// implements simcore.Source. It keeps one pre-drawn request per client plus
// the pending rounds of multi-turn sessions, never the whole workload.
// Its clients draw their arrivals as they need them (NewGenerator) or
// replay those of a Draws (Draws.Generator).
type Generator struct {
	*layout // read-only, shared by the generators of one Draws
	clients []clientStream
	queue   clientQueue
	popped  int64

	requests      simcore.RequestPool // the drawn requests not yet popped
	sessions      sessionTable
	nextSessionID int32
}

// prefixGroup is a shared prefix: its length and the chained hashes of its
// full blocks, shared by every request of the group.
type prefixGroup struct {
	length int32
	blocks []uint64
}

// newPrefixGroup draws a prefix of length tokens, token by token, and
// hashes its full blocks of blockSize tokens.
func newPrefixGroup(length, blockSize int, token func() int32) prefixGroup {
	p := prefixGroup{length: int32(length)}
	hasher := simcore.NewBlockHasher(blockSize)
	for range length {
		if h, full := hasher.Add(token()); full {
			p.blocks = append(p.blocks, h)
		}
	}
	return p
}

// clientPlan is a client's validated spec in the form generation needs.
type clientPlan struct {
	slo           simcore.SLOClass
	arrival       arrivalSampler
	input, output lengthSampler
	reasonRatio   lengthSampler
	hasReason     bool  // draw (and discard) a reason ratio per round, as BLIS does
	group         int32 // prefix group index, -1 = none
	prefixLen     int   // the group's prefix length in tokens, 0 for none
	windows       []Window
	windowEnd     simcore.Tick // end of the last window; the process is over after it
	rounds        int32        // 0 = single-turn
	thinkUs       int64
	accumulate    bool
	singleSession bool
	closedLoop    bool
}

// clientStream is one client's lazily advanced arrival process.
type clientStream struct {
	plan      clientPlan
	index     int32
	generated int64 // requests taken from the arrivals, every round counted (uids)
	head      *simcore.Request
	headSeq   uint64
	later     roundQueue
	seq       uint64

	// The arrivals: drawn here (live, their lengths into rounds), or
	// replayed from a shared feed, next being the next one to take.
	live   clientDraws
	rounds []roundLen
	feed   *clientFeed
	drawn  *drawnArrivals // the feed's arrivals known at the last look
	next   int
}

// NewGenerator validates spec and options and prepares the streams; the
// first request of every client is drawn here.
func NewGenerator(spec *Spec, opt Options) (*Generator, error) {
	l, err := newLayout(spec, opt)
	if err != nil {
		return nil, err
	}
	g := newGenerator(l)
	for i := range g.clients {
		c := &g.clients[i]
		c.live = newClientDraws(l.seeds[i])
		c.rounds = make([]roundLen, c.plan.stride())
	}
	g.start()
	return g, nil
}

// newGenerator makes a generator of l whose clients have no arrivals yet.
func newGenerator(l *layout) *Generator {
	g := &Generator{layout: l, clients: make([]clientStream, len(l.plans))}
	for i := range g.clients {
		g.clients[i].plan = l.plans[i]
		g.clients[i].index = int32(i)
	}
	return g
}

// start takes every client's first arrival.
func (g *Generator) start() {
	g.queue = newClientQueue(len(g.clients))
	for i := range g.clients {
		g.advance(&g.clients[i])
		g.refresh(&g.clients[i])
	}
}

func fnv1a64(s string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return int64(h.Sum64())
}

func makePlan(c *Client, ratePerUs float64, groupOf map[string]int32) clientPlan {
	slo, _ := simcore.ParseSLOClass(c.SLOClass) // validated
	p := clientPlan{
		slo:     slo,
		arrival: newArrivalSampler(c.Arrival, ratePerUs),
		input:   newLengthSampler(c.Input),
		output:  newLengthSampler(c.Output),
		group:   -1,
	}
	if c.PrefixGroup != "" {
		p.group = groupOf[c.PrefixGroup]
	}
	if c.Lifecycle != nil {
		p.windows = c.Lifecycle.Windows
		for _, w := range p.windows {
			p.windowEnd = max(p.windowEnd, w.EndUs)
		}
	}
	if mt := c.multiTurn(); mt != nil {
		p.rounds = int32(mt.MaxRounds)
		p.thinkUs = mt.ThinkTimeUs
		p.accumulate = mt.ContextGrowth == "accumulate"
		p.singleSession = mt.SingleSession
		p.closedLoop = c.closedLoop()
		if rr := c.Reasoning.ReasonRatio; rr.Type != "" {
			p.reasonRatio, p.hasReason = newLengthSampler(rr), true
		}
	}
	return p
}

func (p *clientPlan) active(t simcore.Tick) bool {
	if p.windows == nil {
		return true
	}
	for _, w := range p.windows {
		if t >= w.StartUs && t < w.EndUs {
			return true
		}
	}
	return false
}

// Peek returns the arrival time of the next request. After a Done call it
// may return an earlier time than before (a closed-loop round became known).
func (g *Generator) Peek() (simcore.Tick, bool) {
	if g.limit > 0 && g.popped >= g.limit {
		return 0, false
	}
	_, t := g.queue.first()
	return t, t != never
}

// Pop fills dst with the request Peek announced; false if none.
func (g *Generator) Pop(dst *simcore.Request) bool {
	if _, ok := g.Peek(); !ok {
		return false
	}
	ci, _ := g.queue.first()
	c := &g.clients[ci]
	var r *simcore.Request
	if c.headIsNext() {
		r = c.head
		g.advance(c)
	} else if p := c.later.pop(); p.req != nil {
		r = p.req
	} else {
		g.popRound(c, p, dst)
	}
	g.refresh(c)
	if r != nil {
		*dst = *r
		g.requests.Put(r)
	}
	dst.ID = g.popped
	g.popped++
	return true
}

// Done: for a closed-loop round that completed it schedules the
// session's next round think_time_us after at. Call it once per request.
func (g *Generator) Done(r *simcore.Request, at simcore.Tick, completed bool) {
	if r == nil {
		return
	}
	if r.Session >= 0 {
		if s, slot := g.sessions.get(r.Session); s != nil && s.issued == r.Round {
			g.nextRound(s, slot, at, completed)
		}
	}
}

func (c *clientStream) headIsNext() bool {
	if c.head == nil {
		return false
	}
	if len(c.later) == 0 {
		return true
	}
	top := c.later.top()
	return c.head.Arrival < top.at || (c.head.Arrival == top.at && c.headSeq < top.seq)
}

// refresh re-keys the client in the merge queue after its stream changed.
func (g *Generator) refresh(c *clientStream) {
	t := never
	if c.head != nil {
		t = c.head.Arrival
	}
	if len(c.later) > 0 {
		t = min(t, c.later.top().at)
	}
	g.queue.set(c.index, t)
}

// advance takes the client's next process arrival into c.head (nil when
// the process is over): a single request, or round 0 of a new session.
func (g *Generator) advance(c *clientStream) {
	c.head = nil
	at, rounds, ok := g.nextArrival(c)
	if !ok {
		return
	}
	if c.plan.rounds == 0 {
		c.head = g.singleRequest(c, at, rounds[0])
		c.headSeq = c.nextSeq()
		c.generated++
		return
	}
	g.startSession(c, at, rounds)
}

// nextArrival is the client's next arrival and its lengths (read-only).
func (g *Generator) nextArrival(c *clientStream) (simcore.Tick, []roundLen, bool) {
	if c.feed != nil {
		return c.replay()
	}
	at, ok := c.live.next(&c.plan, g.layout, c.rounds)
	return at, c.rounds, ok
}

func (c *clientStream) nextSeq() uint64 {
	c.seq++
	return c.seq
}

// singleRequest builds a single-turn request of the given lengths.
func (g *Generator) singleRequest(c *clientStream, at simcore.Tick, n roundLen) *simcore.Request {
	p := &c.plan
	r := g.requests.Take()
	_, prefixBlocks := g.prefix(p.group)
	r.Content = kv.NewContent(prefixBlocks, c.uid(0), int(n.input), int(n.output), g.blockSize, len(prefixBlocks))
	r.Content.Exclusive = true // its uid is its own
	r.Arrival = at
	r.InputLen = n.input
	r.OutputLen = n.output
	r.SLO = p.slo
	r.Client = c.index
	return r
}

// prefix returns the group's prefix length and block hashes (none for -1).
func (g *Generator) prefix(group int32) (int, []uint64) {
	if group < 0 {
		return 0, nil
	}
	pg := &g.prefixes[group]
	return int(pg.length), pg.blocks
}

// uid names the token stream of the client's next request, or of round r
// of its next session. It depends only on the client's own history, so a
// request's content never changes with the horizon or the request cap.
func (c *clientStream) uid(r int32) uint64 {
	return uint64(c.index+1)<<40 | uint64(c.generated+int64(r)+1)
}

// Tenant is the tenant_id of the client whose requests have Client
// client ("" for none): flow control keeps one flow per tenant.
func (g *Generator) Tenant(client int32) string {
	if client < 0 || int(client) >= len(g.tenants) {
		return ""
	}
	return g.tenants[client]
}

// MaxRequests is the request cap (0 = none, the horizon ends the run),
// at most 2^30 so that it fits an int anywhere.
func (g *Generator) MaxRequests() int { return int(min(g.limit, 1<<30)) }
