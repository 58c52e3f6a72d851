package workloads

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"optimize/simcore/workload"
)

// A study on a replayed trace is held out in time. The studied part of
// the trace (its `window=`, the whole trace by default) is cut at its
// midpoint; each half is cut from its start into windows of one length
// (`seed-window=`), numbered 1…K in the first half and K+1…2K in the
// second (a remainder shorter than a window is not used). The study's
// i-th seed replays window i of the first half on its own, its SLO mix
// drawn from the seed; `study validate` replays windows of the second
// half, which no trial saw, each drawing its SLO mix from its number.
// A time scale (`scale=`, or `rate=`: the scale that gives the whole
// studied part that mean rate) applies to every window alike, so each
// keeps its own rate and burstiness.

// DefaultSeedWindows is how many windows the first half is cut into when
// the workload names no window length and the study has no more seeds.
const DefaultSeedWindows = 10

// TraceSplit is a study's cut of a trace into windows.
type TraceSplit struct {
	Span   workload.TraceWindow // the studied part, End > 0
	Length int64                // µs on the trace's clock
}

// half is the length of each half of the span.
func (s TraceSplit) half() int64 { return (s.Span.End - s.Span.Start) / 2 }

// PerHalf is K, the number of windows in each half.
func (s TraceSplit) PerHalf() int { return int(s.half() / s.Length) }

// Window is window n (1-based; 1…K the first half, K+1…2K the second).
func (s TraceSplit) Window(n int64) workload.TraceWindow {
	k := int64(s.PerHalf())
	start := s.Span.Start + (n-1)*s.Length
	if n > k {
		start = s.Span.Start + s.half() + (n-k-1)*s.Length
	}
	return workload.TraceWindow{Start: start, End: start + s.Length}
}

// Midpoint is where the held-out half starts, µs since the trace's first row.
func (s TraceSplit) Midpoint() int64 { return s.Span.Start + s.half() }

// HeldOut lists the second half's windows, K+1…2K: `study validate`'s
// default.
func (s TraceSplit) HeldOut() []int64 {
	k := int64(s.PerHalf())
	out := make([]int64, 0, k)
	for n := k + 1; n <= 2*k; n++ {
		out = append(out, n)
	}
	return out
}

// CheckHeldOut checks that windows are of the second half.
func (s TraceSplit) CheckHeldOut(windows []int64) error {
	k := int64(s.PerHalf())
	for _, n := range windows {
		if n <= k || n > 2*k {
			return fmt.Errorf("window %d is not held out: the study tunes on windows 1-%d (the first half, %s) and holds out %d-%d (the second, %s)",
				n, k, workload.TraceWindow{Start: s.Span.Start, End: s.Midpoint()}, k+1, 2*k, workload.TraceWindow{Start: s.Midpoint(), End: s.Span.End})
		}
	}
	return nil
}

// SeedWindow is a seed and the window it replays.
type SeedWindow struct {
	Seed   int64  `json:"seed"`
	Window int64  `json:"window"`
	Span   string `json:"span"` // START-END since the trace's first row
}

// StudySeeds pairs the study's seeds with the first half's windows, in
// order.
func (s TraceSplit) StudySeeds(seeds []int64) []SeedWindow {
	out := make([]SeedWindow, len(seeds))
	for i, seed := range seeds {
		n := int64(i + 1)
		out[i] = SeedWindow{Seed: seed, Window: n, Span: s.Window(n).String()}
	}
	return out
}

// Split is the workload's cut into windows, for a trace named the way a
// study stores it (StudyName: a span with an end and a window
// length); false for anything else, whose seeds replay the whole trace.
func (w *Workload) Split() (TraceSplit, bool) {
	if w.Trace == nil || w.Trace.Replay.Window.End == 0 || w.Trace.Replay.SeedWindow == 0 {
		return TraceSplit{}, false
	}
	return TraceSplit{Span: w.Trace.Replay.Window, Length: w.Trace.Replay.SeedWindow}, true
}

