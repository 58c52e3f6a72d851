package route

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"optimize/simcore"
	"optimize/simcore/kv"
)

// workload is the study's typical routing load: every request carries one
// shared 32-block system prompt and 16 unique blocks, and the snapshots
// follow the routed requests as they arrive and complete. Requests arrive
// every 50 µs and cycle through the SLO classes and workloadSessions
// sessions; an instance's in-flight tokens are 800 per request.
//
// A router that takes KV events gets them as a cache would send them: the
// prompt once per instance, each request's shareable own blocks when it is
// routed, and their removal recentRequests requests later.
type workload struct {
	req   simcore.Request
	fresh bool // route a copy of req each time instead of req itself
	snaps []Snapshot
	next  uint64 // stream id of the next request's own blocks
	lcg   uint64 // picks which instance completes a request
	now   simcore.Tick

	promptCached []bool
	recent       [recentRequests]cachedRequest // ring of requests whose blocks are cached
	routed       int
}

const recentRequests = 64

// workloadSessions is how many sessions the requests cycle through (request
// k is a round of session k mod workloadSessions).
const workloadSessions = 4096

type cachedRequest struct {
	uid      uint64
	instance int
}

func newWorkload(instances int) *workload {
	w := &workload{snaps: make([]Snapshot, instances), next: 1 << 32, lcg: 1, promptCached: make([]bool, instances)}
	prompt := make([]uint64, 32)
	for k := range prompt {
		prompt[k] = uint64(k+1) * 0x9e3779b97f4a7c15
	}
	w.req.Content = kv.Content{Prefix: prompt, Input: 48, Total: 48, Shared: 32}
	return w
}

// newSessionWorkload is newWorkload with every input block shareable, as
// in a session whose next round re-reads the whole stream: each request's
// own blocks enter the cache and leave it again.
func newSessionWorkload(instances int) *workload {
	w := newWorkload(instances)
	w.req.Content.Shared = w.req.Content.Input
	return w
}

// advance turns req into the next request and completes one request on a
// pseudo-randomly chosen instance.
func (w *workload) advance() {
	w.next++
	w.now += 50
	w.req.Content.UID = w.next
	w.req.SLO = simcore.SLOClass(w.next % uint64(simcore.NumSLOClasses))
	w.req.Session = int32(w.next % workloadSessions)
	w.lcg = w.lcg*6364136223846793005 + 1442695040888963407
	s := &w.snaps[(w.lcg>>33)%uint64(len(w.snaps))]
	s.InFlight = max(s.InFlight-1, 0)
	w.refresh(s)
}

func (w *workload) refresh(s *Snapshot) {
	s.BatchSize = min(s.InFlight, 4)
	s.QueueDepth = s.InFlight - s.BatchSize
	s.InFlightTokens = int64(s.InFlight) * 800
	s.KVUtilization = float64(s.InFlight) / 64
	s.PendingTransferLatency = int64(s.QueueDepth) * 300
}

func (w *workload) route(r Router) int {
	w.advance()
	req := &w.req
	if w.fresh {
		req = new(simcore.Request)
		*req = w.req
	}
	chosen := r.Route(req, w.snaps, w.now)
	w.snaps[chosen].InFlight++
	w.refresh(&w.snaps[chosen])
	if sink, ok := r.(KVEventSink); ok {
		w.reportKV(sink, chosen)
	}
	return chosen
}

// reportKV sends the events the chosen instance's cache would send.
func (w *workload) reportKV(sink KVEventSink, chosen int) {
	c := &w.req.Content
	if !w.promptCached[chosen] {
		w.promptCached[chosen] = true
		for k := range c.Prefix {
			sink.KVEvent(chosen, c.Prefix[k], true, w.now)
		}
	}
	for k := len(c.Prefix); k < int(c.Shared); k++ {
		sink.KVEvent(chosen, c.Hash(k), true, w.now)
	}
	slot := &w.recent[w.routed%recentRequests]
	if w.routed >= recentRequests {
		old := kv.Content{Prefix: c.Prefix, UID: slot.uid}
		for k := len(c.Prefix); k < int(c.Shared); k++ {
			sink.KVEvent(slot.instance, old.Hash(k), false, w.now)
		}
	}
	*slot = cachedRequest{uid: c.UID, instance: chosen}
	w.routed++
}

// strategyProfiles are weighted profiles that combine the KV-pressure,
// SLO-aware and precise-prefix scorers with the default ones, as the
// strategy templates do.
func strategyProfiles() []Config {
	return []Config{
		{Policy: "weighted", Scorers: []ScorerWeight{{"prefix-affinity", 3}, {"queue-depth", 2}, {"kv-pressure", 3}}},
		{Policy: "weighted", Scorers: []ScorerWeight{{"prefix-affinity", 3}, {"queue-depth", 2}, {"kv-pressure-slo", 3}}},
		{Policy: "weighted", Scorers: []ScorerWeight{{"slo-priority", 5}, {"kv-utilization", 2}}},
		{Policy: "weighted", Scorers: []ScorerWeight{{"prefix-affinity", 3}, {"slo-priority", 2}, {"kv-utilization", 2}}},
		{Policy: "weighted", CacheSignalDelay: 1000, Scorers: []ScorerWeight{{"precise-prefix", 3}, {"queue-depth", 2}, {"kv-utilization", 2}}},
		{Policy: "weighted", Scorers: []ScorerWeight{{"precise-prefix", 2}, {"prefix-affinity", 1}, {"queue-depth", 2}}},
	}
}

