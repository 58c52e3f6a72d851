package workload

import (
	"errors"
	"fmt"
	"math"
	"math/rand"

	"optimize/simcore"
)

// layout is what a spec and options fix before any arrival is drawn: the
// bounds, the prefix groups, each client's plan and the seed of its random
// stream. It is read-only once made, so generators replaying one Draws
// share it.
type layout struct {
	blockSize int
	horizon   simcore.Tick
	limit     int64 // requests to produce, 0 = no cap
	clientCap int64 // BLIS's per-client generation cap (2·limit) for open-loop clients
	prefixes  []prefixGroup
	plans     []clientPlan
	seeds     []int64  // each client's stream seed
	tenants   []string // each client's tenant_id
}

// newLayout validates spec and options and draws the master stream: the
// prefix tokens, then the client seeds (BLIS's "workload-gen" order).
func newLayout(spec *Spec, opt Options) (*layout, error) {
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
	l := &layout{blockSize: opt.BlockSize, limit: int64(opt.NumRequests), horizon: opt.Horizon}
	if l.limit == 0 {
		l.limit = spec.NumRequests
	}
	if l.horizon == 0 {
		l.horizon = spec.Horizon
	}
	if l.horizon == 0 {
		l.horizon = never
	}
	if l.limit == 0 && l.horizon == never {
		return nil, fmt.Errorf("%s: workload is unbounded: set num_requests or horizon", spec.Name)
	}
	if l.limit > 0 {
		l.clientCap = 2 * l.limit
		if l.clientCap < l.limit {
			l.clientCap = math.MaxInt64
		}
	}

	master := rand.New(rand.NewSource(opt.Seed ^ fnv1a64("workload-gen")))
	groupOf := l.drawPrefixes(spec, master)
	totalFraction := 0.0
	for i := range spec.Clients {
		totalFraction += spec.Clients[i].RateFraction
	}
	l.plans = make([]clientPlan, len(spec.Clients))
	l.seeds = make([]int64, len(spec.Clients))
	l.tenants = make([]string, len(spec.Clients))
	for i := range spec.Clients {
		c := &spec.Clients[i]
		l.tenants[i] = c.TenantID
		// Same float operations as BLIS, for bit-identical rates.
		rate := spec.AggregateRate * (c.RateFraction / totalFraction) / 1e6
		l.seeds[i] = master.Int63()
		l.plans[i] = makePlan(c, rate, groupOf)
		if g := l.plans[i].group; g >= 0 {
			l.plans[i].prefixLen = int(l.prefixes[g].length)
		}
	}
	return l, nil
}

// drawPrefixes draws each prefix group's tokens, groups in order of first
// appearance, and hashes them once. It returns the group index by name.
func (l *layout) drawPrefixes(spec *Spec, master *rand.Rand) map[string]int32 {
	groupOf := map[string]int32{}
	lengths := spec.PrefixLengths()
	for i := range spec.Clients {
		c := &spec.Clients[i]
		if c.PrefixGroup == "" {
			continue
		}
		if _, seen := groupOf[c.PrefixGroup]; seen {
			continue
		}
		groupOf[c.PrefixGroup] = int32(len(l.prefixes))
		l.prefixes = append(l.prefixes, newPrefixGroup(lengths[c.PrefixGroup], l.blockSize, func() int32 { return int32(master.Intn(maxTokenID)) }))
	}
	return groupOf
}

// PrefixLengths returns each prefix group's length in tokens: the
// prefix_length of the first client naming the group, 50 when that
// client gives none (BLIS's default).
func (spec *Spec) PrefixLengths() map[string]int {
	lengths := map[string]int{}
	for i := range spec.Clients {
		c := &spec.Clients[i]
		if _, seen := lengths[c.PrefixGroup]; seen || c.PrefixGroup == "" {
			continue
		}
		lengths[c.PrefixGroup] = defaultPrefixLength
		if c.PrefixLength != nil {
			lengths[c.PrefixGroup] = *c.PrefixLength
		}
	}
	return lengths
}

// stride is how many round lengths one arrival of the plan draws: one for
// a single request, every round of a session.
func (p *clientPlan) stride() int { return max(1, int(p.rounds)) }