// StudyName is the workload name a study on it stores: for a
// trace, the name with the span's end (the last row's second, rounded up)
// and the window length written out, so that the study's windows never
// depend on a default read again; other workloads' names unchanged. It
// checks that the first half holds a window for each of the seeds.
func StudyName(name string, seeds int) (string, error) {
	w, err := Resolve(name)
	if err != nil || w.Trace == nil {
		return name, err
	}
	o := w.Trace.Replay
	span, length := o.Window, o.SeedWindow
	if span.End == 0 {
		last, err := lastArrival(w.Trace, span.Start)
		if err != nil {
			return "", err
		}
		span.End = (last/1e6 + 1) * 1e6
	}
	split := TraceSplit{Span: span, Length: length}
	if length == 0 {
		split.Length = split.half() / int64(max(DefaultSeedWindows, seeds))
		if split.Length >= 1e6 {
			split.Length -= split.Length % 1e6 // whole seconds
		}
		if split.Length < 1 {
			return "", fmt.Errorf("workload %q: the studied part %s is too short to cut into %d windows", name, span, max(DefaultSeedWindows, seeds))
		}
	}
	if k := split.PerHalf(); k < max(seeds, 2) {
		return "", fmt.Errorf("workload %q: %d seeds need %d windows of %s in the first half of %s (%s), which holds %d; give a shorter seed-window or fewer seeds",
			name, seeds, max(seeds, 2), time.Duration(split.Length)*time.Microsecond, span, time.Duration(split.half())*time.Microsecond, k)
	}
	if span == o.Window && length == o.SeedWindow {
		return name, nil
	}
	head, regime, hasRegime := strings.Cut(name, "@")
	base, controls, _ := strings.Cut(head, "?")
	var items []string
	for _, item := range strings.Split(controls, "&") {
		key, _, _ := strings.Cut(item, "=")
		if key = strings.TrimSpace(key); key != "" && key != "window" && key != "seed-window" {
			items = append(items, item)
		}
	}
	items = append(items, "window="+span.String(), "seed-window="+(time.Duration(split.Length)*time.Microsecond).String())
	out := base + "?" + strings.Join(items, "&")
	if hasRegime {
		out += "@" + regime
	}
	return out, nil
}

// lastArrival reads the trace to its last row at or after start and
// returns that row's time.
func lastArrival(t *Trace, start int64) (int64, error) {
	r, err := t.Open()
	if err != nil {
		return 0, err
	}
	defer r.Close()
	last := int64(-1)
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
		last = max(last, rec.Arrival)
	}
	if last < start {
		return 0, fmt.Errorf("trace %s: no row at or after the window's start %s", t.Name, workload.TraceWindow{Start: start})
	}
	return last, nil
}

// OnSeeds is the workload as a study's evaluation replays it: for a split
// trace, the study's i-th seed replays window i of the first half; other
// workloads unchanged.
func (w *Workload) OnSeeds(seeds []int64) *Workload {
	split, ok := w.Split()
	if !ok {
		return w
	}
	windows := map[int64]workload.TraceWindow{}
	for i, s := range seeds {
		windows[s] = split.Window(int64(i + 1))
	}
	return w.onWindows(windows)
}

// OnWindows is the workload replaying windows by number, each run's seed
// being the window's number (held-out windows: `study validate`). Only
// for a split trace; other workloads unchanged.
func (w *Workload) OnWindows(numbers []int64) *Workload {
	split, ok := w.Split()
	if !ok {
		return w
	}
	windows := map[int64]workload.TraceWindow{}
	for _, n := range numbers {
		windows[n] = split.Window(n)
	}
	return w.onWindows(windows)
}

func (w *Workload) onWindows(windows map[int64]workload.TraceWindow) *Workload {
	t := *w.Trace
	t.windows, t.scales = windows, &scaleCache{}
	out := *w
	out.Trace = &t
	return &out
}

// scaleCache keeps the time scale of a split trace's studied part, one
// per set of options that decide it, so that a study measures `rate=`
// once rather than on every run.
type scaleCache struct {
	mu     sync.Mutex
	scales map[scaleKey]float64
}

// scaleKey is what the time scale depends on: the span, the rate or scale
// asked for, and the context window (rows longer are not replayed, so do
// not count toward the rate).
type scaleKey struct {
	span                  workload.TraceWindow
	timeScale, targetRate float64
	contextWindow         int64
}

// windowOptions sets opt to replay the seed's window at the studied
// part's time scale.
func (t *Trace) windowOptions(opt *workload.ReplayOptions) error {
	w, ok := t.windows[opt.Seed]
	if !ok {
		seeds := make([]int64, 0, len(t.windows))
		for s := range t.windows {
			seeds = append(seeds, s)
		}
		slices.Sort(seeds)
		return fmt.Errorf("trace %s: seed %d replays no window (seeds with a window: %v)", t.Name, opt.Seed, seeds)
	}
	key := scaleKey{span: opt.Window, timeScale: opt.TimeScale, targetRate: opt.TargetRate, contextWindow: opt.ContextWindow}
	c := t.scales
	c.mu.Lock()
	defer c.mu.Unlock()
	scale, ok := c.scales[key]
	if !ok {
		whole := *opt
		whole.Horizon, whole.MaxRequests = 0, 0
		var err error
		if scale, err = workload.TimeScale(t.Open, whole); err != nil {
			return err
		}
		if c.scales == nil {
			c.scales = map[scaleKey]float64{}
		}
		c.scales[key] = scale
	}
	opt.Window, opt.TimeScale, opt.TargetRate = w, scale, 0
	return nil
}
