package route

import (
	"optimize/simcore"
	"optimize/simcore/internal/u64map"
)

// kvMirror is the router's copy of which block hashes each instance's real
// prefix cache holds, built from KV events as llm-d's precise prefix scorer
// builds its index from vLLM's KVEvents. The router sees an event
// CacheSignalDelay µs after it happened (the event pipeline's lag), so
// events wait in a FIFO until they are old enough.
//
// Layout: one hash table shared by all instances maps a hash to an entry,
// and each entry is a bitset of the instances holding it, so a lookup
// probes once per block for all instances and narrows the set still
// matching (as prefixIndex does). An entry nobody holds leaves the table
// (u64map deletes without tombstones) and is reused.
type kvMirror struct {
	delay simcore.Tick
	words int // uint64 words per holder bitset

	pending eventRing
	entries *u64map.Map // hash → entry
	holders []uint64    // words per entry: the instances holding its hash
	free    []int32     // entries nobody holds

	active matchingSet // scratch of match
}

// kvEvent is one reported change of an instance's prefix cache.
type kvEvent struct {
	at       simcore.Tick
	hash     uint64
	instance int32
	stored   bool
}

func newKVMirror(instances int, delay simcore.Tick) *kvMirror {
	words := (instances + 63) / 64
	return &kvMirror{
		delay:   delay,
		words:   words,
		pending: eventRing{buf: make([]kvEvent, 64)},
		entries: u64map.New(1024),
		active:  newMatchingSet(instances),
	}
}

// KVEvent queues the change until the router may see it. Hash 0 marks "no
// hash" in the KV cache and is never a block's hash; it is ignored.
func (m *kvMirror) KVEvent(instance int, hash uint64, stored bool, at simcore.Tick) {
	if hash == 0 {
		return
	}
	m.pending.push(kvEvent{at: at, hash: hash, instance: int32(instance), stored: stored})
}

// catchUp applies, in order, every queued event at least delay old at now.
// Events come in non-decreasing time, so the first too-recent one ends it.
func (m *kvMirror) catchUp(now simcore.Tick) {
	for !m.pending.empty() {
		ev := m.pending.front()
		if now-ev.at < m.delay {
			return
		}
		m.apply(ev)
		m.pending.pop()
	}
}

// apply sets or clears the instance's bit for the hash. Repeated stores or
// removals are harmless: the mirror holds a set, as the cache's index does.
func (m *kvMirror) apply(ev *kvEvent) {
	word, bit := int(ev.instance)>>6, uint64(1)<<(uint(ev.instance)&63)
	e, ok := m.entries.Get(ev.hash)
	if ev.stored {
		if !ok {
			e = m.newEntry()
			m.entries.Set(ev.hash, e)
		}
		m.holders[int(e)*m.words+word] |= bit
		return
	}
	if !ok {
		return
	}
	bitset := m.holders[int(e)*m.words : int(e+1)*m.words]
	bitset[word] &^= bit
	for _, b := range bitset {
		if b != 0 {
			return
		}
	}
	m.entries.Delete(ev.hash)
	m.free = append(m.free, e)
}

// newEntry returns an entry held by nobody.
func (m *kvMirror) newEntry() int32 {
	if n := len(m.free); n > 0 {
		e := m.free[n-1]
		m.free = m.free[:n-1]
		return e // its bitset is all zero: that is why it was freed
	}
	e := int32(len(m.holders) / m.words)
	for range m.words {
		m.holders = append(m.holders, 0)
	}
	return e
}

func (m *kvMirror) matchRequest(r *simcore.Request, blocks *requestBlocks, matched []int32) {
	m.match(blocks.of(r), matched)
}

// match writes into matched[i] the number of leading blocks of blocks that
// instance i holds, probing each block once and stopping when no instance
// matches any more.
func (m *kvMirror) match(blocks []uint64, matched []int32) {
	m.active.fill()
	for k, h := range blocks {
		var held []uint64
		if e, ok := m.entries.Get(h); ok {
			held = m.holders[int(e)*m.words : int(e+1)*m.words]
		}
		if !m.active.narrow(held, matched, int32(k)) {
			return
		}
	}
	m.active.settleAll(matched, int32(len(blocks)))
}

// eventRing is a FIFO of events on a power-of-two ring that doubles when
// full, so that in steady state queueing allocates nothing.
type eventRing struct {
	buf        []kvEvent
	head, tail uint64 // next to read, next to write
}

func (q *eventRing) empty() bool { return q.head == q.tail }

func (q *eventRing) front() *kvEvent { return &q.buf[q.head&uint64(len(q.buf)-1)] }

func (q *eventRing) pop() { q.head++ }

func (q *eventRing) push(ev kvEvent) {
	if q.tail-q.head == uint64(len(q.buf)) {
		grown := make([]kvEvent, 2*len(q.buf))
		for p := q.head; p < q.tail; p++ {
			grown[p&uint64(len(grown)-1)] = q.buf[p&uint64(len(q.buf)-1)]
		}
		q.buf = grown
	}
	q.buf[q.tail&uint64(len(q.buf)-1)] = ev
	q.tail++
}

// precisePrefix scores, like llm-d's precise-prefix-cache-scorer, the share
// of the request's input blocks, counted from the first, that each
// instance's real KV cache holds, as the KV-event mirror shows it.
type precisePrefix struct {
	mirror *kvMirror
	leadingRun
}

func newPrecisePrefix(mirror *kvMirror, blocks *requestBlocks, instances int) *precisePrefix {
	return &precisePrefix{mirror: mirror, leadingRun: newLeadingRun(blocks, instances)}
}

func (p *precisePrefix) Score(r *simcore.Request, _ []Snapshot, out []float64) {
	p.score(r, p.mirror, out)
}
