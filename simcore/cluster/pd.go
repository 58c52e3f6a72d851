package cluster

import (
	"slices"
	"strconv"
	"strings"

	"optimize/simcore"
	"optimize/simcore/internal/freelist"
	"optimize/simcore/kv"
	"optimize/simcore/metrics"
	"optimize/simcore/route"
)

// pdState is the engine's prefill/decode disaggregation, as BLIS f90a1e3a
// runs it. Routing picks a decode instance first; the decider then keeps
// the request whole there (an ordinary request) or splits it: a prefill
// sub-request, the same input and no output, is routed to the prefill
// pool at the same instant (after every decode pick of that instant) and
// completes in the step that finishes its prefill; the transfer of its KV
// starts when that step starts, reserving the whole prompt's KV on the
// decode instance (the request is dropped when it does not fit), and when
// it ends the request itself enters the decode instance's wait queue with
// its prompt's KV in place, and decodes from there.
type pdState struct {
	cfg    *PDConfig
	august bool // BLIS f90a1e3a's accounting (see dropped)
	// The pools' routable instances in index order, as indices and as
	// slots, and scratch snapshots of them.
	decodeIDs, prefillIDs       []int
	decodeSlots, prefillSlots   []int32
	decodeSnaps, prefillSnaps   []route.Snapshot
	decodeRouter, prefillRouter route.Router
	// subset: instances come and go (the autoscaler); the routers are
	// built for every slot and route among the pools' routable members.
	subset bool
	roles  []uint8 // each instance's pool bits, added instances' too
	// awaiting counts, per instance, the split requests it is the decode
	// instance of that have not reached its wait queue yet.
	awaiting      []int32
	byRole        [4]pdRole // what each role's instances are built from
	kvGiven       int64     // kv.total_blocks as given (0 = derived)
	view          *pdView   // prefix-threshold's cache view; nil otherwise
	blockSize     int64
	bytesPerToken float64 // KV bytes per token a transfer carries

	parents []pdParent
	free    []int32
	byID    map[int64]int32 // the slot of each request split, by id
	done    []pdDone        // scratch: prefill sub-requests completed in a step
	active  int             // transfers in flight (contention)

	stats metrics.PDCounts
}

// pdParent is a split request between its decode pick and its decode
// instance's wait queue.
type pdParent struct {
	req     *simcore.Request // the request, which becomes the decode sub-request
	decode  int
	prefill int
}

type pdDone struct {
	id   string // BLIS's sub-request id order: "request_<id>_prefill" sorts as the id's decimal string
	slot int32
}

// Event ranks of the P/D cluster events, between routing and the
// instances, in BLIS's priority order.
const (
	rankPrefillRouting = rankRouting + 1
	rankTransferStart  = rankRouting + 2
	rankTransferDone   = rankRouting + 3
)

// route routes r decode first: the decode pool's pick, then the decider.
func (p *pdState) route(e *Engine, r *simcore.Request, refresh bool) {
	if refresh {
		e.refreshSnapshots()
	}
	if len(p.decodeIDs) == 0 { // no decode instance routable: rejected, as BLIS rejects it
		e.metrics.Rejected(r)
		e.leave(r, e.now, false)
		return
	}
	d := p.decodeIDs[p.pick(e, p.decodeRouter, r, p.decodeIDs, p.decodeSlots, p.decodeSnaps)]
	if !p.disaggregate(e, r, d) {
		p.stats.Local++
		e.dispatch(r, d)
		return
	}
	slot := freelist.Take(&p.parents, &p.free)
	p.parents[slot] = pdParent{req: r, decode: d, prefill: -1}
	p.byID[r.ID] = slot
	p.awaiting[d]++
	sub := e.requests.Take()
	sub.ID, sub.Arrival, sub.SLO, sub.InputLen = r.ID, r.Arrival, r.SLO, r.InputLen
	sub.Client, sub.Round, sub.Session = r.Client, r.Round, r.Session
	sub.Priority, sub.PriorityHint = r.Priority, r.PriorityHint
	sub.Content = r.Content
	sub.Content.Exclusive = false // its stream is the request's too
	e.events.push(event{time: e.now, rank: rankPrefillRouting, kind: evPrefillRouting, slot: e.transit.park(sub)})
}

// pick routes r within a pool (its routable members ids, as slots too):
// the position in ids of the instance chosen.
func (p *pdState) pick(e *Engine, router route.Router, r *simcore.Request, ids []int, slots []int32, snaps []route.Snapshot) int {
	for k, i := range ids {
		snaps[k] = e.snaps[i]
	}
	if p.subset {
		return router.(route.Subset).RouteAmong(r, snaps, slots, e.now)
	}
	return router.Route(r, snaps, e.now)
}

// setMembers makes the routable instances members (ascending) the pools'
// members, each in the pools of its role.
func (p *pdState) setMembers(members []int32) {
	p.decodeIDs, p.prefillIDs = p.decodeIDs[:0], p.prefillIDs[:0]
	p.decodeSlots, p.prefillSlots = p.decodeSlots[:0], p.prefillSlots[:0]
	p.decodeSnaps, p.prefillSnaps = p.decodeSnaps[:0], p.prefillSnaps[:0]
	for _, i := range members {
		p.join(int(i))
	}
}

// disaggregate is the decider, judging r against decode instance d.
func (p *pdState) disaggregate(e *Engine, r *simcore.Request, d int) bool {
	switch p.cfg.Decider {
	case PDAlways:
		return true
	case PDPrefixThreshold:
		if r.InputLen == 0 {
			return false
		}
		return nonCached(r, p.view.cachedBlocks(d, r, e.instances[d].kv), p.blockSize) > p.cfg.PrefixThreshold
	}
	return false
}

