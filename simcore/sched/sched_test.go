package sched

import (
	"slices"
	"strings"
	"testing"

	"optimize/simcore"
)

// slo-deadline serves the earliest arrival + class TTFT target first;
// equal deadlines keep arrival order, then id; a class without a target
// waits behind every class with one, in arrival order.
func TestSLODeadline_OrdersByArrivalPlusClassTarget(t *testing.T) {
	// critical 200 ms, standard 300 ms, sheddable 1 s; batch, background
	// and unclassed have no target.
	s, err := NewScheduler(SLODeadline, perClass("critical=200,standard=300,sheddable=1000"))
	if err != nil {
		t.Fatal(err)
	}
	w := func(id int64, c simcore.SLOClass, arrivalMs simcore.Tick) simcore.Waiting {
		return *req(id, c, arrivalMs*ms)
	}
	tests := []struct {
		name string
		q    []simcore.Waiting
		want []int64
	}{
		{"a later critical overtakes an earlier sheddable",
			[]simcore.Waiting{w(1, simcore.SLOSheddable, 0), w(2, simcore.SLOCritical, 500)},
			[]int64{2, 1}}, // deadlines 1000 and 700 ms
		{"but not one whose deadline is earlier",
			[]simcore.Waiting{w(1, simcore.SLOSheddable, 0), w(2, simcore.SLOCritical, 900)},
			[]int64{1, 2}}, // 1000 and 1100 ms
		{"a critical 60 ms behind a standard goes first",
			[]simcore.Waiting{w(4, simcore.SLOStandard, 0), w(3, simcore.SLOCritical, 60)},
			[]int64{3, 4}}, // 260 and 300 ms
		{"one 120 ms behind does not",
			[]simcore.Waiting{w(3, simcore.SLOCritical, 120), w(4, simcore.SLOStandard, 0)},
			[]int64{4, 3}}, // 320 and 300 ms
		{"equal deadlines: earlier arrival first",
			[]simcore.Waiting{w(5, simcore.SLOCritical, 100), w(6, simcore.SLOStandard, 0)},
			[]int64{6, 5}}, // both 300 ms
		{"equal deadline and arrival: lower id first",
			[]simcore.Waiting{w(8, simcore.SLOStandard, 10), w(7, simcore.SLOStandard, 10)},
			[]int64{7, 8}},
		{"no target: behind every target, however late",
			[]simcore.Waiting{w(9, simcore.SLOBatch, 0), w(10, simcore.SLONone, 1), w(11, simcore.SLOSheddable, 100_000)},
			[]int64{11, 9, 10}},
		{"no target among themselves: arrival, then id",
			[]simcore.Waiting{w(14, simcore.SLOBackground, 5), w(13, simcore.SLOBatch, 5), w(12, simcore.SLONone, 0)},
			[]int64{12, 13, 14}},
		{"out-of-range class reads as unclassed",
			[]simcore.Waiting{w(15, simcore.SLOClass(200), 0), w(16, simcore.SLOSheddable, 50)},
			[]int64{16, 15}},
		{"mixed queue",
			[]simcore.Waiting{
				w(1, simcore.SLOSheddable, 0),  // 1000
				w(2, simcore.SLOBatch, 0),      // none
				w(3, simcore.SLOStandard, 20),  // 320
				w(4, simcore.SLOCritical, 120), // 320, arrived later than 3
				w(5, simcore.SLOCritical, 50),  // 250
				w(6, simcore.SLOStandard, 800), // 1100
			},
			[]int64{5, 3, 4, 1, 6, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := slices.Clone(tc.q)
			s.Order(q)
			if got := ids(q); !slices.Equal(got, tc.want) {
				t.Fatalf("order %v, want %v", got, tc.want)
			}
		})
	}
}

// Targets are ms; deadlines are µs: 0.5 ms is 500 µs.
func TestSLODeadline_TargetsAreMilliseconds(t *testing.T) {
	s, err := NewScheduler(SLODeadline, perClass("critical=0.5ms,standard=1ms"))
	if err != nil {
		t.Fatal(err)
	}
	q := []simcore.Waiting{*req(1, simcore.SLOStandard, 0), *req(2, simcore.SLOCritical, 499)}
	s.Order(q)
	if got := ids(q); !slices.Equal(got, []int64{2, 1}) { // 999 µs before 1000 µs
		t.Fatalf("order %v, want [2 1]", got)
	}
	q = []simcore.Waiting{*req(1, simcore.SLOStandard, 0), *req(2, simcore.SLOCritical, 501)}
	s.Order(q)
	if got := ids(q); !slices.Equal(got, []int64{1, 2}) { // 1000 µs before 1001 µs
		t.Fatalf("order %v, want [1 2]", got)
	}
}

// Without any class target slo-deadline would silently be fcfs: an error
// naming the setting and where targets come from.
func TestSLODeadline_NeedsATarget(t *testing.T) {
	_, err := NewScheduler(SLODeadline, simcore.PerClass{})
	if err == nil || !strings.HasPrefix(err.Error(), "scheduler: slo-deadline") ||
		!strings.Contains(err.Error(), "slo.ttft_target_ms.<class>") || !strings.Contains(err.Error(), "slo_targets") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v", err)
	}
	for _, name := range []string{FCFS, PriorityFCFS, SJF} {
		if _, err := NewScheduler(name, simcore.PerClass{}); err != nil {
			t.Errorf("%s without targets: %v", name, err)
		}
	}
	if _, err := NewScheduler("edf", simcore.PerClass{}); err == nil || err.Error() !=
		`scheduler: unknown value "edf" (allowed: fcfs, priority-fcfs, sjf, slo-deadline)` {
		t.Fatalf("unknown scheduler: %v", err)
	}
}

func TestSLODeadline_OrderDoesNotAllocate(t *testing.T) {
	s, err := NewScheduler(SLODeadline, perClass("critical=200,standard=300"))
	if err != nil {
		t.Fatal(err)
	}
	q := make([]simcore.Waiting, 64)
	for i := range q {
		q[i] = *req(int64(i), simcore.SLOClass(i%int(simcore.NumSLOClasses)), simcore.Tick(len(q)-i)*ms)
	}
	if allocs := testing.AllocsPerRun(100, func() { s.Order(q) }); allocs != 0 {
		t.Fatalf("Order allocates %v times per call", allocs)
	}
}

func ids(q []simcore.Waiting) []int64 {
	out := make([]int64, len(q))
	for i := range q {
		out[i] = q[i].ID
	}
	return out
}
