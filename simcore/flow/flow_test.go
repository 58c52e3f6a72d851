package flow

import (
	"math"
	"strings"
	"testing"

	"optimize/simcore"
	"optimize/simcore/route"
)

var nextID int64

func req(class simcore.SLOClass) *simcore.Request {
	nextID++
	return &simcore.Request{ID: nextID, SLO: class}
}

// take dequeues at saturation sat and returns the request's ID, 0 for none.
func take(t *testing.T, q *Queue, sat float64) int64 {
	t.Helper()
	e, ok := q.Dequeue(sat)
	if !ok {
		return 0
	}
	return e.Req.ID
}

// Three bands and a usage limit of 0.7: ceilings 1, 1 − 1·0.3/2 = 0.85 and
// 1 − 2·0.3/2 = 0.7. A band stops dispatch at its ceiling before its
// emptiness is looked at, so a saturation of 0.86 holds the sheddable
// band's request behind the empty standard band.
func TestDequeueCeilings(t *testing.T) {
	for i, want := range []float64{1, 0.85, 0.7} {
		if got := Ceiling(i, 3, 0.7); math.Abs(got-want) > 1e-12 {
			t.Errorf("Ceiling(%d, 3, 0.7) = %v, want %v", i, got, want)
		}
	}
	if got := Ceiling(0, 1, 0.5); got != 1 {
		t.Errorf("one band: ceiling %v, want 1", got)
	}
	q := NewQueue(Config{UsageLimit: 0.7})
	crit, std, shed := req(simcore.SLOCritical), req(simcore.SLOStandard), req(simcore.SLOSheddable)
	for _, r := range []*simcore.Request{crit, std, shed} {
		if o, _ := q.Enqueue(r, "t", 0); o != Enqueued {
			t.Fatalf("enqueue %d: %v", r.ID, o)
		}
	}
	if q.Bands() != 3 {
		t.Fatalf("%d bands, want 3", q.Bands())
	}
	steps := []struct {
		sat  float64
		want int64
	}{
		{1.0, 0},        // at the top ceiling nothing leaves
		{0.99, crit.ID}, // below it the highest band
		{0.86, 0},       // critical is empty, standard's ceiling 0.85 stops
		{0.84, std.ID},
		{0.75, 0}, // sheddable's ceiling is 0.7
		{0.69, shed.ID},
		{0, 0}, // empty
	}
	for i, s := range steps {
		if got := take(t, q, s.sat); got != s.want {
			t.Errorf("step %d at saturation %v: took %d, want %d", i, s.sat, got, s.want)
		}
	}
	if q.Bands() != 3 {
		t.Errorf("bands are kept when empty: %d, want 3", q.Bands())
	}
}

// With the usage limit at 1 every ceiling is 1: strict priority across
// bands, whatever was enqueued first.
func TestStrictPriorityAcrossBands(t *testing.T) {
	q := NewQueue(Config{DispatchOrder: OrderFIFO})
	bg, batch, crit := req(simcore.SLOBackground), req(simcore.SLOBatch), req(simcore.SLOCritical)
	for _, r := range []*simcore.Request{bg, batch, crit} {
		q.Enqueue(r, "t", 0)
	}
	for _, want := range []int64{crit.ID, batch.ID, bg.ID} {
		if got := take(t, q, 0.99); got != want {
			t.Errorf("took %d, want %d", got, want)
		}
	}
}

// Tenants a, b, b, c in one band, enqueued in that order. global-strict
// serves the oldest head: a1 b1 b2 c1. round-robin serves tenants in name
// order after the last served: a1 (a's flow empties and goes), then the
// cursor a names no flow, so it starts again at the first, b: b1, then c1,
// then b2.
func TestFairness(t *testing.T) {
	for _, c := range []struct {
		policy string
		want   string
	}{{FairGlobalStrict, "a1 b1 b2 c1"}, {FairRoundRobin, "a1 b1 c1 b2"}} {
		q := NewQueue(Config{Fairness: c.policy})
		names := map[int64]string{}
		for _, n := range []string{"a1", "b1", "b2", "c1"} {
			r := req(simcore.SLOStandard)
			names[r.ID] = n
			q.Enqueue(r, n[:1], 0)
		}
		var got []string
		for q.Len() > 0 {
			got = append(got, names[take(t, q, 0)])
		}
		if s := strings.Join(got, " "); s != c.want {
			t.Errorf("%s: %s, want %s", c.policy, s, c.want)
		}
	}
}

