// Package batch forms each step's batch the way vLLM's V1 scheduler (and
// BLIS) does: running requests first in batch order, then new requests from
// the head of the wait queue, all sharing one token budget; chunked prefill
// (optionally with a per-SLO-class chunk cap); recompute preemption of the
// batch tail (or, with the priority policy, of the least urgent running
// request) when KV runs out; no admissions in a step that preempted;
// head-of-line blocking at the first waiting request that does not fit.
//
// Batch formation only moves requests and KV blocks; it neither schedules
// events nor records metrics (the engine does, from Result).
package batch

import (
	"math"
	"slices"
	"strings"

	"optimize/simcore"
	"optimize/simcore/errtext"
	"optimize/simcore/keys"
	"optimize/simcore/kv"
)

// Config holds the batch limits.
type Config struct {
	MaxScheduledTokens int64 // token budget per step
	MaxRunning         int   // cap on running requests
	PrefillThreshold   int64 // per-step chunk cap for every prefill; 0 = none
	// ClassThreshold overrides PrefillThreshold for the classes it lists
	// (0 = no chunking for that class).
	ClassThreshold simcore.PerClass
	// PreemptionPolicy picks the victim when KV runs out: "fcfs" (or "")
	// evicts the batch tail, "priority" the least urgent running request.
	PreemptionPolicy string
	// Era: in the August 2026 era a preempted request's inter-token
	// latencies are dropped with its progress, so its E2E counts only its
	// last attempt's decode (see simcore.Era).
	Era simcore.Era
}

// Preemption policy names.
const (
	PreemptFCFS     = "fcfs"
	PreemptPriority = "priority"
)

// PreemptionPolicyNames lists the accepted preemption policies, the
// default first.
func PreemptionPolicyNames() []string { return []string{PreemptFCFS, PreemptPriority} }

// Validate checks the fields a Former interprets by name or per class;
// errors are one line naming the setting's key.
func (c Config) Validate() error {
	if c.PreemptionPolicy != "" && !slices.Contains(PreemptionPolicyNames(), c.PreemptionPolicy) {
		return errtext.BadSetting(keys.PreemptionPolicy, "unknown value %q (allowed: %s)", c.PreemptionPolicy, strings.Join(PreemptionPolicyNames(), ", "))
	}
	if c.PrefillThreshold < 0 {
		return errtext.BadSetting(keys.LongPrefillThreshold, "must be ≥ 0 (0 = no chunking), got %d", c.PrefillThreshold)
	}
	for cl := simcore.SLOClass(0); cl < simcore.NumSLOClasses; cl++ {
		if v, ok := c.ClassThreshold.Get(cl); ok && !(v >= 0 && v <= math.MaxInt32 && v == math.Trunc(v)) {
			return errtext.BadSetting(keys.Member(keys.PrefillThreshold, cl.Label()), "must be a whole number in [0, 2^31) (0 = no chunking), got %v", v)
		}
	}
	return nil
}

// Result reports what a Form call changed besides the queues.
type Result struct {
	Scheduled []*simcore.Request // newly admitted into the running batch
	Preempted int                // requests evicted back to the wait queue
}

// Former is the vLLM batch-formation rule. It keeps scratch space and is
// not safe for concurrent use.
type Former struct {
	cfg Config
	res Result
	// chunkCap is the prefill chunk cap per SLO class (0 = none), resolved
	// once so that the per-request lookup is one array read.
	chunkCap   [simcore.NumSLOClasses]int64
	byPriority bool // evict the least urgent request, not the batch tail
	dropITL    bool // a victim's ITL sum restarts (Config.Era)
}

// New returns a Former for cfg (validated by the caller with Validate).
func New(cfg Config) *Former {
	f := &Former{cfg: cfg, byPriority: cfg.PreemptionPolicy == PreemptPriority, dropITL: cfg.Era.August()}
	for c := range f.chunkCap {
		f.chunkCap[c] = cfg.PrefillThreshold
		if v, ok := cfg.ClassThreshold.Get(simcore.SLOClass(c)); ok {
			f.chunkCap[c] = int64(v)
		}
	}
	return f
}

