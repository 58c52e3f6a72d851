// Package u64map is an open-addressing hash map from non-zero uint64 keys
// to int32 values: linear probing, Fibonacci hashing, and backward-shift
// deletion, so constant insert/delete churn (a prefix cache evicting and
// registering blocks every step) leaves no tombstones and probes stay short.
// Go's built-in map degrades under that churn and costs far more per call.
package u64map

import "math/bits"

// Map maps keys to values. Key 0 is reserved (it marks empty slots).
type Map struct {
	slots []slot
	shift uint // 64 - log2(len(slots))
	n     int
}

// slot keeps a key beside its value: one cache miss per probe, not two.
type slot struct {
	key uint64
	val int32
}

// New returns a map sized for about hint keys without growing.
func New(hint int) *Map {
	m := &Map{}
	size := 16
	for size < 2*hint {
		size *= 2
	}
	m.alloc(size)
	return m
}

func (m *Map) alloc(size int) {
	m.slots = make([]slot, size)
	m.shift = uint(64 - bits.TrailingZeros(uint(size)))
}

// Len returns the number of keys.
func (m *Map) Len() int { return m.n }

func (m *Map) home(k uint64) int { return int((k * 0x9e3779b97f4a7c15) >> m.shift) }

// Get returns the value of k.
func (m *Map) Get(k uint64) (int32, bool) {
	mask := len(m.slots) - 1
	for i := m.home(k); ; i = (i + 1) & mask {
		switch m.slots[i].key {
		case k:
			return m.slots[i].val, true
		case 0:
			return 0, false
		}
	}
}

// Set stores v under k (k must not be 0).
func (m *Map) Set(k uint64, v int32) {
	mask := len(m.slots) - 1
	for i := m.home(k); ; i = (i + 1) & mask {
		switch m.slots[i].key {
		case k:
			m.slots[i].val = v
			return
		case 0:
			m.slots[i] = slot{k, v}
			if m.n++; 2*m.n > len(m.slots) {
				m.grow()
			}
			return
		}
	}
}

// Delete removes k if present, shifting later keys of its probe run back.
func (m *Map) Delete(k uint64) {
	mask := len(m.slots) - 1
	i := m.home(k)
	for ; m.slots[i].key != k; i = (i + 1) & mask {
		if m.slots[i].key == 0 {
			return
		}
	}
	m.n--
	for j := (i + 1) & mask; m.slots[j].key != 0; j = (j + 1) & mask {
		// Move j back into the hole at i unless its home lies cyclically
		// in (i, j], where it would become unreachable.
		h := m.home(m.slots[j].key)
		if (j-h)&mask >= (j-i)&mask {
			m.slots[i] = m.slots[j]
			i = j
		}
	}
	m.slots[i] = slot{}
}

// Range calls f for every key and value in table order (for checks, not
// for anything whose result depends on order).
func (m *Map) Range(f func(k uint64, v int32)) {
	for _, sl := range m.slots {
		if sl.key != 0 {
			f(sl.key, sl.val)
		}
	}
}

func (m *Map) grow() {
	old := m.slots
	m.alloc(2 * len(old))
	m.n = 0
	for _, sl := range old {
		if sl.key != 0 {
			m.Set(sl.key, sl.val)
		}
	}
}
