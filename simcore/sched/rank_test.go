package sched

import (
	"math/rand/v2"
	"testing"

	"optimize/simcore"
)

// TestRankServesAsOrderSorts drives a wait queue kept by each scheduler's
// Rank, under every priority policy, through steps of arrivals, pops and
// front pushes (preemptions), and checks at every step that it hands out
// the requests Order puts first after scoring the whole queue at that
// instant, with the same priorities. Classes, router hints, equal
// arrivals and urgency thresholds crossed mid-run are all drawn.
func TestRankServesAsOrderSorts(t *testing.T) {
	var ttft simcore.PerClass
	ttft.V[1], ttft.Set[1] = 50, true
	ttft.V[3], ttft.Set[3] = 400, true
	for _, name := range SchedulerNames()[1:] { // fcfs (nil) keeps queue order
		for _, pol := range PolicyNames() {
			cfg := PolicyConfig{Name: pol, LoadThreshold: 8}
			checkRank(t, name, cfg, ttft)
		}
	}
}

func checkRank(t *testing.T, name string, cfg PolicyConfig, ttft simcore.PerClass) {
	t.Helper()
	s, err := NewScheduler(name, ttft)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	la, _ := p.(LoadAware)
	var q simcore.WaitQueue
	q.SetOrder(s.Rank(p), p)
	rng := rand.New(rand.NewPCG(7, 11))
	var inQueue []*simcore.Request
	all := map[int64]*simcore.Request{}
	id := int64(0)
	now := simcore.Tick(0)
	served := 0
	for step := 0; step < 400; step++ {
		now += simcore.Tick(rng.IntN(20_000))
		for k := rng.IntN(6); k > 0; k-- {
			id++
			r := &simcore.Request{ID: id, Arrival: now - simcore.Tick(rng.IntN(3))*1000, SLO: simcore.SLOClass(rng.IntN(int(simcore.NumSLOClasses))),
				InputLen: int32(1 + rng.IntN(4)), FirstToken: -1}
			if rng.IntN(4) == 0 {
				r.PriorityHint = float64(rng.IntN(3))
				r.Priority = r.PriorityHint
			}
			q.PushBack(r)
			all[id] = r
			inQueue = append(inQueue, r)
		}
		q.SetClock(now)
		if la != nil {
			la.SetLoad(q.Len())
		}
		// The reference: score every waiting request now, then sort.
		items := make([]simcore.Waiting, len(inQueue))
		for i, r := range inQueue {
			items[i] = simcore.WaitingOf(r)
			if p != nil {
				items[i].Priority = p.Priority(&items[i], now)
			}
		}
		s.Order(items)
		var popped []*simcore.Request
		for k := 0; k < min(rng.IntN(5), len(items)); k++ {
			r := q.PopFront()
			if r.ID != items[k].ID || r.Priority != items[k].Priority {
				t.Fatalf("%s/%s step %d: served %d (priority %v), Order puts %d (priority %v) at %d",
					name, cfg.Name, step, r.ID, r.Priority, items[k].ID, items[k].Priority, k)
			}
			popped = append(popped, r)
			served++
		}
		inQueue = inQueue[:0]
		for i := len(popped); i < len(items); i++ {
			inQueue = append(inQueue, all[items[i].ID])
		}
		// A preemption sends some back.
		for _, r := range popped {
			if rng.IntN(5) == 0 {
				q.PushFront(r)
				inQueue = append(inQueue, r)
			}
		}
	}
	if served < 300 {
		t.Fatalf("%s/%s: only %d served; the test exercises too little", name, cfg.Name, served)
	}
}
