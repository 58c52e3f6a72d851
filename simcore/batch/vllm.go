// Package batch forms each step's batch the way vLLM's V1 scheduler (and
// BLIS) does: running requests first in batch order, then new requests from
// the head of the wait queue, all sharing one token budget; chunked prefill;
// recompute preemption of the batch tail when KV runs out; no admissions in
// a step that preempted; head-of-line blocking at the first waiting request
// that does not fit.
//
// Batch formation only moves requests and KV blocks; it neither schedules
// events nor records metrics (the engine does, from Result).
package batch

import (
	"optimize/simcore"
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
}

// New returns a Former for cfg (validated by the caller).
func New(cfg Config) *Former { return &Former{cfg: cfg} }

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
		if budget <= 0 {
			break
		}
		r := (*running)[i]
		if n := int64(r.InputLen - r.Progress); n > 0 {
			n = min(f.chunk(n), budget)
			if !f.allocate(r, n, running, wait, cache, &budget) {
				break
			}
			budget -= n
			r.NewTokens = int32(n)
			r.Computed += int32(n)
		}
		// r.Progress is not advanced yet, so a request never prefills and
		// decodes in the same step.
		if r.Progress >= r.InputLen && r.OutputLen > 0 {
			if !f.allocate(r, decodeToken, running, wait, cache, &budget) {
				break
			}
			budget--
			r.NewTokens = 1
			r.Computed++
		}
	}
	// Phase 2: new requests from the wait queue head.
	bs := cache.BlockSize()
	for len(*running) < f.cfg.MaxRunning && wait.Len() > 0 && budget > 0 && f.res.Preempted == 0 {
		r := wait.Front()
		cached := cache.Lookup(&r.KV, &r.Content)
		start := int64(len(cached)) * bs
		n := min(f.chunk(int64(r.InputLen)-start), budget)
		if !cache.Allocate(&r.KV, &r.Content, cached, n) {
			break
		}
		wait.PopFront()
		*running = append(*running, r)
		f.res.Scheduled = append(f.res.Scheduled, r)
		budget -= n
		r.NewTokens = int32(n)
		r.Computed = int32(start + n)
	}
	return &f.res
}

func (f *Former) chunk(n int64) int64 {
	if t := f.cfg.PrefillThreshold; t > 0 && t < n {
		return t
	}
	return n
}

// allocate gets KV for n more tokens of running request r, preempting the
// batch tail until it fits. It returns false when r itself was evicted or
// nothing is left to evict; the caller then stops phase 1.
func (f *Former) allocate(r *simcore.Request, n int64, running *[]*simcore.Request, wait *simcore.WaitQueue, cache *kv.Cache, budget *int64) bool {
	for !f.store(r, n, cache) {
		last := len(*running) - 1
		if last < 0 {
			return false
		}
		victim := (*running)[last]
		(*running)[last] = nil
		*running = (*running)[:last]
		f.res.Preempted++
		*budget += int64(victim.NewTokens)
		victim.NewTokens = 0
		victim.Progress, victim.Computed = 0, 0
		cache.Release(&victim.KV)
		wait.PushFront(victim)
		if victim == r {
			return false
		}
	}
	return true
}

// decodeToken asks allocate for the one token of a decode step.
const decodeToken = -1

func (f *Former) store(r *simcore.Request, n int64, cache *kv.Cache) bool {
	if n == decodeToken {
		return cache.AppendToken(&r.KV, &r.Content)
	}
	return cache.Allocate(&r.KV, &r.Content, nil, n)
}