// fillRecords is a warm-up that fills every instance's prefix record and
// then recycles entries: 8 × 10,000 blocks at 16 new blocks a request, twice.
const fillRecords = 8 * DefaultPrefixIndexCapacity / 16 * 2

// warmRouter builds cfg's router for 8 instances (router seed 42) and routes
// warm requests of a new workload through it.
func warmRouter(tb testing.TB, cfg Config, newLoad func(int) *workload, warm int) (Router, *workload) {
	tb.Helper()
	r := mustNew(tb, cfg, 8, rand.New(rand.NewSource(42)))
	w := newLoad(8)
	for range warm {
		w.route(r)
	}
	return r, w
}

// benchRoute measures routing the workload's requests after warm ones.
func benchRoute(b *testing.B, cfg Config, newLoad func(int) *workload, warm int) {
	r, w := warmRouter(b, cfg, newLoad, warm)
	b.ReportAllocs()
	for b.Loop() {
		w.route(r)
	}
}

func TestRoute_DoesNotAllocate(t *testing.T) {
	configs := []Config{
		{Policy: "weighted"}, // the three default scorers
		{Policy: "weighted", Scorers: []ScorerWeight{{"load-balance", 1}, {"queue-depth", 1}}},
		{Policy: "weighted", Scorers: []ScorerWeight{{"session-affinity", 3}, {"token-load", 1}, {"queue-depth", 2}}},
		{Policy: "least-loaded"},
		{Policy: "round-robin"},
	}
	for _, cfg := range append(configs, strategyProfiles()...) {
		for _, newLoad := range []func(int) *workload{newWorkload, newSessionWorkload} {
			r, w := warmRouter(t, cfg, newLoad, fillRecords)
			if allocs := testing.AllocsPerRun(2000, func() { w.route(r) }); allocs != 0 {
				t.Errorf("%+v, shared %d: Route allocates %v times per call", cfg, w.req.Content.Shared, allocs)
			}
		}
	}
}

// A profile with precise-prefix, and only such a profile, takes KV events.
func TestNew_RouterIsKVEventSinkExactlyWithPrecisePrefix(t *testing.T) {
	for _, cfg := range append(strategyProfiles(), Config{Policy: "weighted"}, Config{Policy: "least-loaded", Scorers: []ScorerWeight{{"precise-prefix", 1}}}) {
		_, isSink := mustNew(t, cfg, 4, nil).(KVEventSink)
		wantSink := cfg.Policy == "weighted" && slices.ContainsFunc(cfg.Scorers, func(s ScorerWeight) bool { return s.Name == "precise-prefix" })
		if isSink != wantSink {
			t.Errorf("%+v: KVEventSink %v, want %v", cfg, isSink, wantSink)
		}
	}
}

func BenchmarkRouteWeighted(b *testing.B) {
	benchRoute(b, Config{Policy: "weighted"}, newWorkload, fillRecords)
}

func BenchmarkRouteLeastLoaded(b *testing.B) {
	benchRoute(b, Config{Policy: "least-loaded"}, newWorkload, 0)
}

// BenchmarkRouteWeightedSharedOnly routes requests made only of the shared
// prompt: nothing is inserted or evicted, so it measures the scoring and
// recency work alone.
func BenchmarkRouteWeightedSharedOnly(b *testing.B) {
	r, w := warmRouter(b, Config{Policy: "weighted"}, newWorkload, 0)
	prompt := make([]uint64, 48)
	for k := range prompt {
		prompt[k] = uint64(k+1) * 0x9e3779b97f4a7c15
	}
	shared := simcore.Request{Content: kv.Content{Prefix: prompt, Input: 48, Total: 48, Shared: 48}}
	route := func() {
		w.advance()
		chosen := r.Route(&shared, w.snaps, w.now)
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

// BenchmarkRoutePrecisePrefix routes session requests (every block
// shareable) with llm-d's precise profile, feeding the KV events a cache
// would send: 16 stores and 16 removals a request, seen 1 ms late. Event
// queueing and applying are included.
func BenchmarkRoutePrecisePrefix(b *testing.B) {
	for _, delay := range []simcore.Tick{0, 1000} {
		b.Run(fmt.Sprintf("delay=%dus", delay), func(b *testing.B) {
			cfg := Config{Policy: "weighted", CacheSignalDelay: delay,
				Scorers: []ScorerWeight{{"precise-prefix", 2}, {"queue-depth", 1}, {"kv-utilization", 1}}}
			benchRoute(b, cfg, newSessionWorkload, 10000)
		})
	}
}

// BenchmarkRouteSLOScorers routes with the SLO-aware profiles
// (kv-pressure-slo and slo-priority).
func BenchmarkRouteSLOScorers(b *testing.B) {
	for _, cfg := range strategyProfiles()[1:4] {
		b.Run(cfg.Scorers[0].Name+"+"+cfg.Scorers[len(cfg.Scorers)-1].Name, func(b *testing.B) {
			benchRoute(b, cfg, newWorkload, fillRecords)
		})
	}
}

// BenchmarkRouteLLMDDefault routes with llm-d's default profile
// (queue-scorer 2, kv-cache-utilization-scorer 2, prefix-cache-scorer 3 on
// llm-d's approximate index, max-score-picker) on the workload of
// BenchmarkRouteWeighted.
func BenchmarkRouteLLMDDefault(b *testing.B) {
	benchRoute(b, Config{Policy: "weighted", Picker: "max-score-picker", KVBlockSize: 16, KVBlocksPerInstance: 100000,
		Scorers: []ScorerWeight{{"queue-scorer", 2}, {"kv-cache-utilization-scorer", 2}, {"prefix-cache-scorer", 3}}}, newWorkload, fillRecords)
}
