package metrics

import (
	"slices"

	"optimize/simcore"
)

const unset = -1

// Collector accumulates per-request outcomes. Request ids must arrive in
// order 0, 1, 2, ... (the engine's pop order).
type Collector struct {
	class []simcore.SLOClass
	state []uint8 // outcome per request
	ttft  column  // unset if prefill never finished
	e2e   column  // unset unless completed
	sched column  // from arrival to the (last) admission into a batch
	// gateway: flow control is on; gwDelay holds each request's wait in
	// the gateway queue, set when it was dispatched to routing.
	gateway bool
	gwDelay column
	// served counts the output tokens requested by each class's completed
	// requests (what Jain's index compares).
	served [simcore.NumSLOClasses]int64
	// targets are the run's latency targets; met counts, per class, the
	// completed requests that met them.
	targets Targets
	met     [simcore.NumSLOClasses]int64

	itl []valueCount // per step that produced decode tokens: its ITL, and the tokens

	scratch []int64 // Summarize: one distribution's values

	// postDecode is added once to the E2E of every completed request with
	// output (the latency model's post-decode overhead, µs).
	postDecode int64

	outputTokens int64 // see atCompletion
	inputTokens  int64
	preemptions  int64
	// atCompletion: output tokens are counted when a request completes,
	// all of them (the prefill's first token included), and never for a
	// request that does not complete (BLIS's August 2026 era). Otherwise
	// each decode step counts its tokens: output − 1 per request, a
	// preempted request's re-decodes again, unfinished requests' too.
	atCompletion bool

	// sink, when set (OnCompleted), is handed each completed request's
	// record, written into rec (one record reused).
	sink func(*RequestRecord)
	rec  RequestRecord
}

// CountOutputAtCompletion switches output-token counting to completion
// time (see Collector.atCompletion).
func (c *Collector) CountOutputAtCompletion() { c.atCompletion = true }

const (
	inFlight uint8 = iota
	completed
	rejected
	dropped
	// A request that left through flow control's gateway queue without
	// being served: rejected by a full band or queue, shed for a higher
	// priority, expired (TTL), or evicted from its instance.
	gwRejected
	gwShed
	gwExpired
	gwEvicted
)

// Reserve makes room for n requests' records, so that a run of a known
// size does not copy them as they grow.
func (c *Collector) Reserve(n int) {
	c.class = slices.Grow(c.class, n)
	c.state = slices.Grow(c.state, n)
	c.ttft.reserve(n)
	c.e2e.reserve(n)
	c.sched.reserve(n)
	if c.gateway {
		c.gwDelay.reserve(n)
	}
}

// Arrived registers a request that entered the cluster.
func (c *Collector) Arrived(r *simcore.Request) {
	c.class = append(c.class, r.SLO)
	c.state = append(c.state, inFlight)
	c.ttft.appendUnset()
	c.e2e.appendUnset()
	c.sched.appendUnset()
	if c.gateway {
		c.gwDelay.appendUnset()
	}
}

// Rejected records a request refused by admission.
func (c *Collector) Rejected(r *simcore.Request) { c.state[r.ID] = rejected }

// Dropped records a request that can never fit its instance.
func (c *Collector) Dropped(r *simcore.Request) { c.state[r.ID] = dropped }

// Enqueued counts the request's input tokens (full input, cached or not).
func (c *Collector) Enqueued(r *simcore.Request) { c.inputTokens += int64(r.InputLen) }

// Scheduled records the delay from arrival to admission into a batch; a
// preempted request that is admitted again overwrites it, as in BLIS.
func (c *Collector) Scheduled(r *simcore.Request, now simcore.Tick) {
	c.sched.set(r.ID, now-r.Arrival)
}

// FirstToken records (or, after a preemption, overwrites) the TTFT.
func (c *Collector) FirstToken(r *simcore.Request) { c.ttft.set(r.ID, r.FirstToken) }

// SetPostDecode sets the overhead added once to each E2E (µs).
func (c *Collector) SetPostDecode(us int64) { c.postDecode = us }

// E2E is a completed request's end-to-end latency: TTFT, every ITL, and
// the post-decode overhead when it produced output.
func (c *Collector) E2E(r *simcore.Request) int64 {
	if r.OutputLen > 0 {
		return r.FirstToken + r.ITLSum + c.postDecode
	}
	return r.FirstToken + r.ITLSum
}

// Completed records the end-to-end latency.
func (c *Collector) Completed(r *simcore.Request) {
	c.state[r.ID] = completed
	c.served[r.SLO] += int64(r.OutputLen)
	if c.atCompletion {
		c.outputTokens += int64(r.OutputLen)
	}
	c.e2e.set(r.ID, c.E2E(r))
	if cl := r.SLO.Known(); c.targets.has(cl) && c.targets.meets(r, c.E2E(r)) {
		c.met[cl]++
	}
	if c.sink != nil {
		c.sink(c.record(r))
	}
}

// DecodeStep records one step in which n requests each got a token after
// an inter-token latency of itl µs.
func (c *Collector) DecodeStep(itl int64, n int) {
	if n == 0 {
		return
	}
	if !c.atCompletion {
		c.outputTokens += int64(n)
	}
	c.itl = append(c.itl, valueCount{itl, int64(n)})
}

// Preempted counts one preemption.
func (c *Collector) Preempted() { c.preemptions++ }

// Requests returns the number of requests that arrived.
func (c *Collector) Requests() int { return len(c.state) }

// Counts returns completed, rejected, dropped and still-in-flight
// requests (in flight: queued at the gateway or on an instance, or
// running, when the run ended); the gateway's outcomes are GatewayCounts.
func (c *Collector) Counts() (done, rej, drop, open int) {
	for _, s := range c.state {
		switch s {
		case completed:
			done++
		case rejected:
			rej++
		case dropped:
			drop++
		case gwRejected, gwShed, gwExpired, gwEvicted:
		default:
			open++
		}
	}
	return
}
