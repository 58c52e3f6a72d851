package cluster

import (
	"optimize/simcore"
	"optimize/simcore/flow"
)

// In-flight eviction (flow_control.in_flight_eviction), as BLIS f90a1e3a
// models it; llm-d has no counterpart. While it is on, every request
// routed whole (not split by P/D) from a sheddable band (priority < 0)
// is tracked from its routing until it leaves. A dispatch attempt that
// reads the pool saturated (≥ 1) while a non-sheddable request waits in
// the gateway queue dispatches nothing and instead pops the most
// evictable tracked request (the lowest band's, then the one dispatched
// last) and evicts it at the same instant, after this instant's routing
// (rankGatewayEvict): it is taken out of its instance's wait queue or
// running batch, its KV blocks and batch slot freed, and it leaves,
// counted as evicted. One still in its queueing delay, not yet on the
// instance, is left alone (but no longer tracked).

// gatewayTrack tracks r, just routed to instance i, for eviction.
func (e *Engine) gatewayTrack(r *simcore.Request, i int) {
	if e.pd != nil {
		if _, split := e.pd.byID[r.ID]; split {
			return // a P/D prefill sub-request: BLIS tracks no split request
		}
	}
	e.gw.tracker.Track(r.ID, flow.Priority(r.SLO), int64(e.now), i)
}

// gatewayEvictOne is the eviction trigger's action: the most evictable
// tracked request is evicted at now.
func (e *Engine) gatewayEvictOne() {
	g := e.gw
	id, i, ok := g.tracker.Pop()
	if !ok {
		return
	}
	g.evicting = append(g.evicting, victim{id: id, instance: i})
	e.events.push(event{time: e.now, rank: rankGatewayEvict, kind: evGatewayEvict})
}

// victim is a request whose eviction event is pending.
type victim struct {
	id       int64
	instance int
}

// gatewayEvict is the oldest pending eviction event (they fire in the
// order they were pushed: each at the instant of its trigger).
func (e *Engine) gatewayEvict() {
	g := e.gw
	v := g.evicting[0]
	g.evicting = g.evicting[1:]
	if len(g.evicting) == 0 {
		g.evicting = g.evicting[:0:0]
	}
	r := e.instances[v.instance].evict(v.id)
	if r == nil {
		return
	}
	e.metrics.GatewayEvicted(r)
	e.leave(r, e.now, false)
}

// evict takes request id out of the wait queue, or else the running
// batch, freeing its KV blocks and its in-flight counts, and returns it;
// nil when it is in neither. The step under way keeps its duration; a
// batch left empty with nothing waiting makes the pending step a no-op.
func (in *instance) evict(id int64) *simcore.Request {
	if r, ok := in.wait.Remove(id); ok {
		in.kv.Retire(&r.KV)
		in.release(r)
		return r
	}
	for i, r := range in.running {
		if r.ID != id {
			continue
		}
		in.wake(i)
		in.kv.Retire(&r.KV)
		in.release(r)
		copy(in.running[i:], in.running[i+1:])
		in.running[len(in.running)-1] = nil
		in.running = in.running[:len(in.running)-1]
		copy(in.due[i:], in.due[i+1:])
		in.due = in.due[:len(in.due)-1]
		copy(in.since[i:], in.since[i+1:])
		in.since = in.since[:len(in.since)-1]
		return r
	}
	return nil
}
