package batch

import (
	"runtime"
	"slices"
	"strings"
	"testing"

	"optimize/simcore"
	"optimize/simcore/kv"
	"optimize/simcore/simtest"
)

const blockSize = 16

// instance is the part of an engine instance that Form works on.
type instance struct {
	former  *Former
	cache   *kv.Cache
	running []*simcore.Request
	wait    simcore.WaitQueue
}

func newInstance(t *testing.T, cfg Config, blocks int64) *instance {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	cache, err := kv.New(blocks, blockSize)
	if err != nil {
		t.Fatal(err)
	}
	return &instance{former: New(cfg), cache: cache}
}

// step forms a batch and then advances progress as the engine's execute
// does: a prefill jumps to what was computed, a decode adds one token.
func (in *instance) step(t *testing.T) *Result {
	t.Helper()
	res := in.former.Form(&in.running, &in.wait, in.cache)
	for _, r := range in.running {
		if r.Progress < r.InputLen {
			r.Progress = r.Computed
		} else if r.NewTokens > 0 {
			r.Progress++
		}
	}
	seqs := make([]*kv.Seq, len(in.running))
	for i, r := range in.running {
		seqs[i] = &r.KV
	}
	if err := in.cache.Check(seqs); err != nil {
		t.Fatal(err)
	}
	return res
}

// get returns request id as batch formation last left it: running, or
// first in line. (A queue folds a request that never ran and hands out
// another Request for it: tests follow requests by id, not pointer.)
func (in *instance) get(t *testing.T, id int64) *simcore.Request {
	t.Helper()
	for _, r := range in.running {
		if r.ID == id {
			return r
		}
	}
	if in.wait.Len() > 0 && in.wait.Front().ID == id {
		return in.wait.Front()
	}
	t.Fatalf("request %d is neither running nor first in line", id)
	return nil
}

// newRequest builds request id of class c with its own (unshared) tokens.
func newRequest(id int64, c simcore.SLOClass, arrival simcore.Tick, input, output int32) *simcore.Request {
	r := simtest.Request(arrival, input, output, blockSize, nil, uint64(id+1))
	r.ID, r.SLO = id, c
	return r
}

func perClass(pairs string) simcore.PerClass {
	p, err := simcore.ParsePerClass(pairs, false)
	if err != nil {
		panic(err)
	}
	return p
}

