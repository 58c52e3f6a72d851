package cluster

import (
	"math"
	"slices"

	"optimize/simcore"
	"optimize/simcore/batch"
	"optimize/simcore/kv"
	"optimize/simcore/latency"
	"optimize/simcore/route"
	"optimize/simcore/sched"
)

// instance is one vLLM-like server: a wait queue, a running batch, a KV
// cache, and a chain of steps that runs while it has work.
type instance struct {
	id        int
	rank      int32
	kv        *kv.Cache
	wait      simcore.WaitQueue
	running   []*simcore.Request
	former    *batch.Former
	priority  sched.Policy    // nil = constant priority
	loadAware sched.LoadAware // priority, when it reads the queue length
	// rankRunning rescores running requests too, for priority preemption:
	// its victim must be the least urgent now, not when it was admitted.
	rankRunning bool
	latency     latency.Model

	// Decode in virtual time. A running request whose next token fits in
	// its last KV block without completing it is idle: a step gives it one
	// token and the step's ITL and does nothing else to it, so it is not
	// visited. Its counters stay as they were when it went idle, its ITL
	// sum relative to itlTotal, and are brought up to date (wake) at its
	// due step: its block boundary or its completion, or a step that
	// cannot be formed sparsely. due and since follow running slot by slot.
	due      []int64      // the step at which the slot's request is visited next
	nextDue  int64        // no slot is due before this step (at most min(due))
	since    []int64      // the step from which it has been idle; -1 = awake
	active   []int32      // scratch: the slots visited in this step, ascending
	gone     []int32      // scratch: the slots emptied in this step, ascending
	steps    int64        // steps run so far: the index of the current step
	itlTotal simcore.Tick // sum of the ITL of every step run
	dense    bool         // tests: never leave a request idle (the plain dense rule)
	fallback int64        // steps formed densely although sparse was tried
	touched  int32        // what kv.Touch returned, kept so the loads stay

	stepPending    bool
	inFlight       int32 // routed here and not yet completed or dropped
	inFlightTokens int64 // their input + output tokens (inFlightTokens)
	routed         int64 // requests ever routed here
	completed      int64 // requests (and P/D sub-requests) completed here
	// pdStarts are the P/D decode sub-requests admitted in this step: their
	// first decode step's token is their first token.
	pdStarts []*simcore.Request
	clock    simcore.Tick // time of the last event, request departures included
	transfer simcore.Tick // CPU→GPU reload time inside the current step

	batchStep latency.Step // the step being run, reused
	// idleContext is Σ over idle decodes of (progress when idled − the step
	// it idled at): at step s their contexts sum to idleContext + idle·s.
	idleContext int64
}

func newInstance(id int, cfg *Config, lat latency.Model, s sched.Scheduler, p sched.Policy, requests *simcore.RequestPool) (*instance, error) {
	cache, err := kv.New(cfg.TotalKVBlocks, cfg.BlockSize)
	if err != nil {
		return nil, err
	}
	if cfg.Era.August() {
		cache.CheckThenAct()
	}
	if cfg.KVCPUBlocks > 0 {
		cache.EnableTier(kv.TierConfig{
			Blocks:      cfg.KVCPUBlocks,
			Threshold:   cfg.KVOffloadThreshold,
			Bandwidth:   cfg.KVTransferBandwidth,
			BaseLatency: cfg.KVTransferBaseLatency,
		})
	}
	la, _ := p.(sched.LoadAware)
	in := &instance{
		loadAware:   la,
		rankRunning: cfg.PreemptionPolicy == batch.PreemptPriority,
		id:          id,
		rank:        rankInstance0 + int32(id),
		kv:          cache,
		wait:        simcore.NewWaitQueue(requests, int32(id), cfg.BlockSize),
		priority:    p,
		latency:     lat,
		former: batch.New(batch.Config{
			MaxScheduledTokens: cfg.MaxScheduledTokens,
			MaxRunning:         cfg.MaxRunning,
			PrefillThreshold:   cfg.PrefillThreshold,
			ClassThreshold:     cfg.SLOPrefillThreshold,
			PreemptionPolicy:   cfg.PreemptionPolicy,
			Era:                cfg.Era,
		}),
		running: make([]*simcore.Request, 0, cfg.MaxRunning),
		due:     make([]int64, 0, cfg.MaxRunning),
		since:   make([]int64, 0, cfg.MaxRunning),
	}
	var rank simcore.Ranking
	if s != nil {
		rank = s.Rank(p)
	}
	in.wait.SetOrder(rank, p)
	return in, nil
}

