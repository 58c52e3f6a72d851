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
func (e *Engine) assemblePD(cfg *Config, routing route.Config, scheduler sched.Scheduler, kvGiven int64) error {
	lats, err := pdLatency(cfg, e.world.Spec, e.latency)
	if err != nil {
		return err
	}
	for i := range cfg.NumInstances {
		icfg := *cfg
		if tp := cfg.PD.tpOf(cfg.PD.role(i), cfg.TP); tp != cfg.TP {
			// BLIS f90a1e3a derives a pool's KV at its TP even when
			// kv.total_blocks is given; other eras keep a given figure.
			icfg.TP = tp
			if kvGiven == 0 || cfg.Era.August() {
				icfg.TotalKVBlocks = 0
				if icfg.TotalKVBlocks, err = icfg.KVBlocks(e.world); err != nil {
					return err
				}
			}
		}
		priority, _ := sched.NewPolicy(cfg.Priority)
		inst, err := newInstance(i, &icfg, lats[i], scheduler, priority, &e.requests)
		if err != nil {
			return err
		}
		e.instances = append(e.instances, inst)
	}
	p, err := newPD(e, cfg, routing)
	if err != nil {
		return err
	}
	e.pd = p
	e.metrics.SetPostDecode(lats[p.decodeIDs[0]].PostDecodeTime())
	type sinkAt struct {
		sink  route.KVEventSink
		local int
	}
	sinks := make([][]sinkAt, cfg.NumInstances)
	for _, pool := range []struct {
		r   route.Router
		ids []int
	}{{p.decodeRouter, p.decodeIDs}, {p.prefillRouter, p.prefillIDs}} {
		if s, ok := pool.r.(route.KVEventSink); ok {
			for k, i := range pool.ids {
				sinks[i] = append(sinks[i], sinkAt{s, k})
			}
		}
	}
	for i, inst := range e.instances {
		view, at := p.view, sinks[i]
		if view == nil && len(at) == 0 {
			continue
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
	return nil
}

// newPD assembles the P/D machinery of engine e: the pools, their
// routers (see pdRouters), the decider's view, the transfer's bytes.
func newPD(e *Engine, cfg *Config, routing route.Config) (*pdState, error) {
	pd := &cfg.PD
	p := &pdState{cfg: pd, august: cfg.Era.August(), blockSize: cfg.BlockSize, byID: map[int64]int32{}}
	for i := range cfg.NumInstances {
		role := pd.role(i)
		if role&roleDecode != 0 {
			p.decodeIDs = append(p.decodeIDs, i)
		}
		if role&rolePrefill != 0 {
			p.prefillIDs = append(p.prefillIDs, i)
		}
	}
	p.decodeSnaps = make([]route.Snapshot, len(p.decodeIDs))
	p.prefillSnaps = make([]route.Snapshot, len(p.prefillIDs))
	var err error
	if p.bytesPerToken, err = pdBytesPerToken(e.world.Spec.Arch, pd.tpOf(rolePrefill, cfg.TP)); err != nil {
		return nil, err
	}
	if p.decodeRouter, p.prefillRouter, err = pdRouters(cfg, routing, len(p.decodeIDs), len(p.prefillIDs)); err != nil {
		return nil, err
	}
	if pd.Decider == PDPrefixThreshold {
		p.view = newPDView(cfg.NumInstances, e.cacheCopied)
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
	if pd.DecodeScorers == nil && pd.PrefillScorers == nil && cfg.Era.August() && isRoundRobin(routing.Policy) {
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

// pdLatency returns the latency model of each instance: the pools' TP.
func pdLatency(cfg *Config, spec latency.Spec, global latency.Model) ([]latency.Model, error) {
	out := make([]latency.Model, cfg.NumInstances)
	byTP := map[int]latency.Model{cfg.TP: global}
	for i := range out {
		tp := cfg.PD.tpOf(cfg.PD.role(i), cfg.TP)
		m, ok := byTP[tp]
		if !ok {
			var err error
			if m, err = latency.New(spec, tp); err != nil {
				return nil, err
			}
			byTP[tp] = m
		}
		out[i] = m
	}
	return out, nil
}
