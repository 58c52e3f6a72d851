package route

import (
	"container/list"
	"fmt"
	"math/bits"
	"math/rand"
	"slices"
	"testing"

	"optimize/simcore/kv"
)

func TestPrefixIndex_LRUEvictsLeastRecentlyRecorded(t *testing.T) {
	tests := []struct {
		name    string
		capa    int
		records [][]uint64 // recorded in turn for instance 0
		want    []uint64   // LRU order, most recent first
	}{
		{"touches in request order", 10, [][]uint64{{1, 2, 3}}, []uint64{3, 2, 1}},
		{"full LRU evicts the oldest", 3, [][]uint64{{1, 2, 3}, {4}}, []uint64{4, 3, 2}},
		{"re-recording refreshes recency", 3, [][]uint64{{1, 2, 3}, {1}, {4}}, []uint64{4, 1, 3}},
		{"a request longer than capacity keeps its tail", 2, [][]uint64{{1, 2, 3, 4, 5}}, []uint64{5, 4}},
		{"shared prefix is the oldest of a request", 4, [][]uint64{{1, 2, 3}, {1, 2, 7}, {9, 10}}, []uint64{10, 9, 7, 2}},
		{"repeated hash within a request", 3, [][]uint64{{1, 2, 1}}, []uint64{1, 2}},
		{"capacity one", 1, [][]uint64{{1, 2}, {3}}, []uint64{3}},
		{"empty request records nothing", 3, [][]uint64{{}, nil}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := newPrefixIndex(2, tc.capa)
			for _, blocks := range tc.records {
				x.record(hashSeq(blocks), 0, 0, false)
			}
			if got := x.lruOrder(0, nil); !slices.Equal(got, tc.want) {
				t.Fatalf("LRU order %v, want %v", got, tc.want)
			}
			if x.blockCount(0) != len(tc.want) || x.blockCount(1) != 0 {
				t.Fatalf("counts %d, %d; want %d, 0", x.blockCount(0), x.blockCount(1), len(tc.want))
			}
		})
	}
}

func TestPrefixIndex_LookupsDoNotRefreshRecency(t *testing.T) {
	x := newPrefixIndex(1, 2)
	x.record(hashSeq([]uint64{1, 2}), 0, 0, false)
	matched := make([]int32, 1)
	x.match(hashSeq([]uint64{1}), matched) // would make 1 most recent if lookups touched
	x.record(hashSeq([]uint64{3}), 0, 0, false)
	if got := x.lruOrder(0, nil); !slices.Equal(got, []uint64{3, 2}) {
		t.Fatalf("LRU order %v, want [3 2]", got)
	}
}

func TestPrefixIndex_InstancesAreIndependent(t *testing.T) {
	x := newPrefixIndex(3, 2)
	x.record(hashSeq([]uint64{1, 2}), 0, 0, false)
	x.record(hashSeq([]uint64{1, 2}), 0, 1, false)
	x.record(hashSeq([]uint64{3}), 0, 0, false) // evicts 1 from instance 0 only
	matched := make([]int32, 3)
	x.match(hashSeq([]uint64{1, 2}), matched)
	if !slices.Equal(matched, []int32{0, 2, 0}) {
		t.Fatalf("matched %v, want [0 2 0]", matched)
	}
	x.record(hashSeq([]uint64{4}), 0, 1, false) // 1 is now held by nobody: it leaves the table
	if e, _ := x.find(1); e != noEntry || len(x.free) != 1 {
		t.Fatalf("hash 1 has entry %d, free list %v; want none, one", e, x.free)
	}
	x.record(hashSeq([]uint64{5}), 0, 2, false) // and its entry is reused
	if len(x.free) != 0 || len(x.records)/x.stride != 4 {
		t.Fatalf("free %d, entries %d; want 0, 4", len(x.free), len(x.records)/x.stride)
	}
	checkIndexInvariants(t, x)
}

func (x *prefixIndex) holds(e int32, inst int) bool {
	return x.records[int(e)*x.stride+bitsWord+inst>>6]&(1<<(uint(inst)&63)) != 0
}

// position returns the low 32 bits of inst's latest ring position for e,
// read through the same 32-bit view the index writes it with.
func (x *prefixIndex) position(e int32, inst int) uint32 {
	return x.positions()[2*(int(e)*x.stride+x.stampBase)+inst]
}

// blockCount returns the number of hashes instance inst holds.
func (x *prefixIndex) blockCount(inst int) int { return x.rings[inst].count }

// hashSeq is a request of blocks with these hashes (all prefix blocks).
func hashSeq(blocks []uint64) blockSeq { return blockSeq{prefix: blocks, end: len(blocks)} }

