package kv

import (
	"math/rand"
	"testing"
)

// content returns n blocks whose first shared come from prefix family fam
// (equal across requests of the family) and the rest from stream uid.
func content(fam uint64, shared, n int, uid uint64) *Content {
	prefix := make([]uint64, shared)
	for i := range prefix {
		prefix[i] = fam<<32 | uint64(i+1)
	}
	return &Content{Prefix: prefix, UID: uid, Input: int32(n), Total: int32(n), Shared: int32(shared)}
}

// allShared is content whose every block may be shared (a session stream).
func allShared(uid uint64, n int) *Content {
	return &Content{UID: uid, Input: int32(n), Total: int32(n), Shared: int32(n)}
}

func TestPrefixHitsAndLRUEviction(t *testing.T) {
	c, err := New(10, 16)
	if err != nil {
		t.Fatal(err)
	}
	a := content(100, 4, 4, 1)
	var s Seq
	if !c.Allocate(&s, a, c.Lookup(&s, a), 64) {
		t.Fatal("allocation of 4 blocks in an empty 10-block cache failed")
	}
	if got := c.Used(); got != 4 {
		t.Fatalf("used = %d, want 4", got)
	}
	c.Release(&s)
	if got := c.Lookup(&Seq{}, a).Blocks; got != 4 {
		t.Fatalf("released blocks should stay cached: lookup found %d of 4", got)
	}
	// A request sharing the 2 leading blocks hits exactly those.
	b := content(100, 2, 4, 2)
	if got := c.Lookup(&Seq{}, b).Blocks; got != 2 {
		t.Fatalf("leading run = %d, want 2", got)
	}
	var s2 Seq
	if !c.Allocate(&s2, b, c.Lookup(&s2, b), 64-32) {
		t.Fatal("allocate with hits failed")
	}
	if hits, misses := c.Counters(); hits != 2 || misses != 6 {
		t.Fatalf("hits/misses = %d/%d, want 2/6", hits, misses)
	}
	var s3 Seq
	fill := content(0, 0, 6, 3)
	if !c.Allocate(&s3, fill, Hit{}, 6*16) {
		t.Fatal("fill failed")
	}
	if err := c.Check([]*Seq{&s2, &s3}); err != nil {
		t.Fatal(err)
	}
	if c.Free() != 0 {
		t.Fatalf("free = %d, want 0", c.Free())
	}
	if c.Allocate(&s3, fill, Hit{}, 1) {
		t.Fatal("allocation beyond capacity succeeded")
	}
}

func TestPartialBlockFillsBeforeNewBlock(t *testing.T) {
	c, _ := New(4, 16)
	h := allShared(9, 3)
	var s Seq
	c.Allocate(&s, h, Hit{}, 20) // 2 blocks, 12 spare
	if int(s.Blocks) != 2 || c.Contains(h, 1) {
		t.Fatalf("blocks=%d, second block must not be hashed while partial", s.Blocks)
	}
	c.Allocate(&s, h, Hit{}, 12) // fills block 1 exactly
	if int(s.Blocks) != 2 || !c.Contains(h, 1) {
		t.Fatalf("block 1 full: blocks=%d hashed=%v", s.Blocks, c.Contains(h, 1))
	}
	if !c.AppendToken(&s, h) || int(s.Blocks) != 3 {
		t.Fatalf("decode token should take a third block, blocks=%d", s.Blocks)
	}
}

// A preempted request finds its private blocks again through Prev, as long
// as they were not reused; other requests never see them.
func TestPrivateBlocksRehitAfterRelease(t *testing.T) {
	c, _ := New(8, 16)
	h := content(500, 2, 4, 7) // 2 shared, 2 private
	var s Seq
	if !c.Allocate(&s, h, Hit{}, 64) {
		t.Fatal("allocate")
	}
	c.Release(&s)
	if got := c.Lookup(&s, h).Blocks; got != 4 {
		t.Fatalf("own lookup after release found %d blocks, want 4", got)
	}
	if got := c.Lookup(&Seq{}, h).Blocks; got != 2 {
		t.Fatalf("a stranger found %d blocks, want only the 2 shared", got)
	}
	// Reusing the cache evicts the LRU head: the 4 never-used blocks, then
	// s's last block (released first), which ends its run at 3.
	var o Seq
	c.Allocate(&o, content(0, 0, 6, 9), Hit{}, 5*16)
	if got := c.Lookup(&s, h).Blocks; got != 3 {
		t.Fatalf("after eviction own lookup found %d, want 3", got)
	}
	if err := c.Check([]*Seq{&o}); err != nil {
		t.Fatal(err)
	}
}

