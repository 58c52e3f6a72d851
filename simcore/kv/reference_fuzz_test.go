package kv

import (
	"math/rand"
	"slices"
	"testing"
)

// FuzzMatchesReference drives the copy cache and the block-table reference
// (reference_test.go) through the same random admissions, decode tokens,
// preemptions and completions, with and without a CPU tier, and requires
// the same answer from every call: lookups, allocation outcomes, counts,
// tier counters and the sequence of prefix-index events.
//
// Contents keep the contract the workload sources keep: a stream several
// requests hold is shareable throughout (a session's stream), and a stream
// with private blocks belongs to one request.
func FuzzMatchesReference(f *testing.F) {
	for seed := int64(1); seed <= 12; seed++ {
		f.Add(seed, uint8(4+seed*5), uint8(2+seed%7))
	}
	f.Fuzz(func(t *testing.T, seed int64, total uint8, nseq uint8) {
		if total == 0 || nseq == 0 || nseq > 16 {
			return
		}
		rng := rand.New(rand.NewSource(seed))
		c, _ := New(int64(total), 4)
		ref := newRef(int64(total), 4)
		if seed%2 == 0 {
			cfg := TierConfig{Blocks: int64(1 + rng.Intn(8)), Threshold: rng.Float64(), Bandwidth: 1, BaseLatency: 3}
			c.EnableTier(cfg)
			ref.EnableTier(cfg)
		}
		var events, refEvents []uint64
		c.Observe(func(h uint64, stored bool) { events = append(events, h<<1|b2u(stored)) })
		ref.Observe(func(h uint64, stored bool) { refEvents = append(refEvents, h<<1|b2u(stored)) })
		seqs := make([]*Seq, nseq)
		refs := make([]*refSeq, nseq)
		contents := make([]*Content, nseq)
		var prefixes [6][]uint64 // one slice per prefix length, shared as a workload's groups share theirs
		for i := range seqs {
			seqs[i], refs[i] = &Seq{}, &refSeq{}
			uid := uint64(2*i + 3) // odd: the request's own stream
			if rng.Intn(3) == 0 {
				uid = uint64(2 * (1 + rng.Intn(3))) // even: a shared session stream
			}
			contents[i] = content(1000, int(uid*7%6), 12, uid)
			if sh := len(contents[i].Prefix); prefixes[sh] == nil {
				prefixes[sh] = contents[i].Prefix
			} else {
				contents[i].Prefix = prefixes[sh]
			}
			contents[i].Input = int32(rng.Intn(13))
			if uid%2 == 0 {
				contents[i].Shared = 12
			}
		}
		for op := 0; op < 400; op++ {
			i := rng.Intn(int(nseq))
			s, r, ct := seqs[i], refs[i], contents[i]
			c.SetClock(int64(op))
			ref.SetClock(int64(op))
			switch rng.Intn(6) {
			case 0, 1:
				var hit Hit
				var refHit []int32
				reload := 0
				if s.Blocks == 0 {
					hit, refHit = c.Lookup(s, ct), ref.Lookup(r, ct)
					if hit.Blocks != len(refHit) {
						t.Fatalf("op %d: lookup found %d blocks, reference %d", op, hit.Blocks, len(refHit))
					}
					reload = c.CPUPrefix(ct, hit.Blocks)
					if got := ref.CPUPrefix(ct, len(refHit)); got != reload {
						t.Fatalf("op %d: CPU prefix %d, reference %d", op, reload, got)
					}
				}
				n := int64(rng.Intn(20))
				if got, want := c.AllocateReload(s, ct, hit, reload, n), ref.AllocateReload(r, ct, refHit, reload, n); got != want {
					t.Fatalf("op %d: allocate %d tokens: %v, reference %v", op, n, got, want)
				}
			case 2, 3:
				if got, want := c.AppendToken(s, ct), ref.AppendToken(r, ct); got != want {
					t.Fatalf("op %d: append: %v, reference %v", op, got, want)
				}
			case 4:
				c.Release(s)
				ref.Release(r)
			case 5:
				c.Retire(s)
				ref.Retire(r)
			}
			if s.Tokens != r.Tokens || int(s.Blocks) != len(r.IDs) {
				t.Fatalf("op %d: request holds %d tokens in %d blocks, reference %d in %d", op, s.Tokens, s.Blocks, r.Tokens, len(r.IDs))
			}
			if c.Used() != ref.Used() || c.TakeTransfer() != ref.TakeTransfer() || c.TierStats() != ref.TierStats() {
				t.Fatalf("op %d: used %d, reference %d (or the tier differs)", op, c.Used(), ref.Used())
			}
			if h, m := c.Counters(); h != ref.hits || m != ref.misses {
				t.Fatalf("op %d: hits/misses %d/%d, reference %d/%d", op, h, m, ref.hits, ref.misses)
			}
			if !slices.Equal(events, refEvents) {
				t.Fatalf("op %d: index events differ from the reference's", op)
			}
			if err := c.Check(seqs); err != nil {
				t.Fatalf("op %d: %v", op, err)
			}
			if op%53 != 52 {
				// Contains reads the stream index, which writes out every
				// pending run; checked after every operation, no run would
				// ever stay pending across operations.
				continue
			}
			for j, other := range contents {
				for k := range int(other.Shared) {
					if c.Contains(other, k) != ref.Contains(other, k) {
						t.Fatalf("op %d: block %d of request %d: cached %v, reference %v", op, k, j, c.Contains(other, k), ref.Contains(other, k))
					}
				}
			}
		}
	})
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