// Each request's prefill chunks, step by step, must follow its class's
// threshold, for the first chunk (phase 2) and the later ones (phase 1).
func TestClassThreshold_ChunksEachPrefillByClass(t *testing.T) {
	classes := []simcore.SLOClass{simcore.SLOCritical, simcore.SLOStandard, simcore.SLOSheddable, simcore.SLONone}
	tests := []struct {
		name string
		cfg  Config
		want [][]int32 // per step, the chunk of each class above
	}{
		{"global threshold only", Config{PrefillThreshold: 256},
			[][]int32{{256, 256, 256, 256}, {256, 256, 256, 256}, {88, 88, 88, 88}}},
		{"critical unchunked, sheddable 64", Config{PrefillThreshold: 256, ClassThreshold: perClass("critical=0,sheddable=64")},
			[][]int32{{600, 256, 64, 256}, {1, 256, 64, 256}, {1, 88, 64, 88}}},
		{"class cap without a global one", Config{ClassThreshold: perClass("standard=200")},
			[][]int32{{600, 200, 600, 600}, {1, 200, 1, 1}, {1, 200, 1, 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.MaxScheduledTokens, tc.cfg.MaxRunning = 8192, 16
			in := newInstance(t, tc.cfg, 1000)
			for i, c := range classes {
				in.wait.PushBack(newRequest(int64(i), c, 0, 600, 10))
			}
			for s, want := range tc.want {
				in.step(t)
				got := make([]int32, len(classes))
				for i := range got {
					got[i] = in.get(t, int64(i)).NewTokens
				}
				if !slices.Equal(got, want) {
					t.Fatalf("step %d: chunks %v, want %v", s+1, got, want)
				}
			}
		})
	}
}

// Three running requests of 2 full blocks each fill 6 of 7 blocks; at the
// next step each decode needs a new block, so the second one finds none
// and a victim must go.
func TestPreemption_PicksVictimByPolicy(t *testing.T) {
	tests := []struct {
		name     string
		policy   string
		priority [3]float64
		arrival  [3]simcore.Tick
		victim   int64   // evicted request
		running  []int64 // batch after the step, in order
		decoded  []int64 // requests that got their decode token
	}{
		{"fcfs evicts the tail", PreemptFCFS, [3]float64{1, 10, 5}, [3]simcore.Tick{0, 1, 2}, 2, []int64{0, 1}, []int64{0, 1}},
		{"priority evicts the least urgent, before the requester", PreemptPriority, [3]float64{1, 10, 5}, [3]simcore.Tick{0, 1, 2}, 0, []int64{1, 2}, []int64{1, 2}},
		{"tie: the later arrival loses", PreemptPriority, [3]float64{5, 10, 5}, [3]simcore.Tick{0, 1, 2}, 2, []int64{0, 1}, []int64{0, 1}},
		{"tie on arrival: the larger id loses", PreemptPriority, [3]float64{5, 10, 5}, [3]simcore.Tick{0, 0, 0}, 2, []int64{0, 1}, []int64{0, 1}},
		{"tie goes by arrival, not batch order", PreemptPriority, [3]float64{5, 10, 5}, [3]simcore.Tick{2, 1, 0}, 0, []int64{1, 2}, []int64{1, 2}},
		{"the requester itself: phase 1 stops", PreemptPriority, [3]float64{5, 0, 5}, [3]simcore.Tick{0, 1, 2}, 1, []int64{0, 2}, []int64{0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := newInstance(t, Config{MaxScheduledTokens: 2048, MaxRunning: 16, PreemptionPolicy: tc.policy}, 7)
			for i := range 3 {
				in.wait.PushBack(newRequest(int64(i), simcore.SLOStandard, tc.arrival[i], 2*blockSize, 100))
			}
			if res := in.step(t); len(res.Scheduled) != 3 || in.cache.Free() != 1 {
				t.Fatalf("setup: %d scheduled, %d blocks free; want 3, 1", len(res.Scheduled), in.cache.Free())
			}
			for i, p := range tc.priority {
				in.get(t, int64(i)).Priority = p
			}
			res := in.step(t)
			if res.Preempted != 1 || in.wait.Len() != 1 || in.wait.Front().ID != tc.victim {
				t.Fatalf("preempted %d, wait %d; want request %d evicted alone", res.Preempted, in.wait.Len(), tc.victim)
			}
			if v := in.wait.Front(); v.Progress != 0 || v.Computed != 0 || v.NewTokens != 0 || v.KV.Blocks != 0 {
				t.Fatalf("victim not reset: progress %d, computed %d, new %d, %d blocks", v.Progress, v.Computed, v.NewTokens, v.KV.Blocks)
			}
			var running, decoded []int64
			for _, r := range in.running {
				running = append(running, r.ID)
				if r.NewTokens == 1 {
					decoded = append(decoded, r.ID)
				}
			}
			if !slices.Equal(running, tc.running) || !slices.Equal(decoded, tc.decoded) {
				t.Fatalf("running %v, decoded %v; want %v, %v", running, decoded, tc.running, tc.decoded)
			}
		})
	}
}

// A victim scheduled earlier in the same step gives its tokens back to
// the budget, so a request behind the requester still gets its chunk.
func TestPriorityPreemption_RefundsAnEarlierVictim(t *testing.T) {
	cfg := Config{MaxScheduledTokens: 2048, MaxRunning: 16, PrefillThreshold: 32, PreemptionPolicy: PreemptPriority}
	in := newInstance(t, cfg, 8)
	low := newRequest(0, simcore.SLOSheddable, 0, 64, 10)
	high := newRequest(1, simcore.SLOCritical, 1, 64, 10)
	mid := newRequest(2, simcore.SLOStandard, 2, 64, 10)
	for _, r := range []*simcore.Request{low, high, mid} {
		in.wait.PushBack(r)
	}
	in.step(t) // 32 tokens each: 6 of 8 blocks
	low, high, mid = in.get(t, 0), in.get(t, 1), in.get(t, 2)
	low.Priority, high.Priority, mid.Priority = 1, 10, 5
	cfg.MaxScheduledTokens = 64 // low and high use it all unless low's share comes back
	in.former = New(cfg)
	res := in.step(t)
	if res.Preempted != 1 || in.wait.Front() != low {
		t.Fatalf("preempted %d; want the sheddable request evicted", res.Preempted)
	}
	if high.NewTokens != 32 || mid.NewTokens != 32 {
		t.Fatalf("critical got %d tokens, standard %d; want 32 each", high.NewTokens, mid.NewTokens)
	}
}

func TestConfigValidate(t *testing.T) {
	bad := Config{}
	bad.ClassThreshold.V[simcore.SLOBatch], bad.ClassThreshold.Set[simcore.SLOBatch] = 1.5, true
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"fcfs", Config{PreemptionPolicy: PreemptFCFS}, ""},
		{"empty is fcfs", Config{}, ""},
		{"priority", Config{PreemptionPolicy: PreemptPriority, ClassThreshold: perClass("critical=0,standard=512")}, ""},
		{"unknown policy", Config{PreemptionPolicy: "lifo"}, `preemption.policy: unknown value "lifo" (allowed: fcfs, priority)`},
		{"negative class threshold", Config{ClassThreshold: perClass("sheddable=-1")}, "batch.prefill_threshold.sheddable: must be a whole number in [0, 2^31) (0 = no chunking), got -1"},
		{"fractional class threshold", bad, "batch.prefill_threshold.batch: must be a whole number in [0, 2^31) (0 = no chunking), got 1.5"},
		{"negative global threshold", Config{PrefillThreshold: -1}, "batch.long_prefill_token_threshold: must be ≥ 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line starting %q", err, tc.wantErr)
			}
		})
	}
}