// FuzzAllocator drives random allocate/append/release sequences and checks
// conservation after every operation.
func FuzzAllocator(f *testing.F) {
	f.Add(int64(1), uint8(20), uint8(4))
	f.Add(int64(7), uint8(3), uint8(9))
	// Even seeds turn the CPU tier on.
	f.Add(int64(2), uint8(12), uint8(5))
	f.Add(int64(8), uint8(30), uint8(8))
	f.Add(int64(14), uint8(6), uint8(3))
	f.Fuzz(func(t *testing.T, seed int64, total uint8, nseq uint8) {
		if total == 0 || nseq == 0 || nseq > 16 {
			return
		}
		rng := rand.New(rand.NewSource(seed))
		c, err := New(int64(total), 4)
		if err != nil {
			t.Fatal(err)
		}
		if seed%2 == 0 {
			c.EnableTier(TierConfig{Blocks: int64(1 + rng.Intn(8)), Threshold: rng.Float64(), Bandwidth: 1, BaseLatency: 3})
		}
		// The index as its change events describe it: what every lookup
		// must agree with, duplicates and their evictions included.
		indexed := map[uint64]bool{}
		c.Observe(func(h uint64, stored bool) { indexed[h] = stored })
		seqs := make([]*Seq, nseq)
		contents := make([]*Content, nseq)
		for i := range seqs {
			seqs[i] = &Seq{}
			uid := uint64(i + 1)
			if rng.Intn(3) == 0 {
				uid = uint64(rng.Intn(i+1) + 1) // a stream several requests hold
			}
			contents[i] = content(1000, int(uid*7%6), 12, uid)
			contents[i].Input = int32(rng.Intn(13))
			if uid%2 == 0 {
				contents[i].Shared = 12 // a session stream: everything shareable
			}
		}
		for op := 0; op < 300; op++ {
			i := rng.Intn(int(nseq))
			s := seqs[i]
			switch rng.Intn(4) {
			case 0, 1:
				var cached Hit
				reload := 0
				if int(s.Blocks) == 0 {
					cached = c.Lookup(s, contents[i])
					reload = c.CPUPrefix(contents[i], cached.Blocks)
				}
				before := c.Used()
				c.SetClock(int64(op))
				ok := c.AllocateReload(s, contents[i], cached, reload, int64(rng.Intn(20)))
				if !ok && c.Used() != before {
					t.Fatalf("failed allocation changed used blocks %d → %d", before, c.Used())
				}
			case 2:
				c.AppendToken(s, contents[i])
			case 3:
				c.Release(s)
			}
			if err := c.Check(seqs); err != nil {
				t.Fatalf("op %d: %v", op, err)
			}
			for _, ct := range contents {
				for k := range int(ct.Shared) {
					if c.Contains(ct, k) != indexed[ct.Hash(k)] {
						t.Fatalf("op %d: block %d of stream %d: cached %v, index events say %v", op, k, ct.UID, c.Contains(ct, k), indexed[ct.Hash(k)])
					}
				}
			}
		}
		for _, s := range seqs {
			c.Release(s)
		}
		if c.Used() != 0 || c.Free() != int64(total) {
			t.Fatalf("after releasing everything used=%d free=%d", c.Used(), c.Free())
		}
	})
}

// A long sequence cycled through the cache keeps its invariants and its
// prefix hits.
func TestLongSequencesCycle(t *testing.T) {
	c, _ := New(6000, 16)
	a, b := allShared(1, 5000), allShared(2, 5000)
	var s, u Seq
	if !c.Allocate(&s, a, Hit{}, 5000*16) || s.Blocks != 5000 {
		t.Fatalf("first 5000 blocks: holds %d", s.Blocks)
	}
	c.Release(&s)
	if !c.Allocate(&u, b, Hit{}, 5000*16) { // 1000 fresh, then the LRU ones
		t.Fatal("second allocation failed")
	}
	if err := c.Check([]*Seq{&u}); err != nil {
		t.Fatal(err)
	}
	// Releasing a put its last block first in line for eviction: 4000 of
	// its blocks went to b, its leading 1000 are still cached.
	var again Seq
	if got := c.Lookup(&again, a).Blocks; got != 1000 {
		t.Fatalf("Lookup found %d of a's blocks, want its leading 1000", got)
	}
	c.Release(&u)
	if got := c.Lookup(&again, b).Blocks; got != 5000 {
		t.Fatalf("b is cached whole (5000 blocks), Lookup found %d", got)
	}
}