// lruOrder appends inst's hashes from most to least recently touched; a
// stream block's hash is kv's stream hash, as Content.Hash gives it.
func (x *prefixIndex) lruOrder(inst int, out []uint64) []uint64 {
	r := &x.rings[inst]
	for p := r.head; p > r.tail; p-- {
		switch s := r.entries[(p-1)&uint64(len(r.entries)-1)]; {
		case s&streamSlot != 0:
			h, k := splitStreamSlot(s)
			c := kv.Content{UID: x.streams.streams[x.streams.holds[h].stream].uid}
			out = append(out, c.Hash(k))
		case s < deadSlot:
			out = append(out, x.key(int32(s)))
		}
	}
	return out
}

// referenceIndex is the obvious implementation of BLIS's PrefixCacheIndex:
// per instance, a map plus a container/list LRU.
type referenceIndex struct {
	capacity int
	lru      []*list.List
	at       []map[uint64]*list.Element
}

func newReferenceIndex(instances, capacity int) *referenceIndex {
	r := &referenceIndex{capacity: capacity}
	for range instances {
		r.lru = append(r.lru, list.New())
		r.at = append(r.at, map[uint64]*list.Element{})
	}
	return r
}

func (r *referenceIndex) record(blocks []uint64, inst int) {
	for _, h := range blocks {
		if el, ok := r.at[inst][h]; ok {
			r.lru[inst].MoveToFront(el)
			continue
		}
		if len(r.at[inst]) >= r.capacity {
			oldest := r.lru[inst].Back()
			delete(r.at[inst], oldest.Value.(uint64))
			r.lru[inst].Remove(oldest)
		}
		r.at[inst][h] = r.lru[inst].PushFront(h)
	}
}

func (r *referenceIndex) match(blocks []uint64, inst int) int32 {
	n := int32(0)
	for _, h := range blocks {
		if _, ok := r.at[inst][h]; !ok {
			break
		}
		n++
	}
	return n
}

func (r *referenceIndex) order(inst int) []uint64 {
	var out []uint64
	for el := r.lru[inst].Front(); el != nil; el = el.Next() {
		out = append(out, el.Value.(uint64))
	}
	return out
}

// randomSeq draws a request. Half are hashes: a prefix of one of a few
// "prompts" (so that leading runs of every length occur) followed by a few
// random blocks from a small alphabet (so that hits after misses and
// re-records occur). The others are session rounds: a whole prompt, then
// the leading blocks of one of a few streams, of random length (so that
// rounds shrink as well as grow, and streams end up held in pieces).
// blocks are the request's hashes.
func randomSeq(rng *rand.Rand, prompts [][]uint64) (seq blockSeq, blocks []uint64) {
	p := prompts[rng.Intn(len(prompts))]
	if rng.Intn(2) == 0 {
		blocks = slices.Clone(p[:rng.Intn(len(p)+1)])
		for range rng.Intn(5) {
			blocks = append(blocks, uint64(rng.Intn(60)))
		}
		return hashSeq(blocks), blocks
	}
	uid := uint64(1 + rng.Intn(6))
	p = prompts[uid%uint64(len(prompts))] // a stream always follows the same prompt
	c := kv.Content{Prefix: p, UID: uid}
	end := len(p) + rng.Intn(20)
	return blockSeq{prefix: p, uid: uid, end: end}, c.AppendHashes(nil, end)
}

func TestPrefixIndex_MatchesReferenceImplementation(t *testing.T) {
	for _, shape := range []struct{ instances, capacity int }{
		{1, 1}, {1, 7}, {3, 4}, {8, 16}, {8, 200}, {64, 5}, {70, 9}, {130, 3},
	} {
		t.Run(fmt.Sprintf("n%d_cap%d", shape.instances, shape.capacity), func(t *testing.T) {
			rng := rand.New(rand.NewSource(int64(shape.instances*1000 + shape.capacity)))
			prompts := make([][]uint64, 4)
			for i := range prompts {
				for k := range 12 {
					prompts[i] = append(prompts[i], uint64(1000*(i+1)+k))
				}
			}
			prompts[3][0] = 0 // hash 0 is a valid key
			fast := newPrefixIndex(shape.instances, shape.capacity)
			ref := newReferenceIndex(shape.instances, shape.capacity)
			matched := make([]int32, shape.instances)
			unique := uint64(1 << 40)
			for op := range 4000 {
				// Scoring alone, recording alone, or both as Route does.
				seq, blocks := randomSeq(rng, prompts)
				// Some requests end with private hashes, unique to them.
				shared := len(blocks)
				if rng.Intn(3) == 0 {
					for range rng.Intn(5) {
						unique++
						blocks = append(blocks, unique)
					}
				}
				kind := rng.Intn(3)
				if kind != 1 {
					fast.match(seq, matched)
					for i := range matched {
						if want := ref.match(blocks, i); matched[i] != want {
							t.Fatalf("op %d: instance %d matched %d of %v, want %d", op, i, matched[i], blocks, want)
						}
					}
				}
				if kind != 0 {
					inst := rng.Intn(shape.instances)
					// After a match, its hints cover the shareable blocks.
					fast.record(seq, len(blocks)-shared, inst, kind == 2)
					ref.record(blocks, inst)
					want := slices.DeleteFunc(ref.order(inst), func(h uint64) bool { return h > 1<<40 && h < 1<<41 }) // private
					if got := fast.lruOrder(inst, nil); !slices.Equal(got, want) {
						t.Fatalf("op %d: instance %d LRU %v, want %v", op, inst, got, want)
					}
				}
				if op%500 == 0 {
					checkIndexInvariants(t, fast)
				}
			}
			checkIndexInvariants(t, fast)
		})
	}
}

