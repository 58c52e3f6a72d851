package simcore

import "optimize/simcore/kv"

// Request is one inference request as the simulator sees it. The workload
// source fills the descriptive fields; the engine owns the rest and resets
// them through Reset before a recycled Request is handed out again.
//
// Every step reads and writes the fields of the first 64 bytes for each
// running request; they are kept together so that a step touches one cache
// line per request. The struct is padded to 192 bytes, three lines, so
// that requests carved from a chunk (or allocated alone, a size class
// whose objects are 64-byte aligned) all start a line; TestRequestLayout
// guards both.
type Request struct {
	// Hot engine state: the step loop's working set.
	Progress  int32    // input tokens processed + output tokens generated
	Computed  int32    // tokens computed once the current step ends
	ITLSum    Tick     // sum of inter-token latencies, µs
	InputLen  int32    // prompt tokens, shared prefix and accumulated context included
	OutputLen int32    // output tokens; completion is by count
	NewTokens int32    // tokens scheduled in the current step
	SLO       SLOClass // SLO class of the client that sent it
	KV        kv.Seq   // blocks held on the instance

	// Content identifies the request's tokens block by block (set by the
	// source): what prefix caching and prefix-affinity routing compare.
	Content kv.Content

	// Descriptive fields, set by the workload source (with InputLen,
	// OutputLen and SLO above).
	ID      int64 // position in arrival order, 0-based
	Arrival Tick  // cluster arrival time

	// Engine state.
	Priority     float64 // scheduling priority, higher is more urgent
	PriorityHint float64 // priority set by the router (0 = none)
	FirstToken   Tick    // TTFT in µs once set (relative to Arrival), -1 before

	Client   int32 // index of the client (or trace tenant) in the spec
	Round    int32 // round within the session, 0-based
	Session  int32 // session id for multi-turn requests, -1 otherwise
	Instance int32 // instance the request was routed to, -1 before
	// Preemptions counts the times the request was evicted from a batch
	// and sent back to its wait queue (vLLM's recompute preemption).
	Preemptions int32
	// Transferred marks a P/D decode sub-request, whose prompt's KV came
	// from its prefill instance: the decode instance admits it with one
	// token's KV, even after a preemption (which then re-prefills it
	// there as a running request, as BLIS f90a1e3a does).
	Transferred bool

	_ [11]byte // to 192 bytes
}

// Reset clears the request so that a source can reuse the struct.
func (r *Request) Reset() {
	*r = Request{Session: -1, Instance: -1, FirstToken: -1}
}

// Tick is simulated time in microseconds.
type Tick = int64

// Sized is a Source that knows an upper bound on the requests it will
// produce (0 = none), so that per-request records can be sized once.
type Sized interface {
	MaxRequests() int
}

// Source produces requests in arrival order. It is pulled lazily by the
// engine so that a million-request workload never sits in memory at once.
// The engine owns every Request: a source fills the one Pop hands it and
// keeps no reference.
type Source interface {
	// Peek returns the arrival time of the next request, if any is known now.
	// A closed-loop source may learn of more requests after Done calls.
	Peek() (Tick, bool)
	// Pop fills r, a reset Request, with the request Peek announced, its ID
	// included; it reports false (leaving r alone) when there is none.
	Pop(r *Request) bool
	// Done tells the source that r has left the system at time at:
	// completed (true) or rejected/dropped (false). The source may schedule
	// the session's next round; r stays the engine's.
	Done(r *Request, at Tick, completed bool)
}
