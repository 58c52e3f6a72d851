package flow

import (
	"math"
	"slices"
	"strings"

	"optimize/simcore"
)

// Entry is one queued request.
type Entry struct {
	Req      *simcore.Request
	Seq      int64        // enqueue attempt number, 1, 2, … (rejected attempts count)
	Enqueued simcore.Tick // when it joined the queue
}

// Outcome is what an enqueue attempt did.
type Outcome uint8

const (
	Enqueued Outcome = iota // queued
	Shed                    // queued, after shedding a lower sheddable entry (the victim)
	Rejected                // not queued: its band or the queue is full
)

// flowQ is one tenant's FIFO in a band; entries[head:] wait, in
// sequence order.
type flowQ struct {
	tenant  string
	entries []Entry
	head    int
}

func (f *flowQ) len() int { return len(f.entries) - f.head }

// band holds one priority's flows that have requests, by tenant name.
type band struct {
	priority int
	flows    []*flowQ
	n        int    // requests queued in the band
	cursor   string // round-robin: the tenant served last
	hasCur   bool
}

// Queue is the gateway queue: bands in descending priority, created by
// the first request of their priority that tries to enqueue (rejected or
// not) and kept for the rest of the run, as their number sets the
// usage-limit ceilings.
type Queue struct {
	cfg   Config
	bands []*band
	n     int
	seq   int64
	where map[int64]*band // queued request's ID → its band
	spare []*flowQ
}

// NewQueue returns an empty queue with cfg's capacities, order and
// fairness (zero values meaning the defaults).
func NewQueue(cfg Config) *Queue {
	return &Queue{cfg: cfg.WithDefaults(), where: map[int64]*band{}}
}

// Len is the number of queued requests.
func (q *Queue) Len() int { return q.n }

// Bands is the number of bands created so far.
func (q *Queue) Bands() int { return len(q.bands) }

// band returns the band of priority p, creating it in its place.
func (q *Queue) band(p int) *band {
	i, found := slices.BinarySearchFunc(q.bands, p, func(b *band, p int) int { return p - b.priority })
	if found {
		return q.bands[i]
	}
	b := &band{priority: p}
	q.bands = slices.Insert(q.bands, i, b)
	return b
}

// Enqueue tries to queue r for tenant at now. The band's capacity is
// checked first, then the queue's; with queue shedding a full queue
// drops its most recent entry of the lowest sheddable band when r's
// priority is higher (the victim, returned with Shed).
func (q *Queue) Enqueue(r *simcore.Request, tenant string, now simcore.Tick) (Outcome, *simcore.Request) {
	p := Priority(r.SLO)
	b := q.band(p)
	q.seq++
	if q.cfg.PerBandCapacity > 0 && b.n >= q.cfg.PerBandCapacity {
		return Rejected, nil
	}
	var victim *simcore.Request
	if q.cfg.MaxQueueDepth > 0 && q.n >= q.cfg.MaxQueueDepth {
		if !q.cfg.QueueShedding {
			return Rejected, nil
		}
		vb, vf := q.shedVictim()
		if vb == nil || p <= vb.priority {
			return Rejected, nil
		}
		victim = q.removeAt(vb, vf, vf.len()-1).Req
	}
	f := q.flow(b, tenant)
	f.entries = append(f.entries, Entry{Req: r, Seq: q.seq, Enqueued: now})
	b.n++
	q.n++
	q.where[r.ID] = b
	if victim != nil {
		return Shed, victim
	}
	return Enqueued, nil
}

// flow returns tenant's flow in b, creating it in name order.
func (q *Queue) flow(b *band, tenant string) *flowQ {
	i, found := slices.BinarySearchFunc(b.flows, tenant, func(f *flowQ, t string) int { return strings.Compare(f.tenant, t) })
	if found {
		return b.flows[i]
	}
	var f *flowQ
	if n := len(q.spare); n > 0 {
		f, q.spare = q.spare[n-1], q.spare[:n-1]
	} else {
		f = &flowQ{}
	}
	f.tenant = tenant
	b.flows = slices.Insert(b.flows, i, f)
	return f
}

// shedVictim finds the flow whose tail is the newest entry of the lowest
// non-empty sheddable band.
func (q *Queue) shedVictim() (*band, *flowQ) {
	for i := len(q.bands) - 1; i >= 0; i-- {
		b := q.bands[i]
		if !Sheddable(b.priority) {
			return nil, nil
		}
		if b.n == 0 {
			continue
		}
		var best *flowQ
		for _, f := range b.flows {
			if best == nil || f.entries[len(f.entries)-1].Seq > best.entries[len(best.entries)-1].Seq {
				best = f
			}
		}
		return b, best
	}
	return nil, nil
}

