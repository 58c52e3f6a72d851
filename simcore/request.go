package simcore

import "optimize/simcore/kv"

// Request is one inference request as the simulator sees it. The workload
// source fills the descriptive fields; the engine owns the rest and resets
// them through Reset before a recycled Request is handed out again.
//
// Every step reads and writes the fields of the first 64 bytes for each
// running request; they are kept together so that a step touches one cache
// line per request (a Request is allocated 256-byte aligned).
type Request struct {
	// Hot engine state: the step loop's working set.
	Progress  int32 // input tokens processed + output tokens generated
	Computed  int32 // tokens computed once the current step ends
	ITLSum    Tick  // sum of inter-token latencies, µs
	InputLen  int32 // prompt tokens, shared prefix and accumulated context included
	OutputLen int32 // output tokens; completion is by count
	NewTokens int32 // tokens scheduled in the current step
	// SharedBlocks is how many leading entries of Blocks another request
	// may also contain (a group prefix, a session's context). The rest are
	// private: no other request can hit them, so the KV cache keeps them
	// out of its prefix index (only the request itself, after a
	// preemption, may find them again).
	SharedBlocks int32
	KV           kv.Seq // blocks held on the instance

	// Descriptive fields, set by the workload source (with InputLen,
	// OutputLen and SharedBlocks above).
	ID      int64    // position in arrival order, 0-based
	Arrival Tick     // cluster arrival time
	SLO     SLOClass // SLO class of the client that sent it
	Client  int32    // index of the client (or trace tenant) in the spec
	Session int64    // session id for multi-turn requests, -1 otherwise
	Round   int32    // round within the session, 0-based
	// Blocks holds the chained hash of every full block of the request's
	// token sequence, in order: at least the InputLen/blockSize input
	// blocks, and optionally the blocks that its output tokens complete
	// (multi-turn sessions need them: the next round's context starts with
	// them). Read-only once handed to the engine.
	Blocks []uint64
	// InputBlocks is how many leading entries of Blocks cover the input
	// (InputLen / blockSize): the prefix-cache lookups use only those.
	InputBlocks int32

	// Engine state.
	Priority     float64 // scheduling priority, higher is more urgent
	PriorityHint float64 // priority set by the router (0 = none)
	Instance     int32   // instance the request was routed to, -1 before
	FirstToken   Tick    // TTFT in µs once set (relative to Arrival), -1 before
	Preemptions  int32   // times this request was preempted

	// Pads the struct to 256 bytes: Go then allocates it 256-byte aligned,
	// so the hot fields above share one cache line.
	_ [56]byte
}

// Reset clears everything but the capacity of the request's slices so that a
// source can reuse the struct for a new request.
func (r *Request) Reset() {
	blocks, ids, prev := r.Blocks[:0], r.KV.IDs[:0], r.KV.Prev[:0]
	*r = Request{Blocks: blocks, Session: -1, Instance: -1, FirstToken: -1}
	r.KV.IDs, r.KV.Prev = ids, prev
}

// InputHashes returns the hashes of the request's full input blocks.
func (r *Request) InputHashes() []uint64 { return r.Blocks[:r.InputBlocks] }

// InPrefill reports whether the request still has input tokens to process.
func (r *Request) InPrefill() bool { return r.Progress < r.InputLen }

// Tick is simulated time in microseconds.
type Tick = int64

// Source produces requests in arrival order. It is pulled lazily by the
// engine so that a million-request workload never sits in memory at once.
type Source interface {
	// Peek returns the arrival time of the next request, if any is known now.
	// A closed-loop source may learn of more requests after Done calls.
	Peek() (Tick, bool)
	// Pop removes and returns the request Peek announced.
	Pop() *Request
	// Done tells the source that r has left the system at time at:
	// completed (true) or rejected/dropped (false). The source may schedule
	// the session's next round and may recycle r afterwards.
	Done(r *Request, at Tick, completed bool)
}