// checkIndexInvariants verifies the bookkeeping the reference cannot see:
// live ring slots, stamps, holder bits, holder counts and ring counts
// agree; an entry is in the table under its hash exactly when some
// instance holds it, and on the free list otherwise.
func checkIndexInvariants(t *testing.T, x *prefixIndex) {
	t.Helper()
	entries := len(x.records) / x.stride
	holders := make([]uint64, entries)
	holdBlocks := make([]int32, len(x.streams.holds))
	for inst := range x.instances {
		r := &x.rings[inst]
		mask := uint64(len(r.entries) - 1)
		if r.tail < r.head && r.entries[r.tail&mask] == deadSlot {
			t.Fatalf("instance %d: tail on a dead slot", inst)
		}
		live := 0
		for p := r.tail; p < r.head; p++ {
			s := r.entries[p&mask]
			if s == deadSlot {
				continue
			}
			live++
			if s == privateSlot {
				continue
			}
			if s&streamSlot != 0 {
				h, k := splitStreamSlot(s)
				hold := &x.streams.holds[h]
				if hold.inst != int32(inst) || hold.pos[k] != p+1 {
					t.Fatalf("instance %d: slot %d holds block %d of hold %d (instance %d) at position %d", inst, p, k, h, hold.inst, hold.pos[k])
				}
				holdBlocks[h]++
				continue
			}
			e := int32(s)
			holders[e]++
			if x.position(e, inst) != uint32(p) || !x.holds(e, inst) {
				t.Fatalf("instance %d: slot %d holds entry %d at position %d, bit %v", inst, p, e, x.position(e, inst), x.holds(e, inst))
			}
		}
		if live != r.count || live > x.capacity {
			t.Fatalf("instance %d: %d live slots, count %d, capacity %d", inst, live, r.count, x.capacity)
		}
	}
	free := make([]bool, entries)
	for _, e := range x.free {
		free[e] = true
	}
	inUse := 0
	for e := range int32(entries) {
		bitCount := 0
		for _, w := range x.records[int(e)*x.stride+bitsWord : int(e)*x.stride+bitsWord+x.words] {
			bitCount += bits.OnesCount64(w)
		}
		if uint64(bitCount) != holders[e] || x.holders(e) != holders[e] {
			t.Fatalf("entry %d: %d live slots, %d bits, holder count %d", e, holders[e], bitCount, x.holders(e))
		}
		found, _ := x.find(x.key(e))
		if holders[e] == 0 {
			if !free[e] || found == e {
				t.Fatalf("unheld entry %d: free %v, found %v", e, free[e], found == e)
			}
			continue
		}
		inUse++
		if free[e] || found != e {
			t.Fatalf("held entry %d: free %v, find gives %d", e, free[e], found)
		}
	}
	if inUse+len(x.free) != entries || x.table.used < inUse || 2*x.table.used > len(x.table.tags) {
		t.Fatalf("%d entries in use, %d free, %d total; table uses %d of %d slots", inUse, len(x.free), entries, x.table.used, len(x.table.tags))
	}
	checkStreamInvariants(t, &x.streams, x.rings, holdBlocks)
}

