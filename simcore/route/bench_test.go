package route

import (
	"math/rand"
	"testing"

	"optimize/simcore"
	"optimize/simcore/kv"
)

// workload is the study's typical routing load: every request carries one
// shared 32-block system prompt and 16 unique blocks, and the snapshots
// follow the routed requests as they arrive and complete.
type workload struct {
	req   simcore.Request
	snaps []Snapshot
	next  uint64 // stream id of the next request's own blocks
	lcg   uint64 // picks which instance completes a request
}

func newWorkload(instances int) *workload {
	w := &workload{snaps: make([]Snapshot, instances), next: 1 << 32, lcg: 1}
	prompt := make([]uint64, 32)
	for k := range prompt {
		prompt[k] = uint64(k+1) * 0x9e3779b97f4a7c15
	}
	w.req.Content = kv.Content{Prefix: prompt, Input: 48, Total: 48, Shared: 32}
	return w
}

// advance turns req into the next request and completes one request on a
// pseudo-randomly chosen instance.
func (w *workload) advance() {
	w.next++
	w.req.Content.UID = w.next
	w.lcg = w.lcg*6364136223846793005 + 1442695040888963407
	s := &w.snaps[(w.lcg>>33)%uint64(len(w.snaps))]
	s.InFlight = max(s.InFlight-1, 0)
	w.refresh(s)
}

func (w *workload) refresh(s *Snapshot) {
	s.BatchSize = min(s.InFlight, 4)
	s.QueueDepth = s.InFlight - s.BatchSize
	s.KVUtilization = float64(s.InFlight) / 64
}

func (w *workload) route(r Router) int {
	w.advance()
	chosen := r.Route(&w.req, w.snaps)
	w.snaps[chosen].InFlight++
	w.refresh(&w.snaps[chosen])
	return chosen
}

func TestRoute_DoesNotAllocate(t *testing.T) {
	for _, cfg := range []Config{
		{Policy: "weighted"}, // the three default scorers
		{Policy: "weighted", Scorers: []ScorerWeight{{"load-balance", 1}, {"queue-depth", 1}}},
		{Policy: "least-loaded"},
		{Policy: "round-robin"},
	} {
		r := mustNew(t, cfg, 8, rand.New(rand.NewSource(42)))
		w := newWorkload(8)
		// Warm up until every instance's prefix record is full and entries
		// are being recycled: 8 × 10,000 blocks at 16 new blocks a request.
		for range 8 * DefaultPrefixIndexCapacity / 16 * 2 {
			w.route(r)
		}
		if allocs := testing.AllocsPerRun(2000, func() { w.route(r) }); allocs != 0 {
			t.Errorf("%+v: Route allocates %v times per call", cfg, allocs)
		}
	}
}

func BenchmarkRouteWeighted(b *testing.B) {
	r := mustNew(b, Config{Policy: "weighted"}, 8, rand.New(rand.NewSource(42)))
	w := newWorkload(8)
	for range 8 * DefaultPrefixIndexCapacity / 16 * 2 {
		w.route(r)
	}
	b.ReportAllocs()
	for b.Loop() {
		w.route(r)
	}
}

func BenchmarkRouteLeastLoaded(b *testing.B) {
	r := mustNew(b, Config{Policy: "least-loaded"}, 8, rand.New(rand.NewSource(42)))
	w := newWorkload(8)
	b.ReportAllocs()
	for b.Loop() {
		w.route(r)
	}
}

// BenchmarkRouteWeightedSharedOnly routes requests made only of the shared
// prompt: nothing is inserted or evicted, so it measures the scoring and
// recency work alone.
func BenchmarkRouteWeightedSharedOnly(b *testing.B) {
	r := mustNew(b, Config{Policy: "weighted"}, 8, rand.New(rand.NewSource(42)))
	w := newWorkload(8)
	prompt := make([]uint64, 48)
	for k := range prompt {
		prompt[k] = uint64(k+1) * 0x9e3779b97f4a7c15
	}
	shared := simcore.Request{Content: kv.Content{Prefix: prompt, Input: 48, Total: 48, Shared: 48}}
	route := func() {
		w.advance()
		chosen := r.Route(&shared, w.snaps)
		w.snaps[chosen].InFlight++
		w.refresh(&w.snaps[chosen])
	}
	for range 1000 {
		route()
	}
	b.ReportAllocs()
	for b.Loop() {
		route()
	}
}
