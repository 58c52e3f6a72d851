package workload

import (
	"errors"
	"fmt"
	"io"
	"math"

	"optimize/simcore"
	"optimize/simcore/internal/mix"
	"optimize/simcore/kv"
)

// ReplayOptions controls how a trace read by a TraceReader is replayed.
type ReplayOptions struct {
	BlockSize int   // simulator tokens per KV block
	Seed      int64 // draws the classes of SLOMix
	// TimeScale multiplies the trace's times (0 = 1, as recorded): 2
	// replays it at half its rate.
	TimeScale float64
	// TargetRate, when > 0, replaces TimeScale: the times are scaled so
	// that the replayed requests average this many per second (requests
	// replayed / time from the window's start to the last of them).
	TargetRate float64
	Window     TraceWindow // the part of the trace replayed
	// MaxRequests caps the requests replayed (0 = all); unservable rows
	// do not count toward it.
	MaxRequests int
	// SLOMix gives rows that carry no class one drawn from these shares,
	// by Seed and the row's line: the same row gets the same class in
	// every window. Empty: such rows have no class.
	SLOMix SLOMix
	// NoSessions replays every row as a request of its own even when the
	// trace names sessions.
	NoSessions bool
	// ContextWindow is the model's context in tokens (0 = no limit): a row
	// whose input fills it or whose input + output exceeds it is skipped
	// and counted, as vLLM refuses it.
	ContextWindow int64
	// Horizon ends the replay: requests arriving at or after it are never
	// read (0 = none).
	Horizon simcore.Tick
	// MaxConcurrency caps the requests in flight, as the recording
	// client's connection limit did (0 = no cap: open loop): a request
	// due while that many are in flight is sent when one leaves.
	MaxConcurrency int
	// SeedWindow is, for a study on the trace, the length in µs of the
	// window each seed replays (on the trace's clock; 0 = the study's
	// default). A single replay ignores it: package strategies/workloads
	// cuts the trace into windows (workloads.TraceSplit).
	SeedWindow int64
}

// ReplayCounts counts a replay's rows by what became of them.
type ReplayCounts struct {
	Replayed    int // rows replayed as requests
	ZeroOutput  int // rows skipped: no output tokens (a failed request)
	ZeroInput   int // rows skipped: no prompt tokens
	OverContext int // rows skipped: longer than the context window
}

// Unservable is the number of rows skipped because they cannot be served.
func (c ReplayCounts) Unservable() int { return c.ZeroOutput + c.ZeroInput + c.OverContext }

// ReplaySource replays a trace's rows as requests in their order (the
// reader's rows are in time order), pulling each row only when the
// simulation reaches the one before it: memory stays bounded by the
// requests in flight, the sessions named so far and, for traces with
// Mooncake hash ids, one hash per distinct prompt block seen. It
// implements simcore.Source.
type ReplaySource struct {
	reader *TraceReader
	opt    ReplayOptions
	scale  float64
	chains *blockChains

	pending   TraceRecord
	at        simcore.Tick // the pending row's arrival
	has, done bool
	err       error

	sessions map[string]int32
	rounds   []int32
	counts   ReplayCounts
	cap      inFlightCap
}

// NewReplay replays the trace open returns (called twice when
// opt.TargetRate is set: a first pass measures the rate).
func NewReplay(open func() (*TraceReader, error), opt ReplayOptions) (*ReplaySource, error) {
	if opt.BlockSize <= 0 {
		return nil, fmt.Errorf("workload: block size must be > 0, got %d", opt.BlockSize)
	}
	if err := opt.check(); err != nil {
		return nil, err
	}
	scale, err := TimeScale(open, opt)
	if err != nil {
		return nil, err
	}
	r, err := open()
	if err != nil {
		return nil, err
	}
	s := &ReplaySource{reader: r, opt: opt, scale: scale, sessions: map[string]int32{}, cap: inFlightCap{max: opt.MaxConcurrency}}
	s.chains = newBlockChains(opt.BlockSize)
	s.advance()
	if s.err != nil {
		r.Close()
		return nil, s.err
	}
	return s, nil
}

func (o *ReplayOptions) check() error {
	switch {
	case o.TimeScale < 0 || math.IsNaN(o.TimeScale) || math.IsInf(o.TimeScale, 0):
		return fmt.Errorf("trace time scale: must be > 0, got %v", o.TimeScale)
	case o.TargetRate < 0 || math.IsNaN(o.TargetRate) || math.IsInf(o.TargetRate, 0):
		return fmt.Errorf("trace target rate: must be > 0 requests/s, got %v", o.TargetRate)
	case o.MaxRequests < 0:
		return fmt.Errorf("trace request cap: must be >= 0, got %d", o.MaxRequests)
	case o.MaxConcurrency < 0:
		return fmt.Errorf("trace client-cap: must be >= 0, got %d", o.MaxConcurrency)
	case o.Window.End != 0 && o.Window.End <= o.Window.Start, o.Window.Start < 0:
		return fmt.Errorf("trace window: %s is empty", o.Window)
	}
	return o.SLOMix.check()
}