// clientDraws is one client's random stream and how far its arrival
// process has been drawn. It is everything generation takes from the
// random streams after the layout, and none of it depends on the
// simulation: a closed-loop round's arrival time comes from Done, but its
// length was drawn with its session. So a client's k-th arrival (its time
// and lengths) is the same whoever draws it and whenever, which is what
// lets Draws share the arrivals between generators.
type clientDraws struct {
	rng       *rand.Rand   // wraps src, for the samplers
	src       *lfgSource   // the same stream, for bulk token draws
	clock     simcore.Tick // arrival time of the last process event drawn
	generated int64        // requests drawn, every round counted (BLIS's cap)
	exhausted bool         // the process will produce no more arrivals
}

func newClientDraws(seed int64) clientDraws {
	src := newLFG(seed)
	return clientDraws{rng: rand.New(src), src: src}
}

// next draws the client's next process arrival: its time and, in rounds
// (p.stride() entries), the lengths of its single request or of every
// round of the session it starts. It reports false when the process is
// over.
func (d *clientDraws) next(p *clientPlan, l *layout, rounds []roundLen) (simcore.Tick, bool) {
	for !d.exhausted {
		if p.singleSession {
			return d.singleSession(p, l, rounds)
		}
		if l.clientCap > 0 && !p.closedLoop && d.generated >= l.clientCap {
			d.exhausted = true // BLIS's per-client cap (2·limit, every round counted)
			return 0, false
		}
		iat := p.arrival.next(d.rng)
		if iat >= l.horizon-d.clock {
			d.exhausted = true
			return 0, false
		}
		d.clock += iat
		if p.windows != nil {
			if d.clock >= p.windowEnd {
				d.exhausted = true // no window left: BLIS would only draw gaps
				return 0, false
			}
			if !p.active(d.clock) {
				continue
			}
		}
		if p.rounds == 0 {
			d.single(p, rounds)
		} else {
			d.session(p, rounds)
		}
		return d.clock, true
	}
	return 0, false
}

// singleSession runs BLIS's single_session: one session per client,
// starting one gap into the first lifecycle window (or t = 0).
func (d *clientDraws) singleSession(p *clientPlan, l *layout, rounds []roundLen) (simcore.Tick, bool) {
	d.exhausted = true
	iat := p.arrival.next(d.rng)
	offset := simcore.Tick(0)
	if p.windows != nil {
		offset = p.windows[0].StartUs
	}
	if iat >= l.horizon-offset {
		return 0, false
	}
	start := offset + iat
	if !p.active(start) {
		return 0, false
	}
	d.clock = start
	d.session(p, rounds)
	return start, true
}

// single draws a single-turn request in BLIS's order: input length, output
// length, input token ids, output token ids. The token ids are only
// skipped over (they keep the stream aligned with BLIS's): after the group
// prefix they are the request's own, which its Content UID stands for.
func (d *clientDraws) single(p *clientPlan, rounds []roundLen) {
	in := p.input.sample(d.rng)
	out := p.output.sample(d.rng)
	d.src.skipTokens(in + out)
	rounds[0] = roundLen{input: int32(p.prefixLen + in), output: int32(out)}
	d.generated++
}

// session draws a session in BLIS's order: session id, then per round
// input length, output length, input tokens, output tokens, reason ratio.
// BLIS draws every round when the session starts, whatever the loop mode;
// so does this, which keeps each client's stream — and so every round-0
// arrival and length — identical to BLIS's.
func (d *clientDraws) session(p *clientPlan, rounds []roundLen) {
	d.rng.Int63() // BLIS's random session id, drawn to keep the stream aligned
	context := 0  // accumulated new-input and output tokens of earlier rounds
	for r := range p.rounds {
		in := p.input.sample(d.rng)
		out := p.output.sample(d.rng)
		d.src.skipTokens(in + out)
		input := p.prefixLen + in
		if p.accumulate {
			input += context
			context += in + out
		}
		rounds[r] = roundLen{input: int32(input), output: int32(out)}
		if p.hasReason {
			p.reasonRatio.sample(d.rng) // drawn and discarded, as BLIS draws it
		}
	}
	d.generated += int64(p.rounds)
}