// Form builds the next batch from *running and wait on cache. The returned
// Result is valid until the next call.
func (f *Former) Form(running *[]*simcore.Request, wait *simcore.WaitQueue, cache *kv.Cache) *Result {
	f.res.Scheduled, f.res.Preempted = f.res.Scheduled[:0], 0
	budget := f.cfg.MaxScheduledTokens
	for _, r := range *running {
		r.NewTokens = 0
	}
	// Phase 1: running requests, in batch order.
	for i := 0; i < len(*running); i++ {
		if budget <= 0 || !f.advance((*running)[i], &i, running, wait, cache, &budget) {
			break
		}
	}
	f.admit(running, wait, cache, budget)
	return &f.res
}

// FormSparse is Form for a batch in which every request outside active
// (indices into *running, ascending) is idle: a decode whose token fits in
// its last KV block without completing it, so that scheduling it changes
// nothing but its own counters, which the caller advances in bulk. Only
// the active requests are visited. It applies when phase 1 can give every
// running request its tokens — within the token budget, with enough free
// KV blocks — for then nothing is preempted and phase 1's order cannot
// change what any request gets; otherwise it changes nothing and reports
// false, and the caller wakes the idle requests and calls Form.
func (f *Former) FormSparse(running *[]*simcore.Request, active []int32, idle int, wait *simcore.WaitQueue, cache *kv.Cache) (*Result, bool) {
	tokens, blocks := int64(idle), int64(0)
	for _, i := range active {
		r := (*running)[i]
		if n := int64(r.InputLen - r.Progress); n > 0 {
			n = f.chunk(r, n)
			tokens += n
			blocks += cache.Need(&r.KV, n)
		} else if r.OutputLen > 0 {
			tokens++
			blocks += cache.Need(&r.KV, 1)
		}
	}
	if tokens > f.cfg.MaxScheduledTokens || blocks > cache.Free() {
		return nil, false
	}
	f.res.Scheduled, f.res.Preempted = f.res.Scheduled[:0], 0
	budget := f.cfg.MaxScheduledTokens - int64(idle)
	for _, i := range active {
		r := (*running)[i]
		r.NewTokens = 0
		at := int(i)
		f.advance(r, &at, running, wait, cache, &budget) // fits: checked above
	}
	f.admit(running, wait, cache, budget)
	return &f.res, true
}

// advance schedules running request r, at index *at, for this step: its
// next prefill chunk or one decode token. It reports false when phase 1
// must stop: r was evicted, or nothing was left to evict.
func (f *Former) advance(r *simcore.Request, at *int, running *[]*simcore.Request, wait *simcore.WaitQueue, cache *kv.Cache, budget *int64) bool {
	if n := int64(r.InputLen - r.Progress); n > 0 {
		n = min(f.chunk(r, n), *budget)
		if !f.allocate(r, n, at, running, wait, cache, budget) {
			return false
		}
		*budget -= n
		r.NewTokens = int32(n)
		r.Computed += int32(n)
	}
	// r.Progress is not advanced yet, so a request never prefills and
	// decodes in the same step.
	if r.Progress >= r.InputLen && r.OutputLen > 0 {
		if !cache.AppendInBlock(&r.KV) && !f.allocate(r, decodeToken, at, running, wait, cache, budget) {
			return false
		}
		*budget--
		r.NewTokens = 1
		r.Computed++
	}
	return true
}

