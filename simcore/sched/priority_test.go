package sched

import (
	"math"
	"strings"
	"testing"

	"optimize/simcore"
)

const ms = simcore.Tick(1000) // µs per ms

// req builds a waiting request of class c that arrived at the given time.
func req(id int64, c simcore.SLOClass, arrival simcore.Tick) *simcore.Waiting {
	return &simcore.Waiting{ID: id, SLO: c, Arrival: arrival}
}

// serve scores q at now with the policy and orders it with priority-fcfs,
// as the engine does at the start of a step; it returns the ids in order.
// A load-aware policy sees a full queue (its full class gap).
func serve(t *testing.T, cfg PolicyConfig, now simcore.Tick, q ...*simcore.Waiting) []int64 {
	t.Helper()
	p, err := NewPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewScheduler(PriorityFCFS, simcore.PerClass{})
	if err != nil {
		t.Fatal(err)
	}
	if la, ok := p.(LoadAware); ok {
		la.SetLoad(math.MaxInt32)
	}
	for _, r := range q {
		if p != nil {
			r.Priority = p.Priority(r, now)
		}
	}
	items := make([]simcore.Waiting, len(q))
	for i, r := range q {
		items[i] = *r
	}
	s.Order(items)
	ids := make([]int64, len(items))
	for i := range items {
		ids[i] = items[i].ID
	}
	return ids
}

func perClass(pairs string) simcore.PerClass {
	p, err := simcore.ParsePerClass(pairs, true)
	if err != nil {
		panic(err)
	}
	return p
}

