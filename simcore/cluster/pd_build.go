package cluster

import (
	"optimize/simcore"
	"optimize/simcore/latency"
	"optimize/simcore/route"
	"optimize/simcore/sched"
)

// assemblePD builds the instances of a P/D cluster (each pool at its TP:
// its latency model and, derived, its KV capacity) and the P/D machinery,
// and wires every instance's cache changes to the routers and the view
// that read them. kvGiven is kv.total_blocks as given (0 = derived).
func (e *Engine) assemblePD(cfg *Config, routing route.Config, kvGiven int64) error {
	p, err := newPD(e, cfg, routing, kvGiven)
	if err != nil {
		return err
	}
	e.pd = p
	for i := range cfg.NumInstances {
		if _, err := e.addPDInstance(cfg.PD.role(i)); err != nil {
			return err
		}
	}
	e.metrics.SetPostDecode(p.byRole[p.roles[p.decodeIDs[0]]].lat.PostDecodeTime())
	return nil
}

// pdRole is what an instance of one pool role is built from: the
// configuration at the pool's TP and the latency model.
type pdRole struct {
	cfg *Config
	lat latency.Model
}

// roleBuild returns (building it once) what an instance of pool role
// role is built from: the pool's TP, and the KV capacity derived at it
// (BLIS f90a1e3a derives a pool's KV at its TP even when kv.total_blocks
// is given; other eras keep a given figure).
func (p *pdState) roleBuild(e *Engine, role uint8) (pdRole, error) {
	if b := p.byRole[role]; b.cfg != nil {
		return b, nil
	}
	icfg := e.cfg
	b := pdRole{cfg: &icfg, lat: e.latency}
	if tp := e.cfg.PD.tpOf(role, e.cfg.TP); tp != e.cfg.TP {
		icfg.TP = tp
		if p.kvGiven == 0 || e.cfg.Era.August() {
			icfg.TotalKVBlocks = 0
			var err error
			if icfg.TotalKVBlocks, err = icfg.KVBlocks(e.world); err != nil {
				return b, err
			}
		}
		shared := false
		for _, o := range p.byRole {
			if o.cfg != nil && o.cfg.TP == tp {
				b.lat, shared = o.lat, true // one model per TP
			}
		}
		if !shared {
			var err error
			if b.lat, err = latency.New(e.world.Spec, tp); err != nil {
				return b, err
			}
		}
	}
	p.byRole[role] = b
	return b, nil
}

// addPDInstance builds the next instance, in pool role role, with its
// snapshot, and wires its cache changes to the pools' routers and the
// decider's view.
func (e *Engine) addPDInstance(role uint8) (*instance, error) {
	p := e.pd
	b, err := p.roleBuild(e, role)
	if err != nil {
		return nil, err
	}
	priority, _ := sched.NewPolicy(e.cfg.Priority)
	i := len(e.instances)
	inst, err := newInstance(i, b.cfg, b.lat, e.scheduler, priority, &e.requests)
	if err != nil {
		return nil, err
	}
	e.instances = append(e.instances, inst)
	e.snaps = append(e.snaps, route.Snapshot{})
	e.refreshed = append(e.refreshed, 0)
	p.roles = append(p.roles, role)
	p.awaiting = append(p.awaiting, 0)
	if e.scale == nil { // an initial instance: in its pools until the autoscaler says otherwise
		p.join(i)
	}
	if p.view != nil {
		p.view.grow(len(e.instances))
	}
	p.hook(e, inst, i)
	return inst, nil
}

// join adds instance i to its pools' member lists.
func (p *pdState) join(i int) {
	if p.roles[i]&roleDecode != 0 {
		p.decodeIDs = append(p.decodeIDs, i)
		p.decodeSlots = append(p.decodeSlots, int32(i))
		p.decodeSnaps = append(p.decodeSnaps, route.Snapshot{})
	}
	if p.roles[i]&rolePrefill != 0 {
		p.prefillIDs = append(p.prefillIDs, i)
		p.prefillSlots = append(p.prefillSlots, int32(i))
		p.prefillSnaps = append(p.prefillSnaps, route.Snapshot{})
	}
}