// admit is phase 2: new requests from the wait queue head, while the batch,
// the budget and KV allow and nothing was preempted this step.
func (f *Former) admit(running *[]*simcore.Request, wait *simcore.WaitQueue, cache *kv.Cache, budget int64) {
	bs := cache.BlockSize()
	for len(*running) < f.cfg.MaxRunning && wait.Len() > 0 && budget > 0 && f.res.Preempted == 0 {
		r := wait.Front()
		if r.Transferred && (r.Progress > 0 || r.Preemptions > 0) {
			// A P/D decode sub-request: its prompt's KV came by transfer;
			// it takes the KV of its first decode token (BLIS f90a1e3a).
			// Preempted, it lost that KV and its progress: it takes one
			// token's KV at input position 0 and re-prefills as a running
			// request, as in BLIS, rather than waiting at the queue's head
			// for its whole prompt's KV while the transfers queued behind
			// it hold every block (a deadlock).
			if !cache.Allocate(&r.KV, &r.Content, kv.Hit{}, 1) {
				break
			}
			wait.PopFront()
			*running = append(*running, r)
			f.res.Scheduled = append(f.res.Scheduled, r)
			budget--
			r.NewTokens = 1
			r.Computed = r.Progress + 1
			continue
		}
		cached := cache.Lookup(&r.KV, &r.Content)
		// The prefix may go on in the CPU tier: those blocks are reloaded,
		// not recomputed.
		reload := cache.CPUPrefix(&r.Content, cached.Blocks)
		start := int64(cached.Blocks+reload) * bs
		n := min(f.chunk(r, int64(r.InputLen)-start), budget)
		if !cache.AllocateReload(&r.KV, &r.Content, cached, reload, n) {
			break
		}
		wait.PopFront()
		*running = append(*running, r)
		f.res.Scheduled = append(f.res.Scheduled, r)
		budget -= n
		r.NewTokens = int32(n)
		r.Computed = int32(start + n)
	}
}

// chunk caps n prefill tokens of r at its class's chunk threshold.
func (f *Former) chunk(r *simcore.Request, n int64) int64 {
	if t := f.chunkCap[r.SLO.Known()]; t > 0 && t < n {
		return t
	}
	return n
}

// allocate gets KV for n more tokens of running request r, which sits at
// index *at, preempting victims until it fits; *at follows r when a victim
// before it leaves the batch. It returns false when r itself was evicted
// or nothing is left to evict; the caller then stops phase 1.
func (f *Former) allocate(r *simcore.Request, n int64, at *int, running *[]*simcore.Request, wait *simcore.WaitQueue, cache *kv.Cache, budget *int64) bool {
	for !f.store(r, n, cache) {
		v := f.victim(*running)
		if v < 0 {
			return false
		}
		victim := removeAt(running, v)
		if v < *at {
			*at--
		}
		f.res.Preempted++
		victim.Preemptions++
		// A victim already scheduled this step gives its tokens back.
		*budget += int64(victim.NewTokens)
		victim.NewTokens = 0
		victim.Progress, victim.Computed = 0, 0
		if f.dropITL {
			victim.ITLSum = 0 // every victim is awake: its sum is absolute
		}
		cache.Release(&victim.KV)
		wait.PushFront(victim)
		if victim == r {
			return false
		}
	}
	return true
}

// victim returns the index of the running request to preempt, −1 if none:
// the batch tail (fcfs), or the least urgent request (priority).
func (f *Former) victim(running []*simcore.Request) int {
	if !f.byPriority {
		return len(running) - 1
	}
	return leastUrgent(running)
}

// leastUrgent is vLLM's priority victim with our sign convention (higher
// r.Priority is more urgent): the lowest priority, the later arrival on a
// tie, then the larger id. The engine rescores running requests every step
// under this policy: frozen at admission, an ageing priority would make the
// request admitted first (the one furthest along) the least urgent, and
// evicting it again and again livelocks the batch.
func leastUrgent(running []*simcore.Request) int {
	v := -1
	for j, c := range running {
		if v < 0 || lessUrgent(c, running[v]) {
			v = j
		}
	}
	return v
}

func lessUrgent(a, b *simcore.Request) bool {
	if a.Priority != b.Priority {
		return a.Priority < b.Priority
	}
	if a.Arrival != b.Arrival {
		return a.Arrival > b.Arrival
	}
	return a.ID > b.ID
}

// removeAt takes out (*s)[i], keeping the batch order of the rest.
func removeAt(s *[]*simcore.Request, i int) *simcore.Request {
	r := (*s)[i]
	last := len(*s) - 1
	copy((*s)[i:], (*s)[i+1:])
	(*s)[last] = nil
	*s = (*s)[:last]
	return r
}

// decodeToken asks allocate for the one token of a decode step.
const decodeToken = -1

func (f *Former) store(r *simcore.Request, n int64, cache *kv.Cache) bool {
	if n == decodeToken {
		return cache.AppendToken(&r.KV, &r.Content)
	}
	return cache.Allocate(&r.KV, &r.Content, kv.Hit{}, n)
}