func equalIDs(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Requests arrive least urgent class first, so any order other than the
// class order must come from the policy. They carry stale priorities that
// rank them in reverse arrival order (as a hint would): every policy but
// constant rescores them.
func TestClassPolicies_OrderByClassWithPriorityFCFS(t *testing.T) {
	arrivals := []simcore.SLOClass{simcore.SLONone, simcore.SLOBackground, simcore.SLOBatch,
		simcore.SLOSheddable, simcore.SLOStandard, simcore.SLOCritical}
	tests := []struct {
		name string
		cfg  PolicyConfig
		now  simcore.Tick
		want []int64
	}{
		// background and unclassed tie at 0, batch and sheddable at 1: FCFS.
		{"slo-class defaults", PolicyConfig{Name: ByClass}, 0, []int64{5, 4, 2, 3, 0, 1}},
		{"slo-class ignores waiting", PolicyConfig{Name: ByClass}, 3600_000 * ms, []int64{5, 4, 2, 3, 0, 1}},
		{"slo-class base override", PolicyConfig{Name: ByClass, Base: perClass("sheddable=20,critical=-1")},
			0, []int64{3, 4, 2, 0, 1, 5}},
		{"slo-tiered before any threshold", PolicyConfig{Name: SLOTiered}, 5 * ms, []int64{5, 4, 2, 3, 0, 1}},
		{"slo-adaptive at full load is slo-tiered", PolicyConfig{Name: SLOAdaptive}, 5 * ms, []int64{5, 4, 2, 3, 0, 1}},
		{"constant keeps the priorities", PolicyConfig{Name: Constant}, 0, []int64{5, 4, 3, 2, 1, 0}},
		{"slo-based is FCFS", PolicyConfig{Name: SLOBased}, 10 * ms, []int64{0, 1, 2, 3, 4, 5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := make([]*simcore.Waiting, len(arrivals))
			for i, c := range arrivals {
				q[i] = req(int64(i), c, simcore.Tick(i))
				q[i].Priority = float64(100 + i)
			}
			if got := serve(t, tc.cfg, tc.now+simcore.Tick(len(q)), q...); !equalIDs(got, tc.want) {
				t.Fatalf("order %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSLOTiered_UrgencyIsPiecewiseLinear(t *testing.T) {
	custom := PolicyConfig{Name: SLOTiered, AgeWeightPerMs: 0.5,
		Base: perClass("standard=2"), UrgencyThresholdMs: perClass("standard=40ms,critical=1s")}
	tests := []struct {
		name   string
		cfg    PolicyConfig
		class  simcore.SLOClass
		waited simcore.Tick
		want   float64
	}{
		{"critical ages at once", PolicyConfig{Name: SLOTiered}, simcore.SLOCritical, 50 * ms, 10.5},
		{"standard flat until 100 ms", PolicyConfig{Name: SLOTiered}, simcore.SLOStandard, 100 * ms, 5},
		{"standard past 100 ms", PolicyConfig{Name: SLOTiered}, simcore.SLOStandard, 300 * ms, 7},
		{"sheddable flat until 200 ms", PolicyConfig{Name: SLOTiered}, simcore.SLOSheddable, 199 * ms, 1},
		{"sheddable past 200 ms", PolicyConfig{Name: SLOTiered}, simcore.SLOSheddable, 1200 * ms, 11},
		{"background shares sheddable's threshold", PolicyConfig{Name: SLOTiered}, simcore.SLOBackground, 400 * ms, 2},
		{"unclassed ages from arrival", PolicyConfig{Name: SLOTiered}, simcore.SLONone, 100 * ms, 1},
		{"custom slope and threshold", custom, simcore.SLOStandard, 60 * ms, 2 + 0.5*20},
		{"custom threshold holds critical", custom, simcore.SLOCritical, 999 * ms, 10},
		{"custom threshold then slope", custom, simcore.SLOCritical, 1010 * ms, 15},
		{"explicit zero weight never ages", PolicyConfig{Name: SLOTiered, AgeWeightGiven: true}, simcore.SLOSheddable, 3600_000 * ms, 1},
		{"slo-class never ages", PolicyConfig{Name: ByClass}, simcore.SLOCritical, 3600_000 * ms, 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPolicy(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := req(0, tc.class, 7*ms)
			if got := p.Priority(r, 7*ms+tc.waited); math.Abs(got-tc.want) > 1e-9 {
				t.Fatalf("priority after %d µs = %v, want %v", tc.waited, got, tc.want)
			}
		})
	}
}

func TestOvertakeWaitMs_BoundsStarvation(t *testing.T) {
	tests := []struct {
		name      string
		cfg       PolicyConfig
		low, high simcore.SLOClass
		wantMs    float64
		wantOK    bool
	}{
		{"defaults: sheddable over critical at 1.1 s", PolicyConfig{Name: SLOTiered}, simcore.SLOSheddable, simcore.SLOCritical, 1100, true},
		{"defaults: standard over critical", PolicyConfig{Name: SLOTiered}, simcore.SLOStandard, simcore.SLOCritical, 600, true},
		{"defaults: sheddable over standard", PolicyConfig{Name: SLOTiered}, simcore.SLOSheddable, simcore.SLOStandard, 600, true},
		{"tuned: age weight 0.098 per ms, critical base 12.9", PolicyConfig{Name: SLOTiered, AgeWeightPerMs: 0.098, Base: perClass("critical=12.9")},
			simcore.SLOSheddable, simcore.SLOCritical, 200 + 11.9/0.098, true},
		{"custom threshold", PolicyConfig{Name: SLOTiered, AgeWeightPerMs: 1, UrgencyThresholdMs: perClass("sheddable=2s")},
			simcore.SLOSheddable, simcore.SLOCritical, 2009, true},
		{"equal bases: at once", PolicyConfig{Name: SLOTiered}, simcore.SLOBatch, simcore.SLOSheddable, 0, true},
		{"higher base: at once", PolicyConfig{Name: ByClass}, simcore.SLOCritical, simcore.SLOSheddable, 0, true},
		{"slo-class: never", PolicyConfig{Name: ByClass}, simcore.SLOSheddable, simcore.SLOCritical, 0, false},
		{"zero age weight: never", PolicyConfig{Name: SLOTiered, AgeWeightGiven: true}, simcore.SLOSheddable, simcore.SLOCritical, 0, false},
		{"slo-based: at once", PolicyConfig{Name: SLOBased}, simcore.SLOSheddable, simcore.SLOCritical, 0, true},
		{"slo-adaptive: slo-tiered's at full load", PolicyConfig{Name: SLOAdaptive}, simcore.SLOSheddable, simcore.SLOCritical, 1100, true},
		{"slo-adaptive, zero age weight: never at full load", PolicyConfig{Name: SLOAdaptive, AgeWeightGiven: true},
			simcore.SLOSheddable, simcore.SLOCritical, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := OvertakeWaitMs(tc.cfg, tc.low, tc.high)
			if ok != tc.wantOK || math.Abs(got-tc.wantMs) > 1e-9 {
				t.Fatalf("OvertakeWaitMs = %v, %v; want %v, %v", got, ok, tc.wantMs, tc.wantOK)
			}
			checkOvertake(t, tc.cfg, tc.low, tc.high, got, ok)
		})
	}
}

// slo-adaptive's bound holds at every load: a shorter queue only narrows
// the class gap.
func TestOvertakeWaitMs_SLOAdaptiveBoundHoldsAtEveryLoad(t *testing.T) {
	cfg := PolicyConfig{Name: SLOAdaptive, LoadThreshold: 8}
	boundMs, ok := OvertakeWaitMs(cfg, simcore.SLOSheddable, simcore.SLOCritical)
	if !ok {
		t.Fatal("no bound")
	}
	p, err := NewPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for load := range 12 {
		p.(LoadAware).SetLoad(load)
		now := simcore.Tick(math.Ceil(boundMs*1e3)) + 1
		low, high := req(1, simcore.SLOSheddable, 0), req(2, simcore.SLOCritical, now)
		if lp, hp := p.Priority(low, now), p.Priority(high, now); lp < hp {
			t.Fatalf("load %d: sheddable after %v ms scores %v, below a fresh critical's %v", load, boundMs, lp, hp)
		}
		if fresh := req(3, simcore.SLOSheddable, 0); load == 0 && p.Priority(fresh, 0) != p.Priority(high, now) {
			t.Fatalf("empty queue: classes still apart (%v, %v)", p.Priority(fresh, 0), p.Priority(high, now))
		}
	}
}

// checkOvertake serves a class-low request that has waited around the
// bound against a fresh class-high one: it must be behind 1 µs before the
// bound and ahead 1 µs after (the µs either side absorbs float rounding at
// the exact boundary), and never ahead when there is no bound.
func checkOvertake(t *testing.T, cfg PolicyConfig, low, high simcore.SLOClass, boundMs float64, ok bool) {
	t.Helper()
	order := func(waited simcore.Tick) []int64 {
		now := 10*ms + waited
		return serve(t, cfg, now, req(1, low, 10*ms), req(2, high, now))
	}
	if !ok {
		if got := order(24 * 3600_000 * ms); got[0] != 2 {
			t.Fatalf("class %s overtook %s after a day with no bound: %v", low, high, got)
		}
		return
	}
	boundUs := simcore.Tick(math.Ceil(boundMs * 1e3))
	if boundUs > 0 {
		if got := order(boundUs - 1); got[0] != 2 {
			t.Fatalf("class %s ahead of fresh %s before %v ms: %v", low, high, boundMs, got)
		}
	}
	if got := order(boundUs + 1); got[0] != 1 {
		t.Fatalf("class %s still behind fresh %s after %v ms: %v", low, high, boundMs, got)
	}
}

func TestPriorityBridge_HintReplacesClassBase(t *testing.T) {
	tests := []struct {
		name   string
		cfg    PolicyConfig
		class  simcore.SLOClass
		hint   float64
		waited simcore.Tick
		want   float64
	}{
		{"slo-class uses the hint", PolicyConfig{Name: ByClass}, simcore.SLOSheddable, 7, 0, 7},
		{"slo-class without hint uses the class", PolicyConfig{Name: ByClass}, simcore.SLOSheddable, 0, 0, 1},
		{"slo-tiered adds urgency to the hint", PolicyConfig{Name: SLOTiered}, simcore.SLOSheddable, 10, 300 * ms, 11},
		{"slo-based ignores the hint", PolicyConfig{Name: SLOBased}, simcore.SLOSheddable, 7, 2000 * ms, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPolicy(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := req(0, tc.class, 0)
			r.PriorityHint = tc.hint
			if got := p.Priority(r, tc.waited); math.Abs(got-tc.want) > 1e-9 {
				t.Fatalf("priority = %v, want %v", got, tc.want)
			}
		})
	}
	// A hinted sheddable request is served before a critical one.
	shed := req(1, simcore.SLOSheddable, 0)
	shed.PriorityHint = 20
	if got := serve(t, PolicyConfig{Name: ByClass}, 0, req(0, simcore.SLOCritical, 0), shed); got[0] != 1 {
		t.Fatalf("hinted sheddable not first: %v", got)
	}
}

// The router's hint comes from BaseFor: a fresh request must score the
// same with or without it, so the bridge never changes the order by
// itself.
func TestBaseFor_MatchesThePolicyTable(t *testing.T) {
	for _, cfg := range []PolicyConfig{{Name: ByClass}, {Name: SLOTiered, Base: perClass("critical=12.9,batch=3")}} {
		p, err := NewPolicy(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for c := simcore.SLOClass(0); c < simcore.NumSLOClasses; c++ {
			plain, hinted := req(0, c, 0), req(1, c, 0)
			hinted.PriorityHint = BaseFor(cfg, c)
			if a, b := p.Priority(plain, 0), p.Priority(hinted, 0); a != b || a != BaseFor(cfg, c) {
				t.Fatalf("%s %s: plain %v, hinted %v, BaseFor %v", cfg.Name, c.Label(), a, b, BaseFor(cfg, c))
			}
		}
	}
}

func TestNewPolicy_RejectsBadConfig(t *testing.T) {
	nanBase := PolicyConfig{Name: ByClass}
	nanBase.Base.V[simcore.SLOCritical], nanBase.Base.Set[simcore.SLOCritical] = math.NaN(), true
	tests := []struct {
		name    string
		cfg     PolicyConfig
		wantErr string
	}{
		{"unknown name", PolicyConfig{Name: "tiered"}, `priority.policy: unknown value "tiered" (allowed: constant, slo-based, slo-class, slo-tiered, slo-adaptive)`},
		{"negative age weight", PolicyConfig{Name: SLOTiered, AgeWeightPerMs: -0.1}, "priority.age_weight_per_ms: must be a finite number ≥ 0 (priority per ms waited), got -0.1"},
		{"NaN age weight", PolicyConfig{Name: SLOTiered, AgeWeightPerMs: math.NaN()}, "priority.age_weight_per_ms: must be a finite number ≥ 0 (priority per ms waited), got NaN"},
		{"infinite age weight", PolicyConfig{Name: SLOTiered, AgeWeightPerMs: math.Inf(1)}, "priority.age_weight_per_ms: must be a finite number ≥ 0 (priority per ms waited), got +Inf"},
		{"bad weight with an unused policy", PolicyConfig{Name: Constant, AgeWeightPerMs: -1}, "priority.age_weight_per_ms:"},
		{"negative threshold", PolicyConfig{Name: SLOTiered, UrgencyThresholdMs: perClass("sheddable=-5")}, "priority.urgency_threshold_ms.sheddable: must be a finite number ≥ 0 ms, got -5"},
		{"NaN base", nanBase, "priority.base.critical: must be a finite number, got NaN"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewPolicy(tc.cfg)
			if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line starting %q", err, tc.wantErr)
			}
		})
	}
	for _, cfg := range []PolicyConfig{
		{Name: Constant, Base: perClass("critical=3")},
		{Name: SLOBased, UrgencyThresholdMs: perClass("standard=1")},
		{Name: SLOTiered, AgeWeightPerMs: 0, AgeWeightGiven: true},
	} {
		if _, err := NewPolicy(cfg); err != nil {
			t.Errorf("%+v: unexpected error %v", cfg, err)
		}
	}
}

// Rescoring runs for every waiting request at every step.
func TestTieredPriority_AllocationFree(t *testing.T) {
	p, err := NewPolicy(PolicyConfig{Name: SLOTiered})
	if err != nil {
		t.Fatal(err)
	}
	r := req(0, simcore.SLOStandard, 0)
	if n := testing.AllocsPerRun(100, func() { r.Priority = p.Priority(r, 500*ms) }); n != 0 {
		t.Fatalf("%v allocations per call", n)
	}
}

// slo-adaptive separates the classes by the queue length: with a short
// queue a fresh critical request no longer outranks an older sheddable
// one; at the threshold the full gap of slo-tiered applies.
func TestSLOAdaptiveScalesTheGapWithLoad(t *testing.T) {
	p, err := NewPolicy(PolicyConfig{Name: SLOAdaptive, LoadThreshold: 10})
	if err != nil {
		t.Fatal(err)
	}
	la, ok := p.(LoadAware)
	if !ok {
		t.Fatal("slo-adaptive must read the queue length")
	}
	crit := &simcore.Waiting{SLO: simcore.SLOCritical, Arrival: 1000}
	shed := &simcore.Waiting{SLO: simcore.SLOSheddable, Arrival: 0}
	la.SetLoad(0)
	if got := p.Priority(crit, 1000); got != 0 {
		t.Fatalf("empty queue: critical priority %v, want 0 (no class gap)", got)
	}
	la.SetLoad(5)
	if got := p.Priority(crit, 1000); got != 5 {
		t.Fatalf("half load: critical priority %v, want half its base (5)", got)
	}
	la.SetLoad(40)
	if got, want := p.Priority(crit, 1000), 10.0; got != want {
		t.Fatalf("overload: critical priority %v, want the full base %v", got, want)
	}
	if p.Priority(shed, 1000) >= p.Priority(crit, 1000) {
		t.Fatal("at full load a fresh critical request must outrank a young sheddable one")
	}
}

// The age urgency is not scaled with the load, and a router's hint
// replaces the class base before scaling, as in slo-tiered.
func TestSLOAdaptive_ScalesTheBaseOrHintNotTheUrgency(t *testing.T) {
	p, err := NewPolicy(PolicyConfig{Name: SLOAdaptive, LoadThreshold: 10})
	if err != nil {
		t.Fatal(err)
	}
	hinted := req(0, simcore.SLOSheddable, 0)
	hinted.PriorityHint = 20
	tests := []struct {
		name   string
		load   int
		r      *simcore.Waiting
		waited simcore.Tick
		want   float64
	}{
		// Sheddable: base 1, threshold 200 ms, 0.01 per ms past it.
		{"empty queue: urgency alone", 0, req(0, simcore.SLOSheddable, 0), 300 * ms, 1},
		{"half load: half the base plus urgency", 5, req(0, simcore.SLOSheddable, 0), 300 * ms, 0.5 + 1},
		{"full load: slo-tiered", 10, req(0, simcore.SLOSheddable, 0), 300 * ms, 1 + 1},
		{"half load: half the hint", 5, hinted, 0, 10},
		{"half load: half the hint plus urgency", 5, hinted, 400 * ms, 10 + 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p.(LoadAware).SetLoad(tc.load)
			if got := p.Priority(tc.r, tc.waited); math.Abs(got-tc.want) > 1e-9 {
				t.Fatalf("priority = %v, want %v", got, tc.want)
			}
		})
	}
}

// The engine builds a policy per instance: looking the name up in the
// policy table allocates nothing (constant builds no policy at all).
func TestNewPolicy_LookupDoesNotAllocate(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { NewPolicy(PolicyConfig{Name: Constant}) }); n != 0 {
		t.Fatalf("NewPolicy(constant) allocates %v times", n)
	}
}