// hook wires instance i's cache changes to the routers of its pools that
// read them (at its index in the pool, or its slot when instances come and
// go) and to the decider's view.
func (p *pdState) hook(e *Engine, inst *instance, i int) {
	type sinkAt struct {
		sink  route.KVEventSink
		local int
	}
	var at []sinkAt
	for _, pool := range []struct {
		r   route.Router
		bit uint8
		ids []int
	}{{p.decodeRouter, roleDecode, p.decodeIDs}, {p.prefillRouter, rolePrefill, p.prefillIDs}} {
		s, ok := pool.r.(route.KVEventSink)
		if !ok || p.roles[i]&pool.bit == 0 {
			continue
		}
		local := i
		if !p.subset {
			local = len(pool.ids) - 1 // i joined its pools last
		}
		at = append(at, sinkAt{s, local})
	}
	view := p.view
	if view == nil && len(at) == 0 {
		return
	}
	inst.kv.Observe(func(h uint64, stored bool) {
		for _, s := range at {
			s.sink.KVEvent(s.local, h, stored, e.now)
		}
		if view != nil {
			view.observe(i, h, stored, e.now)
		}
	})
	if len(at) > 0 {
		inst.kv.ObserveCPU(func(h uint64, stored bool) {
			for _, s := range at {
				s.sink.KVCPUEvent(s.local, h, stored, e.now)
			}
		})
	}
}

// newPD assembles the P/D machinery of engine e: its routers (see
// pdRouters), the decider's view, the transfer's bytes; the instances
// join it as they are built (addPDInstance). With the autoscaler the
// routers are built for every slot the run may use and route among the
// routable members of each pool (setMembers).
func newPD(e *Engine, cfg *Config, routing route.Config, kvGiven int64) (*pdState, error) {
	pd := &cfg.PD
	p := &pdState{cfg: pd, august: cfg.Era.August(), blockSize: cfg.BlockSize, byID: map[int64]int32{},
		kvGiven: kvGiven, subset: cfg.Autoscale.On()}
	var err error
	if p.bytesPerToken, err = pdBytesPerToken(e.world.Spec.Arch, pd.tpOf(rolePrefill, cfg.TP)); err != nil {
		return nil, err
	}
	nDecode, nPrefill := pd.Decode+pd.Shared, pd.Prefill+pd.Shared
	if p.subset {
		nDecode, nPrefill = cfg.routerSlots(), cfg.routerSlots()
	}
	if p.decodeRouter, p.prefillRouter, err = pdRouters(cfg, routing, nDecode, nPrefill); err != nil {
		return nil, err
	}
	if pd.Decider == PDPrefixThreshold {
		p.view = newPDView(0, e.cacheCopied)
	}
	return p, nil
}

// pdRouters builds the pools' routers over their instances (indices
// local to the pool). A pool with scorers of its own gets a weighted
// policy on a stream of its own ("prefill-router", "decode-router");
// otherwise it routes with the cluster's policy on the "router" stream.
// BLIS f90a1e3a then uses one policy object for both pools: one
// round-robin counter (each request advances it twice, which with an
// even pool size pins every request to one instance per pool; the
// August era reproduces it, other eras count per pool) and one
// tie-breaking stream, which the pools' objects share here.
func pdRouters(cfg *Config, routing route.Config, nDecode, nPrefill int) (decode, prefill route.Router, err error) {
	main := simcore.SubsystemRNG(cfg.Seed, "router")
	build := func(scorers []route.ScorerWeight, n int, stream string) (route.Router, error) {
		if scorers == nil {
			return route.New(routing, n, main)
		}
		own := routing
		own.Policy, own.Scorers = "weighted", scorers
		return route.New(own, n, simcore.SubsystemRNG(cfg.Seed, stream))
	}
	pd := &cfg.PD
	if pd.DecodeScorers == nil && pd.PrefillScorers == nil && cfg.BLISQuirks() && isRoundRobin(routing.Policy) {
		r, err := route.New(routing, max(nDecode, nPrefill), main)
		return r, r, err
	}
	if decode, err = build(pd.DecodeScorers, nDecode, "decode-router"); err != nil {
		return nil, nil, err
	}
	prefill, err = build(pd.PrefillScorers, nPrefill, "prefill-router")
	return decode, prefill, err
}

func isRoundRobin(policy string) bool { return policy == "" || policy == route.PolicyNames()[0] }