func (in *instance) fillSnapshot(s *route.Snapshot) {
	s.QueueDepth = int32(in.wait.Len())
	s.BatchSize = int32(len(in.running))
	s.KVUtilization = in.kv.Utilization()
	s.PendingTransferLatency = in.transfer
	s.KVThrashingRate = in.kv.ThrashingRate()
}

// inFlightTokens is what a request adds to its instance's in-flight tokens
// (the token-load scorer's load) from routing until it leaves: its input
// tokens, the prefill it needs, plus its output tokens, the decode steps
// it will take; together they are the KV it will hold at its end. The
// output length is the request's own, known to the simulator; a real
// router can only estimate it.
func inFlightTokens(r *simcore.Request) int64 { return int64(r.InputLen) + int64(r.OutputLen) }

// release takes r, which leaves the instance, out of its in-flight counts.
func (in *instance) release(r *simcore.Request) {
	in.inFlight--
	in.inFlightTokens -= inFlightTokens(r)
}

// enqueue admits r to the wait queue, or drops it when it can never fit in
// the KV cache; an idle instance starts stepping at once.
func (in *instance) enqueue(e *Engine, r *simcore.Request) {
	in.clock = max(in.clock, e.now)
	if outsideWindow(r, e.cfg.MaxModelLen) || in.neverFits(r) {
		in.release(r)
		e.metrics.Dropped(r)
		e.leave(r, e.now, false)
		return
	}
	e.metrics.Enqueued(r)
	in.wait.PushBack(r) // r is the queue's now
	if !in.stepPending {
		in.stepPending = true
		e.events.push(event{time: e.now, rank: in.rank, kind: evStep, sub: e.stepSub})
	}
}

// outsideWindow reports whether r does not fit a context window of
// maxLen tokens (0 = none): its input leaves no room for an output token,
// or its input plus output exceeds the window.
func outsideWindow(r *simcore.Request, maxLen int64) bool {
	return maxLen > 0 && (int64(r.InputLen) >= maxLen || int64(r.InputLen)+int64(r.OutputLen) > maxLen)
}

// neverFits reports whether r needs more KV blocks than the instance has:
// its input and every output token but the last (whose slot may fail, as
// in BLIS). BLIS checks the input alone; a request whose output then
// outgrows the cache preempts everything, itself included, and retries
// forever, so it is dropped here instead.
func (in *instance) neverFits(r *simcore.Request) bool {
	bs := in.kv.BlockSize()
	tokens := int64(r.InputLen) + int64(max(r.OutputLen, 1)) - 1
	return (tokens+bs-1)/bs > in.kv.Total()
}

// step runs one engine iteration at e.now: order the queue, form the
// batch, advance every scheduled request by one step of the latency model,
// retire finished requests, and schedule the next step if work remains.
func (in *instance) step(e *Engine) {
	now := e.now
	in.clock = max(in.clock, now)
	if len(in.running) == 0 && in.wait.Len() == 0 {
		// In-flight eviction emptied the instance since this step was
		// scheduled: no step runs (BLIS's Step returns).
		in.stepPending = false
		in.transfer = 0
		return
	}
	in.kv.SetClock(now)
	// The queue scores each request it hands out at now, and ranks only
	// the requests it is asked for (see sched.Scheduler's Rank).
	in.wait.SetClock(now)
	if in.priority != nil {
		if in.loadAware != nil {
			in.loadAware.SetLoad(in.wait.Len())
		}
		if in.rankRunning {
			for _, r := range in.running {
				w := simcore.WaitingOf(r)
				r.Priority = in.priority.Priority(&w, now)
			}
		}
	}
	res, idle := in.form()
	for i := 0; i < res.Preempted; i++ {
		e.metrics.Preempted()
	}
	if e.pd == nil {
		for _, r := range res.Scheduled {
			e.metrics.Scheduled(r, now)
		}
	} else {
		for _, r := range res.Scheduled {
			if isDecodeSub(r) {
				// Its scheduling delay is its prefill's.
				in.pdStarts = append(in.pdStarts, r)
				continue
			}
			e.metrics.Scheduled(r, now)
		}
	}

	dt := in.execute(e, idle)
	if e.pd != nil && len(e.pd.done) > 0 {
		e.pd.startTransfers(e)
	}

	if len(in.running) > 0 || in.wait.Len() > 0 {
		e.events.push(event{time: now + dt, rank: in.rank, kind: evStep, sub: e.stepSub})
	} else {
		in.stepPending = false
		in.transfer = 0
	}
}

