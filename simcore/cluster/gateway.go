package cluster

import (
	"optimize/simcore"
	"optimize/simcore/flow"
)

// gateway is flow control in the engine: with it, admission is the
// enqueue into the gateway queue, and a request goes on to routing only
// when a dispatch attempt takes it. An attempt follows every enqueue and
// every dispatch tick (one each, never on completions); ticks run on a
// fixed grid, every DispatchTick µs from the first, while requests wait.
type gateway struct {
	cfg     flow.Config // defaults filled in
	queue   *flow.Queue
	tenants tenantSource // nil: every request is the tenant "default"
	ticking bool         // a dispatch tick is pending
	// ttl holds the IDs of the requests whose TTL events are pending, in
	// the order the events fire: every request waits the same TTL, so
	// they fire in enqueue order.
	ttl     []int64
	ttlHead int
	// In-flight eviction (evict.go), nil and empty when off: the routed
	// sheddable requests, and the victims whose eviction events are
	// pending, in the order the events fire.
	tracker  *flow.Tracker
	evicting []victim
}

// tenantSource is a Source that knows each client's tenant (a spec's
// tenant_id, a trace's tenant): flow control keeps one flow per tenant.
type tenantSource interface {
	Tenant(client int32) string
}

// defaultTenant is the tenant of a request without one.
const defaultTenant = "default"

func newGateway(cfg flow.Config, src simcore.Source) *gateway {
	g := &gateway{cfg: cfg.WithDefaults(), queue: flow.NewQueue(cfg)}
	g.tenants, _ = src.(tenantSource)
	if cfg.InFlightEviction {
		g.tracker = flow.NewTracker()
	}
	return g
}

func (g *gateway) tenant(r *simcore.Request) string {
	if g.tenants != nil {
		if t := g.tenants.Tenant(r.Client); t != "" {
			return t
		}
	}
	return defaultTenant
}

// gatewayAdmit enqueues r (the snapshots were just refreshed). A request
// its band or the queue refuses leaves; one that gets in may shed a
// victim, starts its TTL, and is followed by one dispatch attempt.
func (e *Engine) gatewayAdmit(r *simcore.Request) {
	g := e.gw
	outcome, victim := g.queue.Enqueue(r, g.tenant(r), e.now)
	switch outcome {
	case flow.Rejected:
		e.metrics.GatewayRejected(r)
		e.leave(r, e.now, false)
		return
	case flow.Shed:
		e.metrics.GatewayShed(victim)
		e.leave(victim, e.now, false)
	}
	if g.cfg.RequestTTL > 0 {
		g.ttl = append(g.ttl, r.ID)
		e.events.push(event{time: e.now + g.cfg.RequestTTL, rank: rankGatewayTTL, kind: evGatewayTTL})
	}
	e.gatewayDispatch()
}

// gatewayDispatch is one dispatch attempt: it keeps the tick going, reads
// the pool's saturation and sends at most one request on to routing, or,
// with in-flight eviction, evicts one (evict.go).
func (e *Engine) gatewayDispatch() {
	g := e.gw
	if g.queue.Len() == 0 {
		return
	}
	if !g.ticking {
		g.ticking = true
		e.events.push(event{time: e.now + g.cfg.DispatchTick, rank: rankGatewayTick, kind: evGatewayTick})
	}
	e.refreshSnapshots()
	sat := g.cfg.Saturation(e.snaps)
	if sat >= 1 && g.tracker != nil && g.tracker.Len() > 0 && g.queue.NonSheddableWaiting() {
		e.gatewayEvictOne() // instead of a dispatch
		return
	}
	entry, ok := g.queue.Dequeue(sat)
	if !ok {
		return
	}
	r := entry.Req
	e.metrics.GatewayDispatched(r, e.now-entry.Enqueued)
	if e.nextAt(e.now, rankRouting) {
		e.route(r, false) // the snapshots were read at this instant
		return
	}
	e.events.push(event{time: e.now, rank: rankRouting, kind: evRouting, slot: e.transit.park(r)})
}

// gatewayTick is the dispatch tick at time at: an attempt, then the next
// tick on the grid while requests wait.
func (e *Engine) gatewayTick(at simcore.Tick) {
	g := e.gw
	e.gatewayDispatch()
	if g.queue.Len() > 0 {
		e.events.push(event{time: at + g.cfg.DispatchTick, rank: rankGatewayTick, kind: evGatewayTick})
		return
	}
	g.ticking = false
}

// gatewayExpire is the oldest pending TTL event: its request leaves if it
// still waits.
func (e *Engine) gatewayExpire() {
	g := e.gw
	id := g.ttl[g.ttlHead]
	g.ttlHead++
	if g.ttlHead >= 1024 && 2*g.ttlHead >= len(g.ttl) {
		n := copy(g.ttl, g.ttl[g.ttlHead:])
		g.ttl, g.ttlHead = g.ttl[:n], 0
	}
	if entry, ok := g.queue.Remove(id); ok {
		e.metrics.GatewayExpired(entry.Req)
		e.leave(entry.Req, e.now, false)
	}
}
