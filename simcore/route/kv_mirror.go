package route

import (
	stdbits "math/bits"

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
	// copied, when set (and delay > 0), is when the router last copied
	// the instances' caches (BLIS f90a1e3a's periodic copies, which the
	// engine times): the mirror then shows the events before it.
	copied *simcore.Tick
	words  int // uint64 words per holder bitset

	pending eventRing
	gpu     holderTable
	// cpu holds the blocks the instances' CPU tiers report (vLLM's
	// offloading connector publishes them with medium CPU); llm-d's
	// precise producer counts a block held only there at weight 0.8.
	cpu holderTable

	active matchingSet // scratch of match
	fifths []int32     // scratch of matchTiered, per instance
}

// holderTable maps a block hash to the instances holding it.
type holderTable struct {
	entries *u64map.Map // hash → entry
	holders []uint64    // words per entry: the instances holding its hash
	free    []int32     // entries nobody holds
}

// kvEvent is one reported change of an instance's prefix cache.
type kvEvent struct {
	at       simcore.Tick
	hash     uint64
	instance int32
	stored   bool
	cpu      bool // of the CPU tier
}

func newKVMirror(instances int, delay simcore.Tick) *kvMirror {
	words := (instances + 63) / 64
	return &kvMirror{
		delay:   delay,
		words:   words,
		pending: eventRing{buf: make([]kvEvent, 64)},
		gpu:     holderTable{entries: u64map.New(1024)},
		cpu:     holderTable{entries: u64map.New(16)},
		active:  newMatchingSet(instances),
	}
}

// KVEvent queues the change until the router may see it. Hash 0 marks "no
// hash" in the KV cache and is never a block's hash; it is ignored.
func (m *kvMirror) KVEvent(instance int, hash uint64, stored bool, at simcore.Tick) {
	if hash == 0 {
		return
	}
	m.queue(kvEvent{at: at, hash: hash, instance: int32(instance), stored: stored})
}

// KVCPUEvent queues a change of the instance's CPU tier, as KVEvent does.
func (m *kvMirror) KVCPUEvent(instance int, hash uint64, stored bool, at simcore.Tick) {
	if hash == 0 {
		return
	}
	m.queue(kvEvent{at: at, hash: hash, instance: int32(instance), stored: stored, cpu: true})
}

// queue holds ev until the router may see it. With no delay the router
// sees it at once (now − at = 0 is old enough), so it is applied without
// passing through the queue when nothing waits ahead of it.
func (m *kvMirror) queue(ev kvEvent) {
	if m.delay == 0 && m.pending.empty() {
		m.apply(&ev)
		return
	}
	m.pending.push(ev)
}

// catchUp applies, in order, every queued event at least delay old at now.
// Events come in non-decreasing time, so the first too-recent one ends it.
func (m *kvMirror) catchUp(now simcore.Tick) {
	for !m.pending.empty() {
		ev := m.pending.front()
		if m.copied != nil {
			if ev.at >= *m.copied {
				return
			}
		} else if now-ev.at < m.delay {
			return
		}
		m.apply(ev)
		m.pending.pop()
	}
}

// apply sets or clears the instance's bit for the hash in its tier's
// table. Repeated stores or removals are harmless: the mirror holds a set,
// as the cache's index does.
func (m *kvMirror) apply(ev *kvEvent) {
	t := &m.gpu
	if ev.cpu {
		t = &m.cpu
	}
	word, bit := int(ev.instance)>>6, uint64(1)<<(uint(ev.instance)&63)
	e, ok := t.entries.Get(ev.hash)
	if ev.stored {
		if !ok {
			e = t.newEntry(m.words)
			t.entries.Set(ev.hash, e)
		}
		t.holders[int(e)*m.words+word] |= bit
		return
	}
	if !ok {
		return
	}
	bitset := t.holders[int(e)*m.words : int(e+1)*m.words]
	bitset[word] &^= bit
	for _, b := range bitset {
		if b != 0 {
			return
		}
	}
	t.entries.Delete(ev.hash)
	t.free = append(t.free, e)
}

// newEntry returns an entry held by nobody.
func (t *holderTable) newEntry(words int) int32 {
	if n := len(t.free); n > 0 {
		e := t.free[n-1]
		t.free = t.free[:n-1]
		return e // its bitset is all zero: that is why it was freed
	}
	e := int32(len(t.holders) / words)
	for range words {
		t.holders = append(t.holders, 0)
	}
	return e
}

// held is the holder bitset of hash h, nil when nobody holds it.
func (t *holderTable) held(h uint64, words int) []uint64 {
	if e, ok := t.entries.Get(h); ok {
		return t.holders[int(e)*words : int(e+1)*words]
	}
	return nil
}

func (m *kvMirror) matchRequest(r *simcore.Request, blocks *requestBlocks, matched []int32) {
	m.match(blocks.of(r), matched)
}

// match writes into matched[i] the number of leading blocks of blocks that
// instance i holds, probing each block once and stopping when no instance
// matches any more. With CPU-tier blocks reported, it is llm-d's
// longest-prefix score instead (llm-d-kv-cache's LongestPrefixScorer, the
// precise producer's matchLen): the run continues through blocks held in
// either tier, each counting its best tier's weight — GPU 1, CPU 0.8 —
// and the sum is truncated to a whole number of blocks.
func (m *kvMirror) match(blocks []uint64, matched []int32) {
	if m.cpu.entries.Len() > 0 {
		m.matchTiered(blocks, matched)
		return
	}
	m.active.fill()
	for k, h := range blocks {
		if !m.active.narrow(m.gpu.held(h, m.words), matched, int32(k)) {
			return
		}
	}
	m.active.settleAll(matched, int32(len(blocks)))
}

// Tier weights in fifths, so the sums are exact: GPU 1 = 5/5, CPU 0.8 = 4/5.
const (
	gpuFifths = 5
	cpuFifths = 4
)

func (m *kvMirror) matchTiered(blocks []uint64, matched []int32) {
	if cap(m.fifths) < len(matched) {
		m.fifths = make([]int32, len(matched))
	}
	fifths := m.fifths[:len(matched)]
	clear(fifths)
	m.active.fill()
	for _, h := range blocks {
		gpu, cpu := m.gpu.held(h, m.words), m.cpu.held(h, m.words)
		remaining := uint64(0)
		for w, bits := range m.active.words {
			var g, c uint64
			if gpu != nil {
				g = gpu[w]
			}
			if cpu != nil {
				c = cpu[w]
			}
			for left := bits &^ (g | c); left != 0; left &= left - 1 {
				i := w<<6 | stdbits.TrailingZeros64(left)
				matched[i] = fifths[i] / gpuFifths
			}
			for on := bits & g; on != 0; on &= on - 1 {
				fifths[w<<6|stdbits.TrailingZeros64(on)] += gpuFifths
			}
			for on := bits & c &^ g; on != 0; on &= on - 1 {
				fifths[w<<6|stdbits.TrailingZeros64(on)] += cpuFifths
			}
			m.active.words[w] = bits & (g | c)
			remaining |= m.active.words[w]
		}
		if remaining == 0 {
			return
		}
	}
	for w, bits := range m.active.words {
		for ; bits != 0; bits &= bits - 1 {
			i := w<<6 | stdbits.TrailingZeros64(bits)
			matched[i] = fifths[i] / gpuFifths
		}
	}
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
