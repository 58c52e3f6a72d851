package route

import "optimize/simcore/internal/u64map"

// keyLRU is a set of keys (never 0) with LRU eviction, the record behind
// llm-d's approximate prefix index (a set of block hashes per instance)
// and the session-affinity scorer (session ids, whose instance its user
// keeps in a slice indexed by entry). Entries live in one slice, linked
// most recent first, and are found through an open-addressing map that
// remembers its last lookup (Score and Observe ask for the same key in a
// row); once full, a new key takes the least recent key's entry, so
// nothing is allocated in the steady state.
type keyLRU struct {
	byKey      *u64map.Memo
	entries    []keyEntry
	head, tail int32 // most and least recent entries, noEntry when empty
	capacity   int
}

type keyEntry struct {
	key        uint64
	prev, next int32 // toward head and tail; noEntry at the ends
}

func newKeyLRU(capacity int) keyLRU {
	return keyLRU{byKey: u64map.NewMemo(64), head: noEntry, tail: noEntry, capacity: capacity}
}

// find returns k's entry.
func (l *keyLRU) find(k uint64) (int32, bool) { return l.byKey.Get(k) }

func (l *keyLRU) has(k uint64) bool {
	_, ok := l.byKey.Get(k)
	return ok
}

// touch makes k the most recent key, adding it (and evicting the least
// recent key when full), and returns its entry: an entry index is reused
// by the key that evicts its key.
func (l *keyLRU) touch(k uint64) int32 {
	e, found := l.byKey.Get(k)
	switch {
	case found:
		l.unlink(e)
	case len(l.entries) < l.capacity:
		e = int32(len(l.entries))
		l.entries = append(l.entries, keyEntry{})
		l.byKey.Set(k, e)
	default:
		e = l.tail
		l.unlink(e)
		l.byKey.Delete(l.entries[e].key)
		l.byKey.Set(k, e)
	}
	l.entries[e] = keyEntry{key: k, prev: noEntry, next: l.head}
	if l.head != noEntry {
		l.entries[l.head].prev = e
	}
	l.head = e
	if l.tail == noEntry {
		l.tail = e
	}
	return e
}

// unlink takes entry e out of the recency list.
func (l *keyLRU) unlink(e int32) {
	en := &l.entries[e]
	if en.prev != noEntry {
		l.entries[en.prev].next = en.next
	} else {
		l.head = en.next
	}
	if en.next != noEntry {
		l.entries[en.next].prev = en.prev
	} else {
		l.tail = en.prev
	}
}
