// Package sched orders an instance's wait queue: a priority policy scores
// waiting requests at the start of every step, and a scheduler serves
// them by its rule. Order states the rule as a stable sort of the whole
// queue scored at one instant; the engine's queue keeps the same order
// with Rank's heaps, scoring only the requests it compares and hands out
// (rank.go). Running requests are never reordered.
package sched

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"optimize/simcore"
	"optimize/simcore/errtext"
	"optimize/simcore/keys"
)

// Scheduler orders waiting requests. Order sorts a slice of them (stably),
// scored by a policy at one instant; Rank is the same order for a wait
// queue under policy p (nil = constant), which serves requests in it
// without sorting (see rank.go).
type Scheduler interface {
	Order(q []simcore.Waiting)
	Rank(p Policy) simcore.Ranking
}

// Scheduler names.
const (
	FCFS         = "fcfs"
	PriorityFCFS = "priority-fcfs"
	SJF          = "sjf"
	SLODeadline  = "slo-deadline"
)

// schedulerKind is one row of the scheduler table. build receives the
// per-class TTFT targets (ms), which only slo-deadline reads.
type schedulerKind struct {
	name  string
	build func(ttftMs simcore.PerClass) (Scheduler, error)
}

// schedulerKinds is the one place where scheduler names are defined; the
// first row is the default.
func schedulerKinds() []schedulerKind {
	return []schedulerKind{
		{FCFS, func(simcore.PerClass) (Scheduler, error) { return nil, nil }},
		{PriorityFCFS, func(simcore.PerClass) (Scheduler, error) { return priorityFCFS{}, nil }},
		{SJF, func(simcore.PerClass) (Scheduler, error) { return shortestFirst{}, nil }},
		{SLODeadline, newSLODeadline},
	}
}

// SchedulerNames lists the accepted schedulers, the default first.
func SchedulerNames() []string {
	kinds := schedulerKinds()
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.name
	}
	return names
}

// NewScheduler returns the named scheduler; fcfs returns nil (no
// reordering). ttftMs are the run's per-class TTFT targets in ms, the
// deadlines of slo-deadline.
func NewScheduler(name string, ttftMs simcore.PerClass) (Scheduler, error) {
	if name == "" {
		name = FCFS
	}
	for _, k := range schedulerKinds() {
		if k.name == name {
			return k.build(ttftMs)
		}
	}
	return nil, errtext.BadSetting(keys.Scheduler, "unknown value %q (allowed: %s)", name, strings.Join(SchedulerNames(), ", "))
}

// priorityFCFS serves higher priority first, then earlier arrival, then
// lower id (BLIS compares string ids; numeric ids keep arrival order).
type priorityFCFS struct{}

func (priorityFCFS) Order(q []simcore.Waiting) {
	slices.SortStableFunc(q, func(a, b simcore.Waiting) int {
		if a.Priority != b.Priority {
			return cmp.Compare(b.Priority, a.Priority)
		}
		return byArrival(&a, &b)
	})
}

// shortestFirst serves the shortest input first (starvation is possible).
type shortestFirst struct{}

func (shortestFirst) Order(q []simcore.Waiting) {
	slices.SortStableFunc(q, func(a, b simcore.Waiting) int {
		if a.InputLen != b.InputLen {
			return cmp.Compare(a.InputLen, b.InputLen)
		}
		return byArrival(&a, &b)
	})
}

// sloDeadline serves the earliest deadline first, as llm-d's slo-deadline
// ordering does: a request's deadline is its arrival plus its class's TTFT
// target. Equal deadlines keep arrival order, then id. A class without a
// target has no deadline: its requests wait behind every request with
// one, in arrival order.
type sloDeadline struct {
	offset [simcore.NumSLOClasses]simcore.Tick // the class's TTFT target in µs
	has    [simcore.NumSLOClasses]bool         // whether the class has a target
	cmp    func(a, b simcore.Waiting) int      // compare, bound once: Order does not allocate
}

// maxTargetMs bounds the targets slo-deadline accepts, so that arrival
// plus target stays far from overflowing a µs tick.
const maxTargetMs = 1e12

func newSLODeadline(ttftMs simcore.PerClass) (Scheduler, error) {
	if !ttftMs.Given() {
		return nil, errtext.BadSetting(keys.Scheduler, "%s orders by each class's TTFT target, but no class has one "+
			"(targets come from the workload's slo_targets or slo.ttft_target_ms.<class>); without one it would be %s", SLODeadline, FCFS)
	}
	s := &sloDeadline{}
	for c := range s.offset {
		v, ok := ttftMs.Get(simcore.SLOClass(c))
		if !ok {
			continue
		}
		if !(v > 0 && v <= maxTargetMs) {
			return nil, errtext.BadSetting(keys.Member(keys.SLOTTFT, simcore.SLOClass(c).Label()), "must be a number > 0 and at most %g ms for scheduler %s, got %v",
				maxTargetMs, SLODeadline, v)
		}
		s.offset[c], s.has[c] = simcore.Tick(math.Round(v*1000)), true
	}
	s.cmp = s.compare
	return s, nil
}

func (s *sloDeadline) Order(q []simcore.Waiting) { slices.SortStableFunc(q, s.cmp) }

func (s *sloDeadline) compare(a, b simcore.Waiting) int {
	ca, cb := a.SLO.Known(), b.SLO.Known()
	switch ha, hb := s.has[ca], s.has[cb]; {
	case ha && !hb:
		return -1
	case hb && !ha:
		return 1
	case ha:
		if da, db := a.Arrival+s.offset[ca], b.Arrival+s.offset[cb]; da != db {
			return cmp.Compare(da, db)
		}
	}
	return byArrival(&a, &b)
}

func byArrival(a, b *simcore.Waiting) int {
	if a.Arrival != b.Arrival {
		return cmp.Compare(a.Arrival, b.Arrival)
	}
	return cmp.Compare(a.ID, b.ID)
}
