package u64map

import (
	"math/rand"
	"testing"
)

// A differential test against Go's map under heavy insert/delete churn,
// with clustered keys so that probe runs wrap and interleave.
func TestMatchesBuiltinMap(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	m := New(4)
	ref := map[uint64]int32{}
	for op := 0; op < 200000; op++ {
		k := uint64(rng.Intn(3000) + 1)
		if rng.Intn(64) == 0 {
			k = rng.Uint64() | 1
		}
		switch rng.Intn(3) {
		case 0, 1:
			v := int32(rng.Intn(1 << 20))
			m.Set(k, v)
			ref[k] = v
		case 2:
			m.Delete(k)
			delete(ref, k)
		}
		if op%997 == 0 {
			if m.Len() != len(ref) {
				t.Fatalf("op %d: len %d, want %d", op, m.Len(), len(ref))
			}
			for rk, rv := range ref {
				if v, ok := m.Get(rk); !ok || v != rv {
					t.Fatalf("op %d: Get(%d) = %d,%v want %d", op, rk, v, ok, rv)
				}
			}
			n := 0
			m.Range(func(k uint64, v int32) {
				n++
				if ref[k] != v {
					t.Fatalf("Range gave %d→%d, want %d", k, v, ref[k])
				}
			})
			if n != len(ref) {
				t.Fatalf("Range visited %d keys, want %d", n, len(ref))
			}
		}
	}
}

func BenchmarkChurn(b *testing.B) {
	m := New(1 << 16)
	keys := make([]uint64, 1<<16)
	rng := rand.New(rand.NewSource(2))
	for i := range keys {
		keys[i] = rng.Uint64() | 1
		m.Set(keys[i], int32(i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := keys[i&(len(keys)-1)]
		m.Delete(k)
		m.Set(k, int32(i))
		m.Get(keys[(i*7)&(len(keys)-1)])
	}
}

// A memoised map answers as the map does through any mix of repeated
// gets, sets and deletes.
func TestMemoAnswersAsTheMap(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	memo, plain := NewMemo(4), New(4)
	for op := 0; op < 20000; op++ {
		k := uint64(1 + rng.Intn(20))
		switch rng.Intn(4) {
		case 0:
			v := int32(rng.Intn(100))
			memo.Set(k, v)
			plain.Set(k, v)
		case 1:
			memo.Delete(k)
			plain.Delete(k)
		default:
			gv, gok := memo.Get(k)
			wv, wok := plain.Get(k)
			if gok != wok || (wok && gv != wv) {
				t.Fatalf("op %d: Get(%d) = %d %v, want %d %v", op, k, gv, gok, wv, wok)
			}
		}
		if memo.Len() != plain.Len() {
			t.Fatalf("op %d: Len %d, want %d", op, memo.Len(), plain.Len())
		}
	}
}
