// Package sched orders an instance's wait queue: a priority policy scores
// each waiting request at the start of every step, then a scheduler sorts
// the queue (stably) by its rule. Running requests are never reordered.
package sched

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"optimize/simcore"
)

// Scheduler reorders waiting requests in place; it must sort stably.
type Scheduler interface {
	Order(q []simcore.Waiting)
}

// Scheduler names.
const (
	FCFS         = "fcfs"
	PriorityFCFS = "priority-fcfs"
	SJF          = "sjf"
)

// SchedulerNames lists the accepted --scheduler values.
func SchedulerNames() []string { return []string{FCFS, PriorityFCFS, SJF} }

// NewScheduler returns the named scheduler; fcfs returns nil (no reordering).
func NewScheduler(name string) (Scheduler, error) {
	switch name {
	case FCFS, "":
		return nil, nil
	case PriorityFCFS:
		return priorityFCFS{}, nil
	case SJF:
		return shortestFirst{}, nil
	}
	return nil, fmt.Errorf("--scheduler: unknown value %q (allowed: %s)", name, strings.Join(SchedulerNames(), ", "))
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

func byArrival(a, b *simcore.Waiting) int {
	if a.Arrival != b.Arrival {
		return cmp.Compare(a.Arrival, b.Arrival)
	}
	return cmp.Compare(a.ID, b.ID)
}