// Round-robin keeps its rotation while the flows stay: a1 a2 b1 b2 gives
// a1 b1 a2 b2.
func TestRoundRobinRotates(t *testing.T) {
	q := NewQueue(Config{Fairness: FairRoundRobin})
	names := map[int64]string{}
	for _, n := range []string{"a1", "a2", "b1", "b2"} {
		r := req(simcore.SLOCritical)
		names[r.ID] = n
		q.Enqueue(r, n[:1], 0)
	}
	var got []string
	for q.Len() > 0 {
		got = append(got, names[take(t, q, 0)])
	}
	if s := strings.Join(got, " "); s != "a1 b1 a2 b2" {
		t.Errorf("%s, want a1 b1 a2 b2", s)
	}
}

// Per-band capacity 2: the third standard request is rejected, a critical
// one still enters. Queue depth 3 then rejects anything; with shedding a
// critical request sheds the newest sheddable entry, and a sheddable one
// sheds nothing (not strictly higher).
func TestCapacityAndShedding(t *testing.T) {
	q := NewQueue(Config{PerBandCapacity: 2})
	q.Enqueue(req(simcore.SLOStandard), "t", 0)
	q.Enqueue(req(simcore.SLOStandard), "t", 0)
	if o, _ := q.Enqueue(req(simcore.SLOStandard), "t", 0); o != Rejected {
		t.Errorf("third standard: %v, want rejected", o)
	}
	if o, _ := q.Enqueue(req(simcore.SLOCritical), "t", 0); o != Enqueued {
		t.Errorf("critical: %v, want enqueued", o)
	}

	q = NewQueue(Config{MaxQueueDepth: 2})
	q.Enqueue(req(simcore.SLOSheddable), "t", 0)
	q.Enqueue(req(simcore.SLOSheddable), "u", 0)
	if o, _ := q.Enqueue(req(simcore.SLOCritical), "t", 0); o != Rejected {
		t.Errorf("full without shedding: %v, want rejected", o)
	}

	q = NewQueue(Config{MaxQueueDepth: 2, QueueShedding: true})
	old, newest := req(simcore.SLOSheddable), req(simcore.SLOSheddable)
	q.Enqueue(old, "u", 0)
	q.Enqueue(newest, "t", 0)
	o, victim := q.Enqueue(req(simcore.SLOCritical), "t", 0)
	if o != Shed || victim != newest {
		t.Errorf("critical into a full queue: %v, victim %v, want shed of the newest (%d)", o, victim, newest.ID)
	}
	if o, _ := q.Enqueue(req(simcore.SLOSheddable), "t", 0); o != Rejected {
		t.Errorf("sheddable into a full queue: %v, want rejected", o)
	}
	if q.Len() != 2 {
		t.Errorf("length %d, want 2", q.Len())
	}
}

// slo-deadline: in one flow, a classless request enqueued at 0 (no
// target: never due) and a standard one at 10 µs (target 500 µs: due at
// 510): the standard one leaves first.
func TestSLODeadline(t *testing.T) {
	var targets simcore.PerClass
	targets.V[simcore.SLOStandard], targets.Set[simcore.SLOStandard] = 500, true
	q := NewQueue(Config{DispatchOrder: OrderSLODeadline, SLOTargets: targets})
	none, std := req(simcore.SLONone), req(simcore.SLOStandard)
	q.Enqueue(none, "t", 0)
	q.Enqueue(std, "t", 10)
	if got := take(t, q, 0); got != std.ID {
		t.Errorf("first %d, want the standard request %d", got, std.ID)
	}
	if got := take(t, q, 0); got != none.ID {
		t.Errorf("second %d, want %d", got, none.ID)
	}
}

// A TTL removes a request from the middle of its flow; the rest keep
// their order.
func TestRemove(t *testing.T) {
	q := NewQueue(Config{})
	a, b, c := req(simcore.SLOStandard), req(simcore.SLOStandard), req(simcore.SLOStandard)
	for _, r := range []*simcore.Request{a, b, c} {
		q.Enqueue(r, "t", 0)
	}
	if e, ok := q.Remove(b.ID); !ok || e.Req != b {
		t.Fatalf("remove %d: %v %v", b.ID, e, ok)
	}
	if _, ok := q.Remove(b.ID); ok {
		t.Error("removed twice")
	}
	if x, y := take(t, q, 0), take(t, q, 0); x != a.ID || y != c.ID {
		t.Errorf("left %d %d, want %d %d", x, y, a.ID, c.ID)
	}
}