// A steady decode step with per-class chunking and priority preemption
// configured must not allocate (the next test covers preemption and
// re-admission themselves).
func TestForm_AllocationFree(t *testing.T) {
	in := newInstance(t, Config{MaxScheduledTokens: 2048, MaxRunning: 16, PrefillThreshold: 64,
		ClassThreshold: perClass("critical=0"), PreemptionPolicy: PreemptPriority}, 10000)
	for i := int64(0); i < 8; i++ {
		in.wait.PushBack(newRequest(i, simcore.SLOClass(1+i%3), simcore.Tick(i), 200, 1<<20))
	}
	for range 5 {
		in.step(t)
	}
	n := testing.AllocsPerRun(50, func() {
		in.former.Form(&in.running, &in.wait, in.cache)
		for _, r := range in.running {
			r.Progress++
		}
	})
	if n != 0 {
		t.Fatalf("%v allocations per step", n)
	}
}

// Steps that preempt, requeue and re-admit with chunked prefill allocate
// nothing once the queue and the block lists have grown: requests that
// never finish keep outgrowing a 24-block cache.
func TestForm_PreemptionCycleAllocationFree(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // no other goroutine's allocations
	for _, policy := range []string{PreemptFCFS, PreemptPriority} {
		in := newInstance(t, Config{MaxScheduledTokens: 256, MaxRunning: 8, PrefillThreshold: 32, PreemptionPolicy: policy}, 24)
		for i := int64(0); i < 6; i++ {
			in.wait.PushBack(newRequest(i, simcore.SLOClass(1+i%3), simcore.Tick(i), 64, 1<<20))
		}
		preempted, admitted := 0, 0
		step := func() {
			res := in.former.Form(&in.running, &in.wait, in.cache)
			preempted += res.Preempted
			admitted += len(res.Scheduled)
			for _, r := range in.running {
				if r.Progress < r.InputLen {
					r.Progress = r.Computed
				} else if r.NewTokens > 0 {
					r.Progress++
				}
			}
		}
		for range 2000 {
			step()
		}
		preempted, admitted = 0, 0
		// Total allocations, not AllocsPerRun's rounded-down average: a
		// preemption is rarer than a step.
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 500 {
			step()
		}
		runtime.ReadMemStats(&after)
		if n := after.Mallocs - before.Mallocs; n != 0 {
			t.Fatalf("%s: %d allocations in 500 steps", policy, n)
		}
		if preempted == 0 || admitted == 0 {
			t.Fatalf("%s: %d preemptions and %d admissions while measured; the test needs both", policy, preempted, admitted)
		}
	}
}

// In the August era a preempted request's ITL sum restarts with its
// progress (its E2E counts only its last attempt's decode); in the March
// era it is kept. The setup is TestPreemption_PicksVictimByPolicy's: the
// batch tail, request 2, is evicted at the second step.
func TestPreemption_VictimITLByEra(t *testing.T) {
	for _, tc := range []struct {
		era  simcore.Era
		want simcore.Tick
	}{{simcore.EraMarch2026, 5000}, {"", 5000}, {simcore.EraAugust2026, 0}} {
		in := newInstance(t, Config{MaxScheduledTokens: 2048, MaxRunning: 16, Era: tc.era}, 7)
		for i := range 3 {
			in.wait.PushBack(newRequest(int64(i), simcore.SLOStandard, simcore.Tick(i), 2*blockSize, 100))
		}
		in.step(t)
		for _, r := range in.running {
			r.ITLSum = 5000
		}
		if res := in.step(t); res.Preempted != 1 || in.wait.Front().ID != 2 {
			t.Fatalf("era %q: preempted %d; want request 2 evicted", tc.era, res.Preempted)
		}
		if got := in.wait.Front().ITLSum; got != tc.want {
			t.Errorf("era %q: victim's ITL sum %d, want %d", tc.era, got, tc.want)
		}
		if got := in.get(t, 0).ITLSum; got != 5000 {
			t.Errorf("era %q: a running request's ITL sum changed to %d", tc.era, got)
		}
	}
}
