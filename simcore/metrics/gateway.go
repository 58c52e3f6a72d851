package metrics

import "optimize/simcore"

// Flow control's gateway queue: what happened to requests there, per run
// and per class.

// EnableGateway records gateway outcomes and queue delays (flow control
// is on); call it before the first request arrives.
func (c *Collector) EnableGateway() { c.gateway = true }

// GatewayRejected records a request its full band or queue refused.
func (c *Collector) GatewayRejected(r *simcore.Request) { c.state[r.ID] = gwRejected }

// GatewayShed records a queued request dropped to make room for a
// higher-priority one.
func (c *Collector) GatewayShed(r *simcore.Request) { c.state[r.ID] = gwShed }

// GatewayExpired records a request whose time in the queue ran out.
func (c *Collector) GatewayExpired(r *simcore.Request) { c.state[r.ID] = gwExpired }

// GatewayEvicted records a request evicted from its instance for a
// waiting non-sheddable one; a first token it had stays recorded.
func (c *Collector) GatewayEvicted(r *simcore.Request) { c.state[r.ID] = gwEvicted }

// GatewayDispatched records how long r waited in the queue (µs).
func (c *Collector) GatewayDispatched(r *simcore.Request, wait simcore.Tick) {
	c.gwDelay.set(r.ID, wait)
}

// GatewayNumbers are a run's (or a class's) gateway outcomes, present
// when flow control is on: requests rejected by a full band or queue,
// shed for a higher priority, expired in the queue, evicted from their
// instance, and the mean and P99 wait in the queue of those dispatched.
type GatewayNumbers struct {
	Rejected  *float64 `json:"gateway_rejected,omitempty" unit:"requests"`
	Shed      *float64 `json:"gateway_shed,omitempty" unit:"requests"`
	Expired   *float64 `json:"gateway_expired,omitempty" unit:"requests"`
	Evicted   *float64 `json:"gateway_evicted,omitempty" unit:"requests"`
	DelayMean *float64 `json:"gateway_queue_delay_mean_ms,omitempty" unit:"ms"`
	DelayP99  *float64 `json:"gateway_queue_delay_p99_ms,omitempty" unit:"ms"`
}

// gatewayNumbers counts class cl's (or all classes') gateway outcomes.
func (c *Collector) gatewayNumbers(cl simcore.SLOClass) GatewayNumbers {
	if !c.gateway {
		return GatewayNumbers{}
	}
	var n [gwEvicted + 1]float64
	for i, s := range c.state {
		if cl == allClasses || c.class[i] == cl {
			n[s]++
		}
	}
	d := c.dist(&c.gwDelay, cl)
	ptr := func(v float64) *float64 { return &v }
	return GatewayNumbers{Rejected: ptr(n[gwRejected]), Shed: ptr(n[gwShed]), Expired: ptr(n[gwExpired]),
		Evicted: ptr(n[gwEvicted]), DelayMean: ptr(d.Mean), DelayP99: ptr(d.P99)}
}
