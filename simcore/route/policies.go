package route

import (
	"math/rand"

	"optimize/simcore"
)

// roundRobin sends request k to instance k mod N. Among a changing set
// (RouteAmong) it either keeps that counter over the set as it is now
// (BLIS) or, resuming, picks the first candidate after the slot it chose
// last, wrapping (subset.go).
type roundRobin struct {
	counter int
	resume  bool
	last    int32 // slot chosen last (resume); -1 before the first
}

func (rr *roundRobin) Route(_ *simcore.Request, snaps []Snapshot, _ simcore.Tick) int {
	target := rr.counter % len(snaps)
	rr.counter++
	return target
}

// tieBreaker picks uniformly among candidates tied for the best value. Like
// BLIS it collects the tied indices in instance order and draws Intn(#tied)
// only when more than one is tied, so the RNG stream advances only on ties.
type tieBreaker struct {
	rng  *rand.Rand // nil: lowest index wins
	tied []int      // scratch, capacity numInstances
}

func (t *tieBreaker) pick() int {
	if len(t.tied) > 1 && t.rng != nil {
		return t.tied[t.rng.Intn(len(t.tied))]
	}
	if len(t.tied) == 0 { // only when every score is NaN; BLIS would panic
		return 0
	}
	return t.tied[0]
}

// leastLoaded picks the minimum EffectiveLoad, ties at random.
type leastLoaded struct{ ties tieBreaker }

func (ll *leastLoaded) Route(_ *simcore.Request, snaps []Snapshot, _ simcore.Tick) int {
	minLoad := snaps[0].EffectiveLoad()
	for i := 1; i < len(snaps); i++ {
		minLoad = min(minLoad, snaps[i].EffectiveLoad())
	}
	ll.ties.tied = ll.ties.tied[:0]
	for i := range snaps {
		if snaps[i].EffectiveLoad() == minLoad {
			ll.ties.tied = append(ll.ties.tied, i)
		}
	}
	return ll.ties.pick()
}

// weighted adds up Σ w_k·clamp01(score_k) per instance, w being the
// configured weights normalised to sum 1 under the blis picker (BLIS) and
// as configured under llm-d's pickers; the picker (pickers.go) chooses.
// Observers then learn the choice.
type weighted struct {
	scorers   []Scorer
	weights   []float64 // index-aligned with scorers
	pick      func(w *weighted, composite []float64) int
	observers []Observer
	mirror    *kvMirror      // the KV-event mirror precise-prefix reads, or nil
	blocks    *requestBlocks // the request's block hashes, for the prefix scorers
	ties      tieBreaker
	dim       []float64 // scratch: one scorer's values
	composite []float64 // scratch: the weighted sum
	slots     []float64 // scratch: a slot scorer's values over every slot (subset.go)
}

// weightedWithKVEvents is the weighted router of a profile that reads the
// KV-event mirror: only it is a KVEventSink, so that the engine reports
// cache changes only to a router that uses them.
type weightedWithKVEvents struct {
	*weighted
	*kvMirror
}

func newWeighted(cfg *Config, n int, rng *rand.Rand) Router {
	profile := cfg.Scorers
	if profile == nil {
		profile = DefaultScorers()
	}
	picker, _ := findPicker(cfg.Picker) // validated by New
	weights := normalisedWeights(profile)
	if !picker.normalise {
		for i, sw := range profile {
			weights[i] = sw.Weight
		}
	}
	w := &weighted{
		weights:   weights,
		pick:      picker.pick,
		ties:      tieBreaker{rng: rng, tied: make([]int, 0, n)},
		dim:       make([]float64, n),
		composite: make([]float64, n),
		slots:     make([]float64, n),
	}
	parts := &profileParts{cfg: cfg, instances: n}
	for _, sw := range profile {
		kind, _ := findScorer(sw.Name) // validated by New
		w.scorers = append(w.scorers, kind.build(parts))
	}
	w.observers, w.mirror, w.blocks = parts.observers, parts.mirror, &parts.blocks
	if w.mirror != nil {
		return weightedWithKVEvents{w, w.mirror}
	}
	return w
}

func (w *weighted) Route(r *simcore.Request, snaps []Snapshot, now simcore.Tick) int {
	if w.mirror != nil {
		w.mirror.catchUp(now)
	}
	w.blocks.begin(r)
	n := len(snaps)
	composite, dim := w.composite[:n], w.dim[:n]
	clear(composite)
	for k, s := range w.scorers {
		s.Score(r, snaps, dim)
		addWeighted(composite, dim, w.weights[k])
	}
	chosen := w.pick(w, composite)
	for _, obs := range w.observers {
		obs.Observe(r, chosen)
	}
	w.blocks.end()
	return chosen
}

// addWeighted adds one scorer's clamped scores times its weight to the
// composite. Accumulated scorer by scorer, instance by instance, in BLIS's
// order, the float sums, and hence exact ties, are bit-identical; the
// explicit float64 conversion forbids fusing into an FMA on any platform.
func addWeighted(composite, dim []float64, weight float64) {
	for i, v := range dim {
		composite[i] += float64(clamp01(v) * weight)
	}
}