// checkStreamInvariants verifies the stream holds against the live ring
// slots counted per hold: each hold's count and held positions agree with
// them, holds are on their stream's list (one per instance), and a stream
// is in the map exactly while it has holds; free holds hold nothing.
func checkStreamInvariants(t *testing.T, x *streamHolds, rings []touchRing, holdBlocks []int32) {
	t.Helper()
	freeHold := make([]bool, len(x.holds))
	for _, h := range x.freeHolds {
		freeHold[h] = true
	}
	onList := make([]bool, len(x.holds))
	live := 0
	for s := range x.streams {
		st := &x.streams[s]
		if got, ok := x.find(st.uid); !ok || got != int32(s) {
			if st.first != noHold || !slices.Contains(x.freeRecs, int32(s)) {
				t.Fatalf("stream %d (uid %d) with holds is not in the map, or a dead one is not free", s, st.uid)
			}
			continue
		}
		live++
		if st.first == noHold {
			t.Fatalf("stream %d in the map without holds", s)
		}
		insts := map[int32]bool{}
		for h := st.first; h != noHold; h = x.holds[h].next {
			if onList[h] || freeHold[h] || x.holds[h].stream != int32(s) || insts[x.holds[h].inst] {
				t.Fatalf("stream %d: hold %d listed twice, free, of another stream or a second for instance %d", s, h, x.holds[h].inst)
			}
			onList[h], insts[x.holds[h].inst] = true, true
		}
	}
	if live != x.byUID.Len() {
		t.Fatalf("%d live streams, map has %d", live, x.byUID.Len())
	}
	for h := range x.holds {
		hold := &x.holds[h]
		blocks := int32(0)
		if onList[h] {
			for _, p := range hold.pos {
				if held(p, rings[hold.inst].tail) {
					blocks++
				}
			}
		}
		if onList[h] == freeHold[h] || blocks != holdBlocks[h] || (onList[h] && hold.count != blocks) {
			t.Fatalf("hold %d: listed %v, free %v, count %d, %d held positions, %d live slots", h, onList[h], freeHold[h], hold.count, blocks, holdBlocks[h])
		}
	}
}

// setHeld creates or frees the entry of k directly, as record and
// eviction do, to exercise the table alone.
func setHeld(x *prefixIndex, k uint64, held bool) {
	if held {
		x.reserve(1)
		_, spot := x.find(k)
		e := x.newEntry(spot, k)
		x.records[int(e)*x.stride+holdersWord] = 1
		return
	}
	e, _ := x.find(k)
	x.records[int(e)*x.stride+holdersWord] = 0
	x.free = append(x.free, e)
}

func TestPrefixTable_MatchesMapUnderChurn(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	x := newPrefixIndex(1, 1)
	want := map[uint64]bool{}
	rebuilds, size := 0, len(x.table.tags)
	// Keys that share many bits exercise collisions and long runs.
	key := func() uint64 { return uint64(rng.Intn(48)) << uint(rng.Intn(3)*20) }
	for op := range 20000 {
		k := key()
		used := x.table.used
		if want[k] {
			setHeld(x, k, false)
			delete(want, k)
		} else if len(want) < 40 {
			setHeld(x, k, true)
			want[k] = true
			if x.table.used <= used {
				rebuilds++
			}
		}
		if op%97 == 0 {
			for probe := range uint64(48) {
				for _, shift := range []uint{0, 20, 40} {
					k := probe << shift
					if e, _ := x.find(k); (e != noEntry) != want[k] || (e != noEntry && x.key(e) != k) {
						t.Fatalf("op %d: find(%d) = %d, want present %v", op, k, e, want[k])
					}
				}
			}
		}
	}
	if rebuilds < 10 || len(x.table.tags) == size {
		t.Fatalf("%d rebuilds, table grew %d → %d: the test did not exercise them", rebuilds, size, len(x.table.tags))
	}
	if entries := len(x.records)/x.stride - len(x.free); entries != len(want) {
		t.Fatalf("%d entries in use, want %d", entries, len(want))
	}
}

// Keys with one home slot form one long run; freeing some leaves stale
// slots inside it that lookups must step over, before and after a rebuild.
func TestPrefixTable_SameHomeKeysStayReachable(t *testing.T) {
	x := newPrefixIndex(1, 1)
	x.reserve(2000)
	var keys []uint64
	for k := uint64(0); len(keys) < 300; k++ {
		if home, _ := x.table.hashOf(k); home == 7 {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		setHeld(x, k, true)
	}
	check := func(stage string) {
		for i, k := range keys {
			e, _ := x.find(k)
			if present := i%2 == 1; (e != noEntry) != present {
				t.Fatalf("%s: key %d found %v, want %v", stage, i, e != noEntry, present)
			}
		}
	}
	for i := 0; i < len(keys); i += 2 {
		setHeld(x, keys[i], false)
	}
	check("stale slots")
	x.reserve(len(x.table.tags)) // forces a rebuild
	check("rebuilt")
}