// form forms the batch, sparsely when it can (see batch.FormSparse): it
// wakes the slots due now and leaves in.active the slots execute visits,
// and returns how many idle requests decode without a visit.
func (in *instance) form() (*batch.Result, int) {
	now := in.steps
	in.active = in.active[:0]
	if in.nextDue <= now {
		// Every slot is written and the due ones kept, and the earliest
		// step an idle one is due found: no branch to mispredict on a mix
		// of due and idle slots. Half of a run's steps find none due and
		// skip this.
		active := slices.Grow(in.active, len(in.due))[:len(in.due)]
		n, next := 0, int64(math.MaxInt64)
		for i, d := range in.due {
			active[n] = int32(i)
			due := (d - now - 1) >> 63 // −1 when due, else 0
			n -= int(due)
			next = min(next, d|due&math.MaxInt64)
		}
		in.active, in.nextDue = active[:n], next
	}
	// Touch the state every due request's visit works on (its KV copy and
	// last block) before visiting any: independent loads, whose misses
	// overlap, where each visit would stall on its own in turn.
	for _, i := range in.active {
		in.touched += in.kv.Touch(&in.running[i].KV)
	}
	for _, i := range in.active {
		in.wake(int(i))
	}
	idle := len(in.running) - len(in.active)
	kept := len(in.running)

	var res *batch.Result
	ok := false
	if !in.dense {
		if res, ok = in.former.FormSparse(&in.running, in.active, idle, &in.wait, in.kv); !ok {
			in.fallback++
		}
	}
	if !ok {
		// Tokens or KV run short: every request is visited in batch order,
		// and some may be preempted.
		for i := range in.running {
			in.wake(i)
		}
		res = in.former.Form(&in.running, &in.wait, in.kv)
		idle, kept = 0, 0
		in.active = in.active[:0]
	}
	in.due, in.since = in.due[:kept], in.since[:kept]
	for i := kept; i < len(in.running); i++ {
		in.due = append(in.due, now)
		in.since = append(in.since, -1)
		in.active = append(in.active, int32(i))
	}
	return res, idle
}

// wake brings the counters of the request in slot i up to date.
func (in *instance) wake(i int) {
	if b := in.since[i]; b >= 0 {
		r := in.running[i]
		k := int32(in.steps - b)
		r.Progress += k
		r.Computed += k
		in.kv.CatchUp(&r.KV, k)
		r.ITLSum += in.itlTotal
		in.idleContext -= int64(r.Progress) - b - int64(k)
		in.since[i] = -1
	}
}

// rest sets when the request in slot i, awake after a step, is visited
// next: every step while it prefills (or in dense mode); as a decode, at
// the step whose token completes or opens a KV block, or at its last step,
// whichever is first.
func (in *instance) rest(i int) {
	r := in.running[i]
	if r.Progress < r.InputLen || in.dense {
		in.due[i], in.nextDue = in.steps, in.steps
		return
	}
	last := int64(r.InputLen+max(r.OutputLen, 1)-1-r.Progress) - 1 // steps before its last one
	in.due[i] = in.steps + min(in.kv.DecodeRoom(&r.KV), last)
	in.nextDue = min(in.nextDue, in.due[i])
	in.since[i] = in.steps
	in.idleContext += int64(r.Progress) - in.steps
	r.ITLSum -= in.itlTotal
}

