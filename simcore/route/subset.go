package route

import (
	"fmt"

	"optimize/simcore"
)

// Routing among some of the instances. When instances come and go (an
// autoscaler adds instances and drains others), the router is built for
// every instance slot the run may use and routes each request among the
// routable ones only, as BLIS routes among the routable snapshots in
// instance order: a scorer that normalises over the instances (queue
// depth, KV utilisation) normalises over those, round-robin counts over
// them, and ties are drawn among them. A record kept per instance (a
// prefix index, the KV-event mirror, a session's instance) stays keyed by
// the instance's slot, so an instance keeps what the router learnt about
// it while it is not routable.

// Subset is a router that can route among a subset of its instances.
type Subset interface {
	// RouteAmong returns the position in ids of the instance chosen for
	// r. ids are the slots of the candidates, ascending, and snaps their
	// snapshots, index-aligned with ids; len(ids) ≥ 1.
	RouteAmong(r *simcore.Request, snaps []Snapshot, ids []int32, now simcore.Tick) int
}

// slotScorer is a scorer whose value for an instance comes from what it
// recorded about that instance alone (its snapshots are not read): it is
// scored over every slot and the candidates' values are gathered.
type slotScorer interface {
	Scorer
	slotted()
}

func (*precisePrefix) slotted()    {}
func (*prefixAffinity) slotted()   {}
func (*llmdPrefixScorer) slotted() {}
func (*sessionAffinity) slotted()  {}

// CheckSubset reports the one-line reason cfg's router cannot route among
// a subset of its instances, or nil: no-hit-lru-scorer ranks the
// instances by the order it last chose them in, which has no meaning once
// the set changes.
func CheckSubset(cfg Config) error {
	if cfg.Policy != "weighted" {
		return nil
	}
	for _, sw := range cfg.Scorers {
		if sw.Name == "no-hit-lru-scorer" {
			return fmt.Errorf("routing scorer %s: not modelled while instances come and go (the autoscaler); choose another scorer", sw.Name)
		}
	}
	return nil
}

// RouteAmong is round-robin among the candidates. BLIS f90a1e3a takes
// counter mod len(ids) over the routable instances as they are now, so
// when one joins or leaves the position jumps: an instance may be
// skipped or chosen twice running. Resuming, the pick is the first
// candidate whose slot follows the one chosen last (the lowest slot after
// the highest): every routable instance gets its turn once per round
// whatever joins or leaves, and over a fixed set the picks are Route's.
func (rr *roundRobin) RouteAmong(r *simcore.Request, snaps []Snapshot, ids []int32, now simcore.Tick) int {
	if !rr.resume {
		return rr.Route(r, snaps, now)
	}
	k := 0
	for k < len(ids) && ids[k] <= rr.last {
		k++
	}
	if k == len(ids) {
		k = 0
	}
	rr.last = ids[k]
	return k
}

func (ll *leastLoaded) RouteAmong(r *simcore.Request, snaps []Snapshot, _ []int32, now simcore.Tick) int {
	return ll.Route(r, snaps, now)
}

// RouteAmong is Route over the candidates: a scorer of per-instance records
// scores every slot and the candidates' values are taken; the others score
// the candidates' snapshots. Observers learn the chosen slot.
func (w *weighted) RouteAmong(r *simcore.Request, snaps []Snapshot, ids []int32, now simcore.Tick) int {
	if w.mirror != nil {
		w.mirror.catchUp(now)
	}
	w.blocks.begin(r)
	n := len(snaps)
	composite, dim := w.composite[:n], w.dim[:n]
	clear(composite)
	for k, s := range w.scorers {
		switch s := s.(type) {
		case slotScorer:
			all := w.slots[:cap(w.slots)]
			s.Score(r, nil, all)
			for i, id := range ids {
				dim[i] = all[id]
			}
		case *sloPriority:
			s.scoreAmong(r, snaps, ids, dim, w.slots[:cap(w.slots)])
		default:
			s.Score(r, snaps, dim)
		}
		addWeighted(composite, dim, w.weights[k])
	}
	chosen := w.pick(w, composite)
	for _, obs := range w.observers {
		obs.Observe(r, int(ids[chosen]))
	}
	w.blocks.end()
	return chosen
}

// scoreAmong is Score over the candidates: the prefix record's values by
// slot, the queue-depth scores over the candidates.
func (s *sloPriority) scoreAmong(r *simcore.Request, snaps []Snapshot, ids []int32, out, all []float64) {
	w := s.blend[r.SLO.Known()]
	load := s.load[:len(snaps)]
	queueDepth{}.Score(r, snaps, load)
	s.affinity.Score(r, nil, all)
	for i, id := range ids {
		out[i] = w*all[id] + (1-w)*load[i]
	}
}
