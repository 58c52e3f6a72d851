// Package cluster is the simulator's composition root and event loop: it
// assembles instances (KV cache, wait queue, batch former, scheduler) and
// the cluster-level admission and routing policies from a Config, then
// replays a workload Source on one goroutine with one shared clock.
package cluster

import (
	"optimize/simcore"
	"optimize/simcore/admit"
	"optimize/simcore/latency"
	"optimize/simcore/metrics"
	"optimize/simcore/route"
	"optimize/simcore/sched"
)

// Engine runs one simulation. Build it with New, call Run once.
type Engine struct {
	cfg       Config
	world     latency.Resolved
	src       simcore.Source
	events    eventHeap
	transit   inTransit
	instances []*instance
	snaps     []route.Snapshot
	refreshed []simcore.Tick // last refresh of each instance's periodic signals
	router    route.Router
	admission admit.Policy
	load      admit.Load // what admission reads; Instances is snaps
	latency   latency.Model
	metrics   metrics.Collector
	requests  simcore.RequestPool // every Request of the run, queued ones folded
	now       simcore.Tick
	stepSub   uint8 // event.sub of a step: 1 in the August era
	scheduler sched.Scheduler
	pd        *pdState // prefill/decode disaggregation; nil when off
	// cacheCopied is when the router's (August era) and the P/D decider's
	// views of the prefix caches were last copied (BLIS f90a1e3a's
	// periodic copies, every routing.cache_signal_delay_us at most); nil:
	// no copies (no delay, or no view that reads them).
	cacheCopied *simcore.Tick
	gw          *gateway // flow control; nil when off
	scale       *scaler  // the autoscaler, nil without one (autoscale.go)
}

// OnCompleted hands every completed request's record to sink as it
// completes (metrics.Collector.OnCompleted); call it before Run.
func (e *Engine) OnCompleted(sink func(*metrics.RequestRecord)) { e.metrics.OnCompleted(sink) }

