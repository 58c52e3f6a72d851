package observe

import (
	"cmp"
	"context"
	"slices"
	"time"
)

// Feed hands a run its requests in due order. A closed-loop feed (a
// multi-turn session's next round is due a think time after the previous
// one ends) learns of more requests from Done; Peek may then return an
// earlier time than before. A run calls a feed from one goroutine.
type Feed interface {
	// Peek returns when the next request is due, if one is known now.
	Peek() (time.Duration, bool)
	// Pop returns the request Peek announced.
	Pop() (Request, bool)
	// Done tells the feed that r ended at, after the run's start; ok when
	// it completed.
	Done(r Request, at time.Duration, ok bool)
}

// List is a feed of fixed requests, sent in order of Due (ties in their
// order here).
func List(reqs []Request) Feed {
	l := &list{reqs: slices.Clone(reqs)}
	slices.SortStableFunc(l.reqs, func(a, b Request) int { return cmp.Compare(a.Due, b.Due) })
	return l
}

type list struct {
	reqs []Request
	next int
}

func (l *list) Peek() (time.Duration, bool) {
	if l.next >= len(l.reqs) {
		return 0, false
	}
	return l.reqs[l.next].Due, true
}

func (l *list) Pop() (Request, bool) {
	if l.next >= len(l.reqs) {
		return Request{}, false
	}
	l.next++
	return l.reqs[l.next-1], true
}

func (l *list) Done(Request, time.Duration, bool) {}

// Options shape a run.
type Options struct {
	// Concurrency caps the requests in flight (0 = no cap: every request
	// goes out when it is due). A request due while the cap is reached
	// waits for a slot; its send time is when it went out.
	Concurrency int
	// WarmUp requests, the first sent, are not recorded (BLIS's
	// warm_up_requests: they pay for cold caches and connections).
	WarmUp int
	// Timeout bounds each request from its send to its stream's end
	// (0 = none); a request that exceeds it is recorded as a timeout.
	Timeout time.Duration
}

// Result is a run's measurements.
type Result struct {
	Start    time.Time // every request was due at Start + its Due
	End      time.Time // when the last request ended
	Records  []Record  // the requests sent after the warm-up, by ID
	WarmedUp int       // warm-up requests sent
	// Stopped says the run's context ended it before its feed did: no
	// request was sent after that, and those in flight were cancelled
	// (recorded as errors).
	Stopped bool
}

// done is a request that ended.
type done struct {
	req  Request
	rec  Record
	warm bool
}

// Run sends the feed's requests, each when it is due (and a slot is
// free), and waits for them all. Cancelling ctx stops it: nothing more is
// sent, the requests in flight are cancelled, and the result holds
// everything sent until then.
func (c *Client) Run(ctx context.Context, feed Feed, opt Options) Result {
	res := Result{Start: c.now()}
	ended := make(chan done)
	inFlight, sent := 0, 0
	finish := func(d done) {
		inFlight--
		feed.Done(d.req, c.now().Sub(res.Start), d.rec.Status == StatusOK)
		if !d.warm {
			res.Records = append(res.Records, d.rec)
		}
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for ctx.Err() == nil {
		due, ok := feed.Peek()
		if !ok {
			if inFlight == 0 {
				break
			}
			select { // a completion may make a session's next round known
			case d := <-ended:
				finish(d)
			case <-ctx.Done():
			}
			continue
		}
		if wait := res.Start.Add(due).Sub(c.now()); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case d := <-ended: // then look again: an earlier round may be due
				timer.Stop()
				finish(d)
			case <-ctx.Done():
			}
			continue
		}
		if opt.Concurrency > 0 && inFlight >= opt.Concurrency {
			select {
			case d := <-ended:
				finish(d)
			case <-ctx.Done():
			}
			continue
		}
		r, ok := feed.Pop()
		if !ok {
			continue
		}
		warm := sent < opt.WarmUp
		sent++
		inFlight++
		go func() {
			ended <- done{req: r, rec: c.Send(ctx, r, res.Start.Add(r.Due), opt.Timeout), warm: warm}
		}()
	}
	res.Stopped = ctx.Err() != nil
	for inFlight > 0 {
		finish(<-ended)
	}
	res.WarmedUp = min(sent, opt.WarmUp)
	res.End = c.now()
	slices.SortFunc(res.Records, func(a, b Record) int { return a.ID - b.ID })
	return res
}