// TimeScale is the factor opt multiplies the trace's times by: TimeScale
// (1 when 0), or with TargetRate, the measured rate of the rows opt
// replays divided by TargetRate (a pass over them).
func TimeScale(open func() (*TraceReader, error), opt ReplayOptions) (float64, error) {
	if opt.TargetRate > 0 {
		rate, err := measureRate(open, opt)
		if err != nil {
			return 0, err
		}
		return rate / opt.TargetRate, nil
	}
	if opt.TimeScale == 0 {
		return 1, nil
	}
	return opt.TimeScale, nil
}

// measureRate reads the rows opt replays and returns their mean rate on
// the trace's clock: rows / seconds from the window's start to the last.
func measureRate(open func() (*TraceReader, error), opt ReplayOptions) (float64, error) {
	opt.TargetRate, opt.TimeScale, opt.Horizon = 0, 1, 0
	s, err := NewReplay(open, opt)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	var last simcore.Tick
	n := 0
	for at, ok := s.Peek(); ok; at, ok = s.Peek() {
		last = at
		n++
		s.skip()
	}
	if s.err != nil {
		return 0, s.err
	}
	if n < 2 || last <= 0 {
		return 0, fmt.Errorf("%s: trace target rate: the replayed part has %d requests over %d µs; a rate needs two at different times", s.reader.Name(), n, last)
	}
	return float64(n) / (float64(last) / 1e6), nil
}

// advance reads rows up to the next one to replay.
func (s *ReplaySource) advance() {
	s.has = false
	for !s.done {
		rec, err := s.reader.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.err = err
			}
			s.done = true
			return
		}
		w := s.opt.Window
		if rec.Arrival < w.Start {
			continue
		}
		if w.End > 0 && rec.Arrival >= w.End {
			s.done = true
			return
		}
		if s.unservable(&rec) {
			continue
		}
		if s.opt.MaxRequests > 0 && s.counts.Replayed >= s.opt.MaxRequests {
			s.done = true
			return
		}
		at := simcore.Tick(math.Round(float64(rec.Arrival-w.Start) * s.scale))
		if s.opt.Horizon > 0 && at >= s.opt.Horizon {
			s.done = true
			return
		}
		s.pending, s.at, s.has = rec, at, true
		s.counts.Replayed++
		return
	}
}

// unservable counts a row that cannot be served and reports it.
func (s *ReplaySource) unservable(r *TraceRecord) bool {
	switch window := s.opt.ContextWindow; {
	case r.Input == 0:
		s.counts.ZeroInput++
	case r.Output == 0:
		s.counts.ZeroOutput++
	case window > 0 && (int64(r.Input) >= window || int64(r.Input)+int64(r.Output) > window):
		s.counts.OverContext++
	default:
		return false
	}
	return true
}

// skip drops the pending row (for the rate pass).
func (s *ReplaySource) skip() { s.advance() }

// Peek returns the next request's arrival (none while a client cap holds
// it back).
func (s *ReplaySource) Peek() (simcore.Tick, bool) {
	if s.cap.blocked() {
		return 0, false
	}
	return s.cap.sendAt(s.at), s.has
}

// Pop fills r with the next row's request. Its prompt blocks carry the
// row's hash ids (shared with every row that agrees on them); the rest
// of its tokens are a stream of its own, named by its line.
func (s *ReplaySource) Pop(r *simcore.Request) bool {
	if !s.has {
		return false
	}
	rec := &s.pending
	prefix := s.chains.prefix(rec.HashIDs, rec.Input)
	r.Content = kv.NewContent(prefix, uint64(rec.Line), rec.Input, rec.Output, s.opt.BlockSize, len(prefix))
	r.Content.Exclusive = true // its stream is its own
	r.ID = int64(s.counts.Replayed - 1)
	r.Arrival = s.cap.sendAt(s.at)
	s.cap.sent()
	r.InputLen = int32(rec.Input)
	r.OutputLen = int32(rec.Output)
	r.SLO = s.class(rec)
	if rec.Session != "" && !s.opt.NoSessions {
		id := intern(s.sessions, rec.Session)
		if int(id) == len(s.rounds) {
			s.rounds = append(s.rounds, 0)
		}
		r.Session, r.Round = id, s.rounds[id]
		s.rounds[id]++
	}
	s.advance()
	return true
}

// class is the row's own class, else one drawn from the mix by the seed
// and the row's line.
func (s *ReplaySource) class(rec *TraceRecord) simcore.SLOClass {
	if rec.Class != "" {
		c, _ := simcore.ParseSLOClass(rec.Class) // the reader checked it
		return c
	}
	u := float64(mix.Splitmix64(uint64(s.opt.Seed)^uint64(rec.Line)*0x9e3779b97f4a7c15)>>11) / (1 << 53)
	return s.opt.SLOMix.pick(u)
}

// Done frees the request's slot under a client cap; without one, rows
// replay open loop at their times.
func (s *ReplaySource) Done(_ *simcore.Request, at simcore.Tick, _ bool) { s.cap.left(at) }

// Err returns the error that ended the replay early (a malformed row),
// or nil.
func (s *ReplaySource) Err() error { return s.err }

// Counts returns the rows replayed and skipped so far.
func (s *ReplaySource) Counts() ReplayCounts { return s.counts }

// Close closes the trace.
func (s *ReplaySource) Close() error { return s.reader.Close() }

// MaxRequests is the request cap (0 = unknown).
func (s *ReplaySource) MaxRequests() int { return s.opt.MaxRequests }