// execute runs the step: it returns its duration after advancing every
// scheduled request — a prefill jumps to what batch formation computed
// (cached prefix included), a decode adds one token — recording TTFT and
// ITL, and retiring the requests that produced their last token. Only the
// active slots are visited; idle decodes advance by the step count. BLIS
// retires in a second pass; one pass gives the same result, as retiring a
// request touches no other request's progress.
func (in *instance) execute(e *Engine, idle int) simcore.Tick {
	// The step as the latency model reads it: the scheduled requests (those
	// given tokens), their prefill chunks, and the decodes with their
	// contexts. An idle decode's context is its progress when it went idle
	// plus the steps since, summed in idleContext.
	st := &in.batchStep
	st.Prefills, st.PrefillTokens = st.Prefills[:0], 0
	st.Requests = idle
	st.Decodes, st.DecodeContext = int64(idle), in.idleContext+int64(idle)*in.steps
	for _, i := range in.active {
		r := in.running[i]
		if r.NewTokens == 0 {
			continue
		}
		st.Requests++
		if r.Progress < r.InputLen {
			st.Prefills = append(st.Prefills, latency.Chunk{Done: int64(r.Progress), New: int64(r.NewTokens), Input: int64(r.InputLen)})
			st.PrefillTokens += int64(r.NewTokens)
		} else if r.OutputLen > 0 {
			st.Decodes++
			st.DecodeContext += int64(r.Progress)
		}
	}
	// Reloads from the CPU tier happened while forming this batch: the step
	// waits for them, so every co-batched request pays.
	in.transfer = in.kv.TakeTransfer()
	dt := max(1, in.latency.StepTime(st)+in.transfer)
	itl := dt + in.latency.OutputTokenTime()
	if len(in.pdStarts) > 0 {
		in.firstDecodeTokens(e, itl)
	}
	decoded := idle
	in.gone = in.gone[:0]
	for _, i := range in.active {
		r := in.running[i]
		input := r.InputLen
		if r.Progress < input {
			r.Progress = r.Computed
			if r.Progress == input {
				// The last prefill chunk produces the first output token.
				// (Only here: a request that finished its prefill earlier
				// and got no token this step keeps its TTFT.)
				r.FirstToken = e.now + itl - r.Arrival
				e.metrics.FirstToken(r)
			}
		} else if r.NewTokens > 0 {
			r.Progress++
			r.ITLSum += itl
			decoded++
		}
		if r.Progress >= input+max(r.OutputLen, 1)-1 {
			in.retire(e, r, dt)
			in.running[i] = nil
			in.gone = append(in.gone, i)
		}
	}
	in.itlTotal += itl
	in.steps++
	for _, i := range in.active {
		if in.running[i] != nil {
			in.rest(int(i))
		}
	}
	if len(in.gone) > 0 {
		in.compact()
	}
	e.metrics.DecodeStep(itl, decoded)
	return dt
}

// compact closes the slots emptied in this step (in.gone, ascending),
// keeping batch order; the runs between emptied slots move in bulk.
func (in *instance) compact() {
	n := len(in.running)
	kept := int(in.gone[0])
	for g, i := range in.gone {
		from, to := int(i)+1, n
		if g+1 < len(in.gone) {
			to = int(in.gone[g+1])
		}
		copy(in.running[kept:], in.running[from:to])
		copy(in.due[kept:], in.due[from:to])
		copy(in.since[kept:], in.since[from:to])
		kept += to - from
	}
	clear(in.running[kept:])
	in.running, in.due, in.since = in.running[:kept], in.due[:kept], in.since[:kept]
}

// retire completes a request that produced its last token: one more KV
// slot for that token (as BLIS), release every block, and hand the request
// back to the source when the step ends.
func (in *instance) retire(e *Engine, r *simcore.Request, dt simcore.Tick) {
	if r.OutputLen > 0 {
		in.kv.AppendToken(&r.KV, &r.Content) // a failure here is harmless: released next
	}
	in.kv.Retire(&r.KV)
	in.release(r)
	in.completed++
	left := e.now + dt
	in.clock = max(in.clock, left)
	if e.pd != nil && e.pd.retired(e, r) {
		return // a prefill sub-request: its transfer follows
	}
	e.metrics.Completed(r)
	e.leave(r, left, true)
}

// isDecodeSub reports whether r, just admitted from the wait queue, is a
// P/D decode sub-request: its whole prompt's KV came by transfer.
func isDecodeSub(r *simcore.Request) bool { return r.Progress > 0 && r.Progress == r.InputLen }

// firstDecodeTokens gives the decode sub-requests admitted in this step
// their first token at its end, after itl: arrival to the first token the
// decode instance emits is their TTFT (BLIS f90a1e3a's projection), and
// this step's ITL is in it rather than in their ITL sum (execute adds it).
func (in *instance) firstDecodeTokens(e *Engine, itl simcore.Tick) {
	for _, r := range in.pdStarts {
		r.FirstToken = e.now + itl - r.Arrival
		r.ITLSum -= itl
		e.metrics.FirstToken(r)
	}
	clear(in.pdStarts)
	in.pdStarts = in.pdStarts[:0]
}

// injectDecode puts decode sub-request r, its prompt's KV in place, into
// the wait queue (no queueing delay, no size check: BLIS f90a1e3a's
// path); an idle instance starts stepping at once.
func (in *instance) injectDecode(e *Engine, r *simcore.Request) {
	in.clock = max(in.clock, e.now)
	r.Instance = int32(in.id)
	in.inFlight++
	in.inFlightTokens += inFlightTokens(r)
	in.wait.PushBack(r)
	if !in.stepPending {
		in.stepPending = true
		e.events.push(event{time: e.now, rank: in.rank, kind: evStep, sub: e.stepSub})
	}
}
