package u64map

// Memo is a Map that remembers its last answer, found or not: a caller
// that looks the same key up twice in a row (a request's stream, by the
// lookup and then the registration that follows) probes the table once.
// Set and Delete keep the memo right.
type Memo struct {
	m     *Map
	key   uint64 // 0 = nothing remembered (0 is never a key)
	val   int32
	found bool
}

// NewMemo returns an empty memoised map sized for about hint keys.
func NewMemo(hint int) *Memo { return &Memo{m: New(hint)} }

// Get returns the value of k.
func (m *Memo) Get(k uint64) (int32, bool) {
	if k != m.key {
		m.key = k
		m.val, m.found = m.m.Get(k)
	}
	return m.val, m.found
}

// Set stores v under k (k must not be 0).
func (m *Memo) Set(k uint64, v int32) {
	m.m.Set(k, v)
	m.key, m.val, m.found = k, v, true
}

// Delete removes k if present.
func (m *Memo) Delete(k uint64) {
	m.m.Delete(k)
	if k == m.key {
		m.key = 0
	}
}

// Len returns the number of keys.
func (m *Memo) Len() int { return m.m.Len() }
