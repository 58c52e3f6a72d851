package sched

import (
	"cmp"
	"math"

	"optimize/simcore"
)

// A scheduler's Rank is the order its Order sorts into, kept by the wait
// queue as heaps (simcore.Ranking) instead of a sort of the whole queue at
// every step.
//
// Under priority-fcfs the order changes with time, as priorities age. It
// never reorders two requests of one group, though: every policy's
// priority is, for requests of one class and router hint, a non-decreasing
// function of the time waited (in floating point too: the conversion of
// the wait, the subtraction of the class threshold, the product by the
// slope and the sum with the base all round monotonically), so of two such
// requests the earlier arrival has the priority at least as high and is
// served first either way. Each group is therefore kept in arrival order,
// and only the group heads are scored, with the policy's own expression
// at the current time, and compared as Order compares them.

// staticRank is an order that does not change with time: one group.
type staticRank struct {
	less func(a, b *simcore.Waiting) bool
}

func (staticRank) Group(*simcore.Waiting) int                         { return 0 }
func (s staticRank) Less(a, b *simcore.Waiting) bool                  { return s.less(a, b) }
func (s staticRank) Ahead(a, b *simcore.Waiting, _ simcore.Tick) bool { return s.less(a, b) }

// agingRank is priority-fcfs under an ageing policy: groups of one class
// and hint (one group for slo-based, which ignores both), each in arrival
// order.
type agingRank struct {
	policy  Policy
	byClass bool
	keys    []groupKey // group index → its class and hint
}

type groupKey struct {
	class simcore.SLOClass
	hint  uint64 // the bits of PriorityHint
}

func (r *agingRank) Group(w *simcore.Waiting) int {
	if !r.byClass {
		return 0
	}
	k := groupKey{w.SLO.Known(), math.Float64bits(w.PriorityHint)}
	for i, x := range r.keys {
		if x == k {
			return i
		}
	}
	r.keys = append(r.keys, k)
	return len(r.keys) - 1
}

func (*agingRank) Less(a, b *simcore.Waiting) bool { return byArrival(a, b) < 0 }

func (r *agingRank) Ahead(a, b *simcore.Waiting, now simcore.Tick) bool {
	if pa, pb := r.policy.Priority(a, now), r.policy.Priority(b, now); pa != pb {
		return cmp.Compare(pb, pa) < 0
	}
	return byArrival(a, b) < 0
}

func (priorityFCFS) Rank(p Policy) simcore.Ranking {
	switch p.(type) {
	case nil:
		// Constant: the priorities set at routing never change.
		return staticRank{func(a, b *simcore.Waiting) bool {
			if a.Priority != b.Priority {
				return cmp.Compare(b.Priority, a.Priority) < 0
			}
			return byArrival(a, b) < 0
		}}
	case agePriority:
		return &agingRank{policy: p}
	default: // *tieredPriority, *adaptivePriority: by class and hint
		return &agingRank{policy: p, byClass: true}
	}
}

func (shortestFirst) Rank(Policy) simcore.Ranking {
	return staticRank{func(a, b *simcore.Waiting) bool {
		if a.InputLen != b.InputLen {
			return a.InputLen < b.InputLen
		}
		return byArrival(a, b) < 0
	}}
}

func (s *sloDeadline) Rank(Policy) simcore.Ranking {
	return staticRank{func(a, b *simcore.Waiting) bool { return s.compare(*a, *b) < 0 }}
}