// New resolves cfg's world, validates cfg in it and assembles an engine
// that will replay src.
func New(cfg Config, src simcore.Source) (*Engine, error) {
	world, err := cfg.check()
	if err != nil {
		return nil, err
	}
	// The era given decides the router's defaults (era_defaults.go), before
	// the era in effect replaces it below.
	cfg.Routing = cfg.RoutingInEffect()
	lat, err := latency.New(world.Spec, cfg.TP)
	if err != nil {
		return nil, err
	}
	// From here on the era, the context window, the KV capacity and the
	// snapshot refresh interval are values, derived or given.
	if cfg.MaxModelLen, err = cfg.ContextWindow(world); err != nil {
		return nil, err
	}
	kvGiven := cfg.TotalKVBlocks
	if cfg.TotalKVBlocks, err = cfg.KVBlocks(world); err != nil {
		return nil, err
	}
	cfg.SnapshotRefresh = cfg.EffectiveSnapshotRefresh(world)
	cfg.givenAugust, cfg.eraResolved = cfg.eraGivenAugust(), true
	cfg.Era = cfg.EffectiveEra(world)
	// llm-d's approximate prefix index, auto-tuned, reads the engine's
	// block size and GPU block count.
	routing := cfg.Routing
	routing.KVBlockSize, routing.KVBlocksPerInstance = cfg.BlockSize, cfg.TotalKVBlocks
	routing.RoundRobinResume = !cfg.BLISQuirks()
	var copied *simcore.Tick
	if cfg.Routing.CacheSignalDelay > 0 && (cfg.Era.August() || cfg.PD.Decider == PDPrefixThreshold) {
		copied = new(simcore.Tick)
		if cfg.Era.August() {
			routing.CacheCopied = copied
		}
	}
	router, err := route.New(routing, cfg.routerSlots(), simcore.SubsystemRNG(cfg.Seed, "router"))
	if err != nil {
		return nil, err
	}
	// Admission has a stream of its own (only probabilistic draws from
	// it): no other subsystem's sequence depends on the admission policy.
	admission, err := admit.New(cfg.Admission, simcore.SubsystemRNG(cfg.Seed, "admission"))
	if err != nil {
		return nil, err
	}
	scheduler, err := sched.NewScheduler(cfg.Scheduler, cfg.SLOTTFT)
	if err != nil {
		return nil, err
	}
	if _, err := sched.NewPolicy(cfg.Priority); err != nil {
		return nil, err
	}
	e := &Engine{
		cfg:         cfg,
		world:       world,
		src:         src,
		router:      router,
		admission:   admission,
		latency:     lat,
		scheduler:   scheduler,
		cacheCopied: copied,
	}
	if cfg.Era.August() {
		e.stepSub = 1
		e.metrics.CountOutputAtCompletion()
	}
	if cfg.FlowControl.Enabled {
		e.gw = newGateway(cfg.FlowControl, src)
		e.metrics.EnableGateway()
	}
	e.metrics.SetTargets(metrics.Targets{TTFT: cfg.SLOTTFT, ITL: cfg.SLOITL, E2E: cfg.SLOE2E})
	e.metrics.SetPostDecode(lat.PostDecodeTime())
	if sized, ok := src.(simcore.Sized); ok {
		// A cap is a bound, not a promise (a horizon may end the run
		// first): past a million, the records grow as requests come.
		e.metrics.Reserve(min(max(sized.MaxRequests(), 0), 1<<20))
	}
	if cfg.PD.Enabled() {
		if err := e.assemblePD(&cfg, routing, kvGiven); err != nil {
			return nil, err
		}
	} else {
		for range cfg.NumInstances {
			if _, err := e.addInstance(); err != nil {
				return nil, err
			}
		}
	}
	e.load.Instances = e.snaps
	if cfg.Autoscale.On() {
		if e.scale, err = newScaler(e); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// addInstance builds the next instance (its index is its rank among
// them), with its snapshot, and returns it.
func (e *Engine) addInstance() (*instance, error) {
	// Each instance owns its policy: a load-aware one reads its queue.
	priority, _ := sched.NewPolicy(e.cfg.Priority)
	i := len(e.instances)
	inst, err := newInstance(i, &e.cfg, e.latency, e.scheduler, priority, &e.requests)
	if err != nil {
		return nil, err
	}
	if sink, ok := e.router.(route.KVEventSink); ok {
		// precise-prefix: the router mirrors every instance's prefix index.
		inst.kv.Observe(func(h uint64, stored bool) { sink.KVEvent(i, h, stored, e.now) })
		inst.kv.ObserveCPU(func(h uint64, stored bool) { sink.KVCPUEvent(i, h, stored, e.now) })
	}
	e.instances = append(e.instances, inst)
	e.snaps = append(e.snaps, route.Snapshot{})
	e.refreshed = append(e.refreshed, 0)
	return inst, nil
}

// Run replays the whole workload and returns the summary.
func (e *Engine) Run() metrics.Summary {
	if e.scale != nil {
		e.scale.start(e)
	}
	for e.stepOnce() {
	}
	return e.summarize()
}

// stepOnce handles the next arrival or event; it reports false when nothing
// is left before the horizon.
func (e *Engine) stepOnce() bool {
	at, ok := e.src.Peek()
	// An arrival precedes every event of its time but an instance's
	// loading completing (rank < 0).
	if ok && (e.events.Len() == 0 || at < e.events.top().time || at == e.events.top().time && e.events.top().rank >= 0) {
		if e.pastHorizon(at) {
			return false
		}
		e.now = at
		r := e.requests.Take()
		if !e.src.Pop(r) {
			e.requests.Put(r)
			return false // Peek promised a request: a source bug, end the run
		}
		e.metrics.Arrived(r)
		if e.nextAt(at, rankAdmission) {
			e.admit(r)
		} else {
			e.events.push(event{time: at, rank: rankAdmission, kind: evAdmission, slot: e.transit.park(r)})
		}
		return true
	}
	if e.events.Len() == 0 {
		return false
	}
	ev := e.events.pop()
	if e.pastHorizon(ev.time) {
		return false
	}
	e.now = ev.time
	switch ev.kind {
	case evAdmission:
		e.admit(e.transit.take(ev.slot))
	case evRouting:
		e.route(e.transit.take(ev.slot), true)
	case evQueued:
		e.instances[ev.rank-rankInstance0].enqueue(e, e.transit.take(ev.slot))
		if e.scale != nil {
			e.scale.afterInstanceEvent(e, int(ev.rank-rankInstance0))
		}
	case evStep:
		e.instances[ev.rank-rankInstance0].step(e)
		if e.scale != nil {
			e.scale.afterInstanceEvent(e, int(ev.rank-rankInstance0))
		}
	case evPrefillRouting:
		e.pd.routePrefill(e, e.transit.take(ev.slot))
	case evTransferStart:
		e.pd.transferStart(e, ev.slot)
	case evTransferDone:
		e.pd.transferDone(e, ev.slot)
	case evGatewayTTL:
		e.gatewayExpire()
	case evGatewayTick:
		e.gatewayTick(ev.time)
	case evGatewayEvict:
		e.gatewayEvict()
	default:
		e.scale.handle(e, ev)
	}
	return true
}

// nextAt reports whether an event at the current time with the given rank
// would be the next one handled: no arrival at that time is left and no
// queued event precedes it. Such an event is handled at once instead of
// going through the heap; the order of everything is as if it had.
func (e *Engine) nextAt(now simcore.Tick, rank int32) bool {
	if at, ok := e.src.Peek(); ok && at <= now {
		return false
	}
	if e.events.Len() == 0 {
		return true
	}
	top := e.events.top()
	return top.time > now || (top.time == now && top.rank > rank)
}

// leave tells the source that r left the system at time at and recycles it.
func (e *Engine) leave(r *simcore.Request, at simcore.Tick, completed bool) {
	if e.gw != nil && e.gw.tracker != nil {
		e.gw.tracker.Untrack(r.ID)
	}
	e.src.Done(r, at, completed)
	e.requests.Put(r)
}

func (e *Engine) pastHorizon(t simcore.Tick) bool {
	return e.cfg.Horizon > 0 && t > e.cfg.Horizon
}

// admit asks the admission policy; a rejected request leaves at once.
// With flow control the gateway queue takes the policy's place.
func (e *Engine) admit(r *simcore.Request) {
	e.refreshSnapshots()
	if e.gw != nil {
		e.gatewayAdmit(r)
		return
	}
	var queued int64
	for i := range e.load.Instances {
		queued += int64(e.load.Instances[i].QueueDepth)
	}
	e.load.QueueDepthTotal = queued
	if !e.admission.Admit(r, e.now, &e.load) {
		e.metrics.Rejected(r)
		e.leave(r, e.now, false)
		return
	}
	if e.nextAt(e.now, rankRouting) {
		e.route(r, false) // nothing has happened since the snapshots were read
		return
	}
	e.events.push(event{time: e.now, rank: rankRouting, kind: evRouting, slot: e.transit.park(r)})
}

// route picks the instance; the request reaches its wait queue after the
// α queueing delay, which overlaps freely across requests. refresh says
// whether the snapshots must be read again (not when they were read at
// this instant with nothing handled since).
func (e *Engine) route(r *simcore.Request, refresh bool) {
	if e.pd != nil {
		e.pd.route(e, r, refresh)
		return
	}
	if refresh {
		e.refreshSnapshots()
	}
	i := 0
	if e.scale == nil {
		i = e.router.Route(r, e.snaps, e.now)
	} else if i = e.scale.pick(e, r); i < 0 {
		e.metrics.Rejected(r) // no instance is routable
		e.leave(r, e.now, false)
		return
	}
	e.dispatch(r, i)
}

// dispatch sends r to instance i.
func (e *Engine) dispatch(r *simcore.Request, i int) {
	// Only class-based policies rescore from the hint each step; with any
	// other, a copied hint would stick forever.
	if e.cfg.PriorityBridge && e.cfg.Priority.UsesClassBase() {
		r.PriorityHint = sched.BaseFor(e.cfg.Priority, r.SLO)
	}
	if r.PriorityHint != 0 {
		r.Priority = r.PriorityHint
	}
	r.Instance = int32(i)
	tokens := inFlightTokens(r)
	e.instances[i].inFlight++
	e.instances[i].inFlightTokens += tokens
	e.instances[i].routed++
	e.snaps[i].InFlight++
	e.snaps[i].InFlightTokens += tokens
	at := e.now + e.instances[i].latency.QueueingTime(int64(r.InputLen))
	e.events.push(event{time: at, rank: rankInstance0 + int32(i), kind: evQueued, slot: e.transit.park(r)})
	if e.gw != nil && e.gw.tracker != nil {
		e.gatewayTrack(r, i)
	}
}

// refreshSnapshots re-reads each instance's queue, batch and KV signals,
// at most once per refresh interval when one is set (BLIS's Periodic mode:
// signals read as zero until the first interval elapses). InFlight and
// InFlightTokens are cluster counters and always current.
func (e *Engine) refreshSnapshots() {
	if e.scale != nil {
		e.scale.refresh(e)
	} else {
		for i, inst := range e.instances {
			s := &e.snaps[i]
			s.InFlight, s.InFlightTokens = inst.inFlight, inst.inFlightTokens
			if iv := e.cfg.SnapshotRefresh; iv > 0 {
				if e.now-e.refreshed[i] < iv {
					continue
				}
				e.refreshed[i] = e.now
			}
			inst.fillSnapshot(s)
		}
	}
	if c := e.cacheCopied; c != nil && e.now-*c >= e.cfg.Routing.CacheSignalDelay {
		*c = e.now
	}
}

func (e *Engine) summarize() metrics.Summary {
	var info metrics.RunInfo
	for _, inst := range e.instances {
		end := inst.clock
		if e.cfg.Horizon > 0 {
			end = min(end, e.cfg.Horizon)
		}
		info.Makespan = max(info.Makespan, end)
		info.CacheHitRate += inst.kv.HitRate()
		st := inst.kv.TierStats()
		info.KV.OffloadedBlocks += float64(st.Offloaded)
		info.KV.ReloadedBlocks += float64(st.Reloaded)
		info.KV.TransferMs += float64(st.TransferUs) / 1000
		info.KV.ThrashingRate += inst.kv.ThrashingRate()
	}
	n := float64(len(e.instances))
	info.CacheHitRate /= n
	var routed, most int64
	for _, inst := range e.instances {
		routed, most = routed+inst.routed, max(most, inst.routed)
	}
	if routed > 0 {
		info.RoutingImbalance = float64(most) * n / float64(routed)
	}
	info.KV.ThrashingRate /= n // unweighted mean over instances, as BLIS
	info.GPUs, info.PricePerGPUHour = e.cfg.ClusterCost(e.world)
	if e.pd != nil {
		info.PD = e.pd.counts(e)
	}
	if e.scale != nil {
		return e.scale.summarize(e, info)
	}
	return e.metrics.Summarize(info)
}