// Utilization, thresholds 5 and 0.8: instance 0 has 10 waiting and KV
// 0.4, max(10/5, 0.4/0.8) = 2; instance 1 none waiting and KV 0.8,
// max(0, 1) = 1; the mean is 1.5. Concurrency 48 with 30 and 18 in
// flight: 48 / (2 × 48) = 0.5. Never: 0. No instance: 1.
func TestDetectors(t *testing.T) {
	snaps := []route.Snapshot{{QueueDepth: 10, KVUtilization: 0.4, InFlight: 30}, {KVUtilization: 0.8, InFlight: 18}}
	for _, c := range []struct {
		cfg        Config
		want, none float64
	}{
		{Config{Detector: DetectUtilization}, 1.5, 1},
		{Config{Detector: DetectConcurrency, MaxConcurrency: 48}, 0.5, 1},
		{Config{}, 0, 0},
	} {
		cfg := c.cfg.WithDefaults()
		if got := cfg.Saturation(snaps); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", cfg.Detector, got, c.want)
		}
		if got := cfg.Saturation(nil); got != c.none {
			t.Errorf("%s without instances: %v, want %v", cfg.Detector, got, c.none)
		}
	}
}

// Class priorities: critical 4, standard and none 3, batch −1, sheddable
// −2, background −3; sheddable below 0.
func TestPriorities(t *testing.T) {
	want := map[simcore.SLOClass]int{simcore.SLONone: 3, simcore.SLOCritical: 4, simcore.SLOStandard: 3,
		simcore.SLOBatch: -1, simcore.SLOSheddable: -2, simcore.SLOBackground: -3}
	for cl, p := range want {
		if got := Priority(cl); got != p || Sheddable(got) != (p < 0) {
			t.Errorf("%s: priority %d, want %d", cl.Label(), got, p)
		}
	}
}

// Every bad value is a one-line error naming its setting.
func TestValidate(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Detector: "load"}, "flow_control.saturation_detector: unknown detector \"load\" (allowed: never, utilization, concurrency)"},
		{Config{QueueDepthThreshold: math.Inf(1)}, "flow_control.queue_depth_threshold: must be a finite number > 0, got +Inf"},
		{Config{UsageLimit: 1.5}, "flow_control.usage_limit_threshold: must be in (0, 1], got 1.5"},
		{Config{Fairness: "fair"}, "flow_control.fairness_policy: unknown policy \"fair\" (allowed: global-strict, round-robin)"},
		{Config{PerBandCapacity: -1}, "flow_control.per_band_capacity: must be ≥ 0 (0 = unlimited), got -1"},
	} {
		if err := c.cfg.Validate(); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %s", c.cfg, err, c.want)
		}
	}
	if err := (Config{}).Validate(); err != nil {
		t.Errorf("zero config: %v", err)
	}
}

// The tracker pops the lowest band first, then the request dispatched
// last; it ignores non-sheddable bands and forgets untracked requests.
func TestTrackerOrder(t *testing.T) {
	tr := NewTracker()
	tr.Track(1, Priority(simcore.SLOSheddable), 100, 0)
	tr.Track(2, Priority(simcore.SLOSheddable), 300, 1)
	tr.Track(3, Priority(simcore.SLOBackground), 50, 2)
	tr.Track(4, Priority(simcore.SLOCritical), 400, 3) // not sheddable
	tr.Track(5, Priority(simcore.SLOBatch), 500, 0)
	tr.Track(6, Priority(simcore.SLOSheddable), 200, 1)
	tr.Untrack(2)
	tr.Untrack(4) // never tracked: ignored
	if tr.Len() != 4 {
		t.Fatalf("tracking %d, want 4", tr.Len())
	}
	for _, want := range []struct {
		id       int64
		instance int
	}{{3, 2}, {6, 1}, {1, 0}, {5, 0}} {
		id, i, ok := tr.Pop()
		if !ok || id != want.id || i != want.instance {
			t.Fatalf("popped %d on %d (ok %v), want %d on %d", id, i, ok, want.id, want.instance)
		}
	}
	if _, _, ok := tr.Pop(); ok {
		t.Fatal("popped from an empty tracker")
	}
}