// nonCached is the input tokens of r not in its first cached blocks.
func nonCached(r *simcore.Request, cached int, blockSize int64) int64 {
	return int64(r.InputLen) - int64(cached)*blockSize
}

// routePrefill routes a prefill sub-request within the prefill pool.
func (p *pdState) routePrefill(e *Engine, sub *simcore.Request) {
	e.refreshSnapshots()
	slot := p.byID[sub.ID]
	if len(p.prefillIDs) == 0 {
		// No prefill instance routable: the request is rejected, as BLIS
		// rejects it at its prefill's routing.
		r := p.parents[slot].req
		p.awaiting[p.parents[slot].decode]--
		p.release(slot)
		e.requests.Put(sub)
		e.metrics.Rejected(r)
		e.leave(r, e.now, false)
		return
	}
	i := p.prefillIDs[p.pick(e, p.prefillRouter, sub, p.prefillIDs, p.prefillSlots, p.prefillSnaps)]
	p.parents[slot].prefill = i
	e.dispatch(sub, i)
}

// retired handles a request that completed on its instance: a prefill
// sub-request is recycled and its transfer is due (true); a split
// request's decode leaves P/D (false: it completes as any request does).
func (p *pdState) retired(e *Engine, r *simcore.Request) bool {
	slot, ok := p.byID[r.ID]
	if !ok {
		return false
	}
	if r != p.parents[slot].req {
		p.done = append(p.done, pdDone{id: strconv.FormatInt(r.ID, 10), slot: slot})
		e.requests.Put(r)
		return true
	}
	p.release(slot)
	return false
}

func (p *pdState) release(slot int32) {
	delete(p.byID, p.parents[slot].req.ID)
	p.parents[slot] = pdParent{}
	p.free = append(p.free, slot)
}

// startTransfers schedules the transfers of the prefill sub-requests
// that completed in the step just run, at its start, in BLIS's order:
// by sub-request id as a string.
func (p *pdState) startTransfers(e *Engine) {
	if len(p.done) > 1 {
		slices.SortFunc(p.done, func(a, b pdDone) int { return strings.Compare(a.id, b.id) })
	}
	for _, d := range p.done {
		e.events.push(event{time: e.now, rank: rankTransferStart, kind: evTransferStart, slot: d.slot})
	}
	p.done = p.done[:0]
}

// transferStart reserves the prompt's KV on the decode instance and
// schedules the transfer's end, or drops the request when it does not fit.
func (p *pdState) transferStart(e *Engine, slot int32) {
	pr := &p.parents[slot]
	r, dec := pr.req, e.instances[pr.decode]
	if e.scale.gone(pr.decode) {
		p.dropped(e, slot) // BLIS f90a1e3a: its decode instance was drained
		return
	}
	if r.InputLen > 0 {
		dec.kv.SetClock(e.now)
		// A brand-new sequence: no prefix lookup, every block fresh.
		if !dec.kv.Allocate(&r.KV, &r.Content, kv.Hit{}, int64(r.InputLen)) {
			p.dropped(e, slot)
			return
		}
	}
	r.Progress, r.Computed, r.Transferred = r.InputLen, r.InputLen, true
	active := 0
	if p.cfg.TransferContention {
		p.active++
		active = p.active
		p.stats.PeakTransfers = max(p.stats.PeakTransfers, int64(p.active))
		p.stats.DepthSum += int64(p.active)
	}
	blocks := (int64(r.InputLen) + p.blockSize - 1) / p.blockSize
	d := transferDuration(blocks, p.blockSize, p.bytesPerToken, p.cfg.bandwidth(), p.cfg.TransferBaseLatency, active)
	p.stats.Transfers = append(p.stats.Transfers, d)
	e.events.push(event{time: e.now + d, rank: rankTransferDone, kind: evTransferDone, slot: slot})
}

// dropped drops a split request whose prompt's KV does not fit its decode
// instance. It counts as dropped; BLIS f90a1e3a also keeps its latencies
// in the distributions (TTFT its prefill's, E2E up to the drop), which the
// August era reproduces.
func (p *pdState) dropped(e *Engine, slot int32) {
	r, d := p.parents[slot].req, p.parents[slot].decode
	p.stats.DroppedAtDecodeKV++
	p.awaiting[d]--
	e.metrics.DroppedAfterPrefill(r, e.now-r.Arrival, p.august)
	p.release(slot)
	e.leave(r, e.now, false)
	if e.scale != nil && !e.scale.blis {
		e.scale.afterInstanceEvent(e, d) // a draining instance it was the last work of ends
	}
}

// transferDone puts the request, its prompt's KV in place, into its decode
// instance's wait queue.
func (p *pdState) transferDone(e *Engine, slot int32) {
	if p.cfg.TransferContention {
		p.active--
	}
	p.stats.Disaggregated++
	pr := &p.parents[slot]
	if e.scale.gone(pr.decode) {
		// BLIS f90a1e3a: its decode instance was drained meanwhile; the
		// KV reserved there is released.
		e.instances[pr.decode].kv.Retire(&pr.req.KV)
		p.dropped(e, slot)
		return
	}
	p.awaiting[pr.decode]--
	e.instances[pr.decode].injectDecode(e, pr.req)
	e.snaps[pr.decode].InFlight++
	e.snaps[pr.decode].InFlightTokens += inFlightTokens(pr.req)
}

// counts is the run's P/D counts.
func (p *pdState) counts(e *Engine) *metrics.PDCounts {
	c := p.stats
	c.Contention = p.cfg.TransferContention
	for i, inst := range e.instances {
		role := p.roles[i]
		if role&rolePrefill != 0 {
			c.PrefillCompleted += inst.completed
		}
		if role&roleDecode != 0 {
			c.DecodeCompleted += inst.completed
		}
	}
	return &c
}