// A decode block's registration may wait for the request's next visit only
// where nobody could see the difference: for an exclusive stream, past
// its prefix, with no observer. CatchUp then registers it, so a later
// round of the stream finds the block as if each token had been appended.
func TestDecodeRoomDefersOnlyUnseenRegistrations(t *testing.T) {
	cases := []struct {
		name      string
		exclusive bool
		prefix    int // prefix blocks of the content
		observed  bool
		deferred  bool
	}{
		{"exclusive stream", true, 1, false, true},
		{"shared stream", false, 1, false, false},
		{"observed", true, 1, true, false},
		{"block in the prefix", true, 4, false, false},
	}
	for _, tc := range cases {
		c, _ := New(64, 16)
		if tc.observed {
			c.Observe(func(uint64, bool) {})
		}
		// 2 input blocks then decode: the request's third block is its first
		// decode block, 16 tokens of room, shareable (later rounds read it).
		in := content(3, tc.prefix, 4, 11)
		in.Input, in.Shared, in.Exclusive = 2, 4, tc.exclusive
		var s Seq
		if !c.Allocate(&s, in, Hit{}, 2*16) || !c.AppendToken(&s, in) {
			t.Fatalf("%s: allocate", tc.name)
		}
		room := c.DecodeRoom(&s)
		want := c.InBlockRoom(&s)
		if tc.deferred {
			want++
		}
		if room != want {
			t.Fatalf("%s: DecodeRoom %d, want %d", tc.name, room, want)
		}
		if !tc.deferred {
			continue
		}
		c.CatchUp(&s, int32(room)) // the tokens up to and including the block's last
		if s.Tokens != 3*16 {
			t.Fatalf("%s: %d tokens after catching up, want 48", tc.name, s.Tokens)
		}
		c.Release(&s)
		next := content(3, tc.prefix, 4, 11)
		next.Input, next.Shared = 4, 4
		if got := c.Lookup(&Seq{}, next).Blocks; got != 3 {
			t.Fatalf("%s: the next round found %d blocks, want 3 (the caught-up one registered)", tc.name, got)
		}
	}
}

// A request sharing two idle cached blocks needs one more block with two
// free: committing the cached blocks would leave none, so it fails. BLIS's
// earlier rollback re-appended those blocks to the LRU tail in block
// order, so block 0 became the LRU head and the next block taken evicts
// it: no prefix block is found again. With CheckThenAct the free list keeps
// its release order (block 1 first), and block 0 is still found.
func TestFailedAllocationLRUOrderByMode(t *testing.T) {
	for _, tc := range []struct {
		checkThenAct bool
		hits         int // leading blocks of the prefix still cached after one eviction
	}{{false, 0}, {true, 1}} {
		c, _ := New(4, 16)
		if tc.checkThenAct {
			c.CheckThenAct()
		}
		x := content(300, 2, 2, 1)
		var sx Seq
		c.Allocate(&sx, x, Hit{}, 32)
		c.Release(&sx) // free list: block 1, then block 0
		var sw Seq
		if !c.Allocate(&sw, content(0, 0, 2, 2), Hit{}, 32) { // the 2 never-used blocks
			t.Fatal("filler allocation failed")
		}
		y := content(300, 2, 3, 3)
		var sy Seq
		hit := c.Lookup(&sy, y)
		if hit.Blocks != 2 || c.Allocate(&sy, y, hit, 16) {
			t.Fatalf("checkThenAct=%v: lookup %d blocks, allocation should fail with 2 free", tc.checkThenAct, hit.Blocks)
		}
		var sz Seq
		if !c.Allocate(&sz, content(0, 0, 1, 4), Hit{}, 16) { // evicts the LRU head
			t.Fatal("one-block allocation failed")
		}
		if got := c.Lookup(&Seq{}, x).Blocks; got != tc.hits {
			t.Errorf("checkThenAct=%v: %d prefix blocks still cached, want %d", tc.checkThenAct, got, tc.hits)
		}
		if err := c.Check([]*Seq{&sw, &sz}); err != nil {
			t.Fatal(err)
		}
	}
}
