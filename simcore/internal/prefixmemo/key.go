// Package prefixmemo names what a memo of prefix lookups was computed
// from: a prefix slice and an epoch of the index it read. Prefixes are
// read-only and shared by all requests of their group, so the same slice
// (first element and length) is the same hashes; while the index's epoch
// stays the same, the memo's answer does too.
package prefixmemo

import "unsafe"

// Key identifies the first n blocks of a prefix slice at an index epoch.
type Key struct {
	data  *uint64
	n     int
	epoch uint64
}

// KeyOf returns the key of the first n blocks of prefix at epoch.
func KeyOf(prefix []uint64, n int, epoch uint64) Key {
	return Key{data: unsafe.SliceData(prefix), n: n, epoch: epoch}
}

// Matches reports whether a memo kept under k answers for other. A key of
// no slice answers for nothing, so a memo that was never kept never
// matches.
func (k Key) Matches(other Key) bool { return k.data != nil && k == other }
