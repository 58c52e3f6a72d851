package workload

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand"

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
type Generator struct {
	clients  []clientStream
	prefixes []prefixGroup
	queue    clientQueue

	blockSize int
	horizon   simcore.Tick
	limit     int64 // requests to produce, 0 = no cap
	clientCap int64 // BLIS's per-client generation cap (2·limit) for open-loop clients
	popped    int64

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
	rng       *rand.Rand   // wraps src, for the samplers
	src       *lfgSource   // the same stream, for bulk token draws
	clock     simcore.Tick // arrival time of the last process event drawn
	generated int64        // requests generated, every round counted (BLIS's cap)
	exhausted bool         // the process will produce no more arrivals
	head      *simcore.Request
	headSeq   uint64
	later     roundQueue
	seq       uint64
}

// NewGenerator validates spec and options and prepares the streams; the
// first request of every client is drawn here.
func NewGenerator(spec *Spec, opt Options) (*Generator, error) {
	if spec == nil {
		return nil, errors.New("workload: nil spec")
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if opt.BlockSize <= 0 {
		return nil, fmt.Errorf("workload: block size must be > 0, got %d", opt.BlockSize)
	}
	if opt.NumRequests < 0 || opt.Horizon < 0 {
		return nil, fmt.Errorf("workload: num-requests and horizon must be >= 0, got %d and %d", opt.NumRequests, opt.Horizon)
	}
	g := &Generator{blockSize: opt.BlockSize, limit: int64(opt.NumRequests), horizon: opt.Horizon}
	if g.limit == 0 {
		g.limit = spec.NumRequests
	}
	if g.horizon == 0 {
		g.horizon = spec.Horizon
	}
	if g.horizon == 0 {
		g.horizon = never
	}
	if g.limit == 0 && g.horizon == never {
		return nil, fmt.Errorf("%s: workload is unbounded: set num_requests or horizon", spec.Name)
	}
	if g.limit > 0 {
		g.clientCap = 2 * g.limit
		if g.clientCap < g.limit {
			g.clientCap = math.MaxInt64
		}
	}

	// BLIS's "workload-gen" stream: prefix tokens first, then client seeds.
	master := rand.New(rand.NewSource(opt.Seed ^ fnv1a64("workload-gen")))
	groupOf := g.drawPrefixes(spec, master)
	totalFraction := 0.0
	for i := range spec.Clients {
		totalFraction += spec.Clients[i].RateFraction
	}
	g.clients = make([]clientStream, len(spec.Clients))
	for i := range spec.Clients {
		c := &spec.Clients[i]
		// Same float operations as BLIS, for bit-identical rates.
		rate := spec.AggregateRate * (c.RateFraction / totalFraction) / 1e6
		src := newLFG(master.Int63())
		g.clients[i] = clientStream{
			plan:  makePlan(c, rate, groupOf),
			index: int32(i),
			rng:   rand.New(src),
			src:   src,
		}
	}
	g.queue = newClientQueue(len(g.clients))
	for i := range g.clients {
		g.advance(&g.clients[i])
		g.refresh(&g.clients[i])
	}
	return g, nil
}

func fnv1a64(s string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return int64(h.Sum64())
}

// drawPrefixes draws each prefix group's tokens, groups in order of first
// appearance, and hashes them once. It returns the group index by name.
func (g *Generator) drawPrefixes(spec *Spec, master *rand.Rand) map[string]int32 {
	groupOf := map[string]int32{}
	for i := range spec.Clients {
		c := &spec.Clients[i]
		if c.PrefixGroup == "" {
			continue
		}
		if _, seen := groupOf[c.PrefixGroup]; seen {
			continue
		}
		length := defaultPrefixLength
		if c.PrefixLength != nil {
			length = *c.PrefixLength
		}
		groupOf[c.PrefixGroup] = int32(len(g.prefixes))
		g.prefixes = append(g.prefixes, newPrefixGroup(length, g.blockSize, func() int32 { return int32(master.Intn(maxTokenID)) }))
	}
	return groupOf
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

// advance draws the client's next process arrival into c.head (nil when the
// process is over): a single request, or round 0 of a new session.
func (g *Generator) advance(c *clientStream) {
	c.head = nil
	p := &c.plan
	for !c.exhausted {
		if p.singleSession {
			g.startSingleSession(c)
			return
		}
		if g.clientCap > 0 && !p.closedLoop && c.generated >= g.clientCap {
			c.exhausted = true // BLIS's per-client cap (2·limit, every round counted)
			return
		}
		iat := p.arrival.next(c.rng)
		if iat >= g.horizon-c.clock {
			c.exhausted = true
			return
		}
		c.clock += iat
		if p.windows != nil {
			if c.clock >= p.windowEnd {
				c.exhausted = true // no window left: BLIS would only draw gaps
				return
			}
			if !p.active(c.clock) {
				continue
			}
		}
		if p.rounds == 0 {
			c.head = g.singleRequest(c, c.clock)
			c.headSeq = c.nextSeq()
			c.generated++
			return
		}
		g.startSession(c, c.clock)
		return
	}
}

// startSingleSession runs BLIS's single_session: one session per client,
// starting one gap into the first lifecycle window (or t = 0).
func (g *Generator) startSingleSession(c *clientStream) {
	c.exhausted = true
	p := &c.plan
	iat := p.arrival.next(c.rng)
	offset := simcore.Tick(0)
	if p.windows != nil {
		offset = p.windows[0].StartUs
	}
	if iat >= g.horizon-offset {
		return
	}
	start := offset + iat
	if !p.active(start) {
		return
	}
	c.clock = start
	g.startSession(c, start)
}

func (c *clientStream) nextSeq() uint64 {
	c.seq++
	return c.seq
}

// singleRequest draws a single-turn request in BLIS's order: input length,
// output length, input token ids, output token ids. The token ids are only
// skipped over (they keep the stream aligned with BLIS's): after the group
// prefix they are the request's own, which its Content UID stands for.
func (g *Generator) singleRequest(c *clientStream, at simcore.Tick) *simcore.Request {
	p := &c.plan
	in := p.input.sample(c.rng)
	out := p.output.sample(c.rng)
	c.src.skipTokens(in + out)
	r := g.requests.Take()
	prefixLen, prefixBlocks := g.prefix(p.group)
	r.Content = kv.NewContent(prefixBlocks, c.uid(0), prefixLen+in, out, g.blockSize, len(prefixBlocks))
	r.Content.Exclusive = true // its uid is its own
	r.Arrival = at
	r.InputLen = int32(prefixLen + in)
	r.OutputLen = int32(out)
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

// MaxRequests is the request cap (0 = none, the horizon ends the run),
// at most 2^30 so that it fits an int anywhere.
func (g *Generator) MaxRequests() int { return int(min(g.limit, 1<<30)) }
