package workload

import (
	"fmt"
	"math"

	"optimize/simcore"
)

// inFlightCap is a client's cap on its requests in flight (BLIS observe's
// --max-concurrency, a benchmark client's connection pool): a request due
// while the cap's worth are in flight waits for one to leave and is sent
// then. The replay turns closed loop: the source learns when it may send
// the next request only from the engine's Done calls.
type inFlightCap struct {
	max, inFlight int
	freed         simcore.Tick // when a request last left
}

// blocked reports whether the next request must wait for a slot.
func (c *inFlightCap) blocked() bool { return c.max > 0 && c.inFlight >= c.max }

// sendAt is when a request due at due goes out: at due, or, if it waited
// for a slot, when the slot freed (every request due earlier than a slot
// freed, with a slot free, was sent already).
func (c *inFlightCap) sendAt(due simcore.Tick) simcore.Tick {
	if c.max > 0 {
		return max(due, c.freed)
	}
	return due
}

func (c *inFlightCap) sent() {
	if c.max > 0 {
		c.inFlight++
	}
}

func (c *inFlightCap) left(at simcore.Tick) {
	if c.max > 0 {
		c.inFlight--
		c.freed = at
	}
}

// Control applies the replay controls to a TraceV2 trace read whole:
// MaxConcurrency (a real run then replays at its arrival_time_us, each
// request sent when due or when a slot frees, instead of at the
// send_time_us the real client's cap made), Window (a part of the
// trace, made to start at 0: one load stage of a run), TimeScale or
// TargetRate, and MaxRequests. The other controls have no TraceV2
// meaning here and are refused.
func (t *TraceSource) Control(o ReplayOptions) error {
	if err := o.check(); err != nil {
		return err
	}
	switch {
	case len(o.SLOMix) > 0:
		return fmt.Errorf("trace slo-mix: applies to Mooncake, Azure and BurstGPT traces; a TraceV2 row gives its slo_class")
	case o.SeedWindow > 0:
		return fmt.Errorf("trace seed-window: a TraceV2 trace is not split into seed windows")
	case o.NoSessions:
		return fmt.Errorf("trace sessions: a TraceV2 trace's sessions are its session_id column")
	}
	if o.MaxConcurrency > 0 {
		if t.observed != nil {
			t.replayAtDue()
		}
		t.cap.max = o.MaxConcurrency
	}
	w := o.Window
	keep := t.rows[:0]
	var kept []Observed
	for i, r := range t.rows {
		if r.arrival < simcore.Tick(w.Start) || (w.End > 0 && r.arrival >= simcore.Tick(w.End)) {
			continue
		}
		if o.MaxRequests > 0 && len(keep) == o.MaxRequests {
			break
		}
		r.arrival -= simcore.Tick(w.Start)
		keep = append(keep, r)
		if t.observed != nil {
			kept = append(kept, t.observed[i])
		}
	}
	if len(keep) == 0 {
		return fmt.Errorf("trace window: %s holds no request of the trace", w)
	}
	t.rows = keep
	if t.observed != nil {
		t.observed = kept
	}
	scale := o.TimeScale
	if o.TargetRate > 0 {
		last := t.rows[len(t.rows)-1].arrival
		if len(t.rows) < 2 || last <= 0 {
			return fmt.Errorf("trace target rate: the replayed part has %d requests over %d µs; a rate needs two at different times", len(t.rows), last)
		}
		scale = float64(len(t.rows)) / (float64(last) / 1e6) / o.TargetRate
	}
	if scale > 0 && scale != 1 {
		for i := range t.rows {
			t.rows[i].arrival = simcore.Tick(math.Round(float64(t.rows[i].arrival) * scale))
		}
	}
	return nil
}

// replayAtDue moves a real run's requests to when the client meant to
// send them (arrival_time_us), in that order, for a capped replay.
func (t *TraceSource) replayAtDue() {
	for i := range t.rows {
		t.rows[i].arrival = simcore.Tick(t.observed[i].Due)
	}
	rows, observed := t.rows, t.observed
	t.rows, t.observed = nil, nil
	t.order(rows, observed)
}