// Ceiling is the saturation at or above which band i of n (in descending
// priority) holds its requests: 1 for the first, falling linearly to the
// usage limit u for the last.
func Ceiling(i, n int, u float64) float64 {
	if n <= 1 {
		return 1
	}
	return 1 - float64(i)*(1-u)/float64(n-1)
}

// Dequeue takes at most one request given the pool's saturation: it
// walks the bands from the highest priority and stops, taking nothing,
// at the first band whose ceiling the saturation reaches, before looking
// whether that band has requests; otherwise it serves the first
// non-empty band (strict priority across bands, whatever the order).
func (q *Queue) Dequeue(saturation float64) (Entry, bool) {
	if q.n == 0 {
		return Entry{}, false
	}
	for i, b := range q.bands {
		if saturation >= Ceiling(i, len(q.bands), q.cfg.UsageLimit) {
			return Entry{}, false
		}
		if b.n == 0 {
			continue
		}
		f := q.pick(b)
		at := f.head
		if q.cfg.DispatchOrder == OrderSLODeadline {
			at = q.earliestDeadline(f)
		}
		return q.removeAt(b, f, at-f.head), true
	}
	return Entry{}, false
}

// pick chooses the flow of non-empty band b to serve by the fairness
// policy.
func (q *Queue) pick(b *band) *flowQ {
	if q.cfg.Fairness == FairRoundRobin {
		start := 0
		if b.hasCur {
			if i, found := slices.BinarySearchFunc(b.flows, b.cursor, func(f *flowQ, t string) int { return strings.Compare(f.tenant, t) }); found {
				start = (i + 1) % len(b.flows)
			}
		}
		f := b.flows[start]
		b.cursor, b.hasCur = f.tenant, true
		return f
	}
	best := b.flows[0]
	for _, f := range b.flows[1:] {
		if f.entries[f.head].Seq < best.entries[best.head].Seq {
			best = f
		}
	}
	return best
}

// earliestDeadline is the index in f.entries of the entry whose deadline
// (enqueue time + its class's target; none: never) comes first, the
// earliest enqueued among equal deadlines.
func (q *Queue) earliestDeadline(f *flowQ) int {
	best, bestAt := f.head, simcore.Tick(math.MaxInt64)
	for i := f.head; i < len(f.entries); i++ {
		e := &f.entries[i]
		d := simcore.Tick(math.MaxInt64)
		if t, ok := q.cfg.SLOTargets.Get(e.Req.SLO.Known()); ok {
			d = e.Enqueued + simcore.Tick(t)
		}
		if d < bestAt {
			best, bestAt = i, d
		}
	}
	return best
}

// removeAt removes the k-th waiting entry of flow f in band b.
func (q *Queue) removeAt(b *band, f *flowQ, k int) Entry {
	i := f.head + k
	e := f.entries[i]
	if k == 0 {
		f.entries[i] = Entry{}
		f.head++
	} else {
		copy(f.entries[i:], f.entries[i+1:])
		f.entries[len(f.entries)-1] = Entry{}
		f.entries = f.entries[:len(f.entries)-1]
	}
	b.n--
	q.n--
	delete(q.where, e.Req.ID)
	switch {
	case f.len() == 0:
		j := slices.Index(b.flows, f)
		b.flows = slices.Delete(b.flows, j, j+1)
		f.entries, f.head = f.entries[:0], 0
		q.spare = append(q.spare, f)
	case f.head >= 64 && 2*f.head >= len(f.entries):
		n := copy(f.entries, f.entries[f.head:])
		clear(f.entries[n:])
		f.entries, f.head = f.entries[:n], 0
	}
	return e
}

// Remove takes the request with the given ID out of the queue (its TTL
// expired); false when it is not queued.
func (q *Queue) Remove(id int64) (Entry, bool) {
	b, ok := q.where[id]
	if !ok {
		return Entry{}, false
	}
	for _, f := range b.flows {
		for i := f.head; i < len(f.entries); i++ {
			if f.entries[i].Req.ID == id {
				return q.removeAt(b, f, i-f.head), true
			}
		}
	}
	return Entry{}, false
}

// NonSheddableWaiting reports whether a band of priority ≥ 0 has
// requests.
func (q *Queue) NonSheddableWaiting() bool {
	for _, b := range q.bands {
		if !Sheddable(b.priority) && b.n > 0 {
			return true
		}
	}
	return false
}
