package route

import (
	"math/rand"
	"slices"
	"testing"

	"optimize/simcore"
	"optimize/simcore/kv"
)

// preciseRouter builds a weighted router scoring precise-prefix alone.
func preciseRouter(t *testing.T, instances int, delay simcore.Tick) weightedWithKVEvents {
	t.Helper()
	cfg := Config{Policy: "weighted", CacheSignalDelay: delay, Scorers: []ScorerWeight{{"precise-prefix", 1}}}
	r, ok := mustNew(t, cfg, instances, nil).(weightedWithKVEvents)
	if !ok {
		t.Fatal("a precise-prefix router is not a KVEventSink")
	}
	return r
}

// preciseScores scores r with the router's precise-prefix scorer as the
// router would at now.
func preciseScores(rt weightedWithKVEvents, r *simcore.Request, now simcore.Tick) []float64 {
	rt.mirror.catchUp(now)
	out := make([]float64, len(rt.dim))
	rt.scorers[0].Score(r, make([]Snapshot, len(rt.dim)), out)
	return out
}

// holds reports whether the mirror currently shows instance holding hash.
func (m *kvMirror) holds(instance int, hash uint64) bool {
	e, ok := m.gpu.entries.Get(hash)
	return ok && m.gpu.holders[int(e)*m.words+instance>>6]&(1<<(uint(instance)&63)) != 0
}

// The mirror shows a change exactly CacheSignalDelay µs after it happened.
func TestPrecisePrefix_SeesKVEventsAfterTheDelay(t *testing.T) {
	type step struct {
		event  *kvEvent   // fed at its time, or nil
		now    int64      // otherwise: score at now
		scores [2]float64 // of request 1,2,3,4
	}
	store := func(at int64, h uint64) step {
		return step{event: &kvEvent{at: at, hash: h, instance: 1, stored: true}}
	}
	remove := func(at int64, h uint64) step { return step{event: &kvEvent{at: at, hash: h, instance: 1}} }
	score := func(now int64, s float64) step { return step{now: now, scores: [2]float64{0, s}} }
	tests := []struct {
		name  string
		delay simcore.Tick
		steps []step
	}{
		{"delay 100: stored after 100 µs, removed after 100 µs", 100, []step{
			store(10, 1), store(10, 2), store(10, 3),
			score(10, 0), score(109, 0), score(110, 0.75),
			remove(200, 2),
			score(250, 0.75), score(299, 0.75), score(300, 0.25),
		}},
		{"delay 0: live", 0, []step{
			score(0, 0),
			store(10, 1), store(10, 2), score(10, 0.5),
			remove(20, 1), score(20, 0),
			store(30, 1), score(30, 0.5),
		}},
		{"a later event waits behind none: each is applied at its own time", 50, []step{
			store(10, 1), store(40, 2), score(59, 0), score(60, 0.25), score(89, 0.25), score(90, 0.5),
		}},
		{"repeated stores are one; one removal forgets", 0, []step{
			store(1, 1), store(2, 1), score(2, 0.25), remove(3, 1), score(3, 0),
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := preciseRouter(t, 2, tc.delay)
			for i, s := range tc.steps {
				if s.event != nil {
					rt.KVEvent(int(s.event.instance), s.event.hash, s.event.stored, s.event.at)
					continue
				}
				got := preciseScores(rt, inputBlocks(1, 2, 3, 4), s.now)
				if got[0] != s.scores[0] || got[1] != s.scores[1] {
					t.Fatalf("step %d at %d µs: scores %v, want %v", i, s.now, got, s.scores)
				}
			}
		})
	}
}

// Route itself catches the mirror up to its time: the request follows the
// cache only once the router may see it.
func TestPrecisePrefix_RouteFollowsTheCacheAfterTheDelay(t *testing.T) {
	rt := preciseRouter(t, 3, 1000)
	for _, h := range []uint64{1, 2, 3} {
		rt.KVEvent(2, h, true, 500)
	}
	snaps := make([]Snapshot, 3)
	for _, tc := range []struct {
		now  simcore.Tick
		want int // ties go to instance 0 without an RNG
	}{{500, 0}, {1499, 0}, {1500, 2}, {5000, 2}} {
		if got := rt.Route(inputBlocks(1, 2, 3), snaps, tc.now); got != tc.want {
			t.Fatalf("at %d µs chose %d, want %d", tc.now, got, tc.want)
		}
	}
}

func TestPrecisePrefix_ScoresTheLeadingRunOfInputBlocks(t *testing.T) {
	rt := preciseRouter(t, 3, 0)
	for inst, hashes := range [][]uint64{{10, 11, 12, 13}, {10, 11}, {99, 11, 12, 13}} {
		for _, h := range hashes {
			rt.KVEvent(inst, h, true, 0)
		}
	}
	withPrivateTail := &simcore.Request{Content: kv.Content{Prefix: []uint64{10, 11, 12, 13}, UID: 7, Input: 8, Total: 8, Shared: 4}}
	tests := []struct {
		name string
		req  *simcore.Request
		want []float64
	}{
		{"full match on 0, half on 1, none on 2", inputBlocks(10, 11, 12, 13), []float64{1, 0.5, 0}},
		{"hit after a miss does not count", inputBlocks(10, 50, 12, 13), []float64{0.25, 0.25, 0}},
		{"first block missing", inputBlocks(50, 11, 12), []float64{0, 0, 0}},
		{"private blocks count in the denominator only", withPrivateTail, []float64{0.5, 0.25, 0}},
		{"no full block", inputBlocks(), []float64{0, 0, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertScores(t, preciseScores(rt, tc.req, 0), tc.want)
		})
	}
}

// A differential test against a map of sets, with more than 64 instances
// (several bitset words) and enough churn to reuse entries.
func TestKVMirror_MatchesNaiveModel(t *testing.T) {
	for _, instances := range []int{1, 3, 64, 70, 130} {
		rng := rand.New(rand.NewSource(int64(instances)))
		m := newKVMirror(instances, 0)
		naive := make([]map[uint64]bool, instances)
		for i := range naive {
			naive[i] = map[uint64]bool{}
		}
		matched := make([]int32, instances)
		for op := range 20000 {
			inst, h := rng.Intn(instances), uint64(rng.Intn(40)+1)
			stored := rng.Intn(2) == 0
			m.KVEvent(inst, h, stored, simcore.Tick(op))
			naive[inst][h] = stored
			if op%50 != 0 {
				continue
			}
			m.catchUp(simcore.Tick(op))
			blocks := []uint64{uint64(rng.Intn(5) + 1), uint64(rng.Intn(5) + 1), uint64(rng.Intn(40) + 1)}
			m.match(blocks, matched)
			for i := range instances {
				want := int32(0)
				for want < int32(len(blocks)) && naive[i][blocks[want]] {
					want++
				}
				if matched[i] != want || m.holds(i, blocks[0]) != naive[i][blocks[0]] {
					t.Fatalf("%d instances, op %d, instance %d: matched %d of %v, want %d", instances, op, i, matched[i], blocks, want)
				}
			}
		}
		// Entries nobody holds are freed and reused: at most 40 are live.
		if entries := len(m.gpu.holders) / m.words; entries > 41 || m.gpu.entries.Len()+len(m.gpu.free) != entries {
			t.Fatalf("%d instances: %d entries, %d in the table, %d free", instances, entries, m.gpu.entries.Len(), len(m.gpu.free))
		}
	}
}

// Events queued faster than the router catches up grow the ring and are
// applied in order: each even hash is stored, then removed.
func TestKVMirror_QueueGrowsAndKeepsOrder(t *testing.T) {
	m := newKVMirror(2, 10)
	for k := range 1000 {
		h := uint64(k/2 + 1)
		switch {
		case k%2 == 0:
			m.KVEvent(0, h, true, simcore.Tick(k))
		case h%2 == 0:
			m.KVEvent(0, h, false, simcore.Tick(k))
		default:
			m.KVEvent(1, h, true, simcore.Tick(k))
		}
	}
	m.catchUp(998 + 10) // all but the last event
	if pending := m.pending.tail - m.pending.head; pending != 1 || len(m.pending.buf) != 1024 {
		t.Fatalf("%d events pending in a ring of %d, want 1 in 1024", pending, len(m.pending.buf))
	}
	m.catchUp(999 + 10)
	for h := uint64(1); h <= 500; h++ {
		odd := h%2 == 1
		if m.holds(0, h) != odd || m.holds(1, h) != odd {
			t.Fatalf("hash %d: held by 0 %v, by 1 %v; want %v for both", h, m.holds(0, h), m.holds(1, h), odd)
		}
	}
}

// With CPU-tier blocks reported, the match is llm-d's precise producer's
// (llm-d-kv-cache's LongestPrefixScorer): the run goes on through blocks
// held in either tier, each weighing its best tier's weight (GPU 1.0, CPU
// 0.8), and the sum is truncated. Five blocks b0-b4:
//   - instance 0: b0, b1 on GPU, b2, b3 on CPU only → 1+1+0.8+0.8 = 3.6 → 3
//   - instance 1: b0 on GPU, b1 on CPU, b2 nowhere → 1+0.8 = 1.8 → 1
//   - instance 2: b0 on both tiers, b1 on GPU, b2 on CPU → 1+1+0.8 = 2.8 → 2
//   - instance 3: b0 on CPU only, b1-b4 on GPU → 0.8+4 = 4.8 → 4
func TestKVMirror_CPUTierBlocksWeighPointEight(t *testing.T) {
	m := newKVMirror(4, 0)
	b := []uint64{11, 12, 13, 14, 15}
	gpu := map[int][]int{0: {0, 1}, 1: {0}, 2: {0, 1}, 3: {1, 2, 3, 4}}
	cpu := map[int][]int{0: {2, 3}, 1: {1}, 2: {0, 2}, 3: {0}}
	for inst := range 4 {
		for _, k := range gpu[inst] {
			m.KVEvent(inst, b[k], true, 0)
		}
		for _, k := range cpu[inst] {
			m.KVCPUEvent(inst, b[k], true, 0)
		}
	}
	m.catchUp(0)
	matched := make([]int32, 4)
	m.match(b, matched)
	if want := []int32{3, 1, 2, 4}; !slices.Equal(matched, want) {
		t.Errorf("matched %v, want %v", matched, want)
	}
	// A block leaving the CPU tier ends instance 0's run there: 1+1 = 2.
	m.KVCPUEvent(0, b[2], false, 1)
	m.catchUp(1)
	m.match(b, matched)
	if matched[0] != 2 {
		t.Errorf("after the CPU tier dropped b2: instance 0 matched %d, want 2", matched[0])
	}
	// Without CPU blocks, GPU blocks count 1 each, as before.
	for inst, ks := range cpu {
		for _, k := range ks {
			m.KVCPUEvent(inst, b[k], false, 2)
		}
	}
	m.catchUp(2)
	m.match(b, matched)
	if want := []int32{2, 1, 2, 0}; !slices.Equal(matched, want) {
		t.Errorf("GPU only: matched %v, want %v", matched, want)
	}
}
