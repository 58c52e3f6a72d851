package workloads_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"optimize/simcore"
	"optimize/simcore/workload"
	"optimize/strategies/settings"
	"optimize/strategies/workloads"
)

// A study on the Mooncake trace stores its windows in its workload's name
// (span to the last row's second, window length the first half / 10), the
// name read again is the same, and the study's windows are the first
// half's, disjoint and earlier than every held-out one.
func TestStudyWorkloadNameWritesTheWindows(t *testing.T) {
	rows := mooncakeRows(t)
	lastUS := int64(math.Round((rows[len(rows)-1].Timestamp - rows[0].Timestamp) * 1000))
	end := (lastUS/1e6 + 1) * 1e6
	name, err := workloads.StudyName("mooncake-conversation?rate=2", 3)
	if err != nil {
		t.Fatal(err)
	}
	span := workload.TraceWindow{End: end}
	length := (end / 2 / workloads.DefaultSeedWindows) / 1e6 * 1e6
	want := "mooncake-conversation?rate=2&window=" + span.String() + "&seed-window=" + (time.Duration(length) * time.Microsecond).String()
	if name != want {
		t.Fatalf("stored name %q, want %q", name, want)
	}
	again, err := workloads.StudyName(name, 3)
	if err != nil || again != name {
		t.Errorf("the stored name read again is %q (%v), want it unchanged", again, err)
	}
	wl, err := workloads.Resolve(name)
	if err != nil {
		t.Fatal(err)
	}
	split, ok := wl.Split()
	if !ok || split.PerHalf() != workloads.DefaultSeedWindows {
		t.Fatalf("split %+v (%v): want %d windows a half", split, ok, workloads.DefaultSeedWindows)
	}
	study := split.StudySeeds([]int64{42, 43, 44})
	for i, s := range study {
		w := split.Window(s.Window)
		if s.Window != int64(i+1) || w.End > split.Midpoint() || w.End-w.Start != length {
			t.Errorf("seed %d: window %d %s, want window %d of %d µs before the midpoint %d", s.Seed, s.Window, w, i+1, length, split.Midpoint())
		}
	}
	held := split.HeldOut()
	if len(held) != workloads.DefaultSeedWindows {
		t.Errorf("%d held-out windows, want %d", len(held), workloads.DefaultSeedWindows)
	}
	for _, n := range held {
		if w := split.Window(n); w.Start < split.Midpoint() || w.End > split.Span.End {
			t.Errorf("held-out window %d is %s, outside the second half [%d, %d)", n, w, split.Midpoint(), split.Span.End)
		}
	}
	if err := split.CheckHeldOut([]int64{held[0], 3}); err == nil || !strings.Contains(err.Error(), "window 3 is not held out") {
		t.Errorf("window 3 of the first half accepted as held out: %v", err)
	}
	// At a regime, the controls go before it.
	if at, err := workloads.StudyName("mooncake-conversation@rate-0.5x", 3); err != nil || !strings.HasSuffix(at, "&seed-window=2m56s@rate-0.5x") {
		t.Errorf("at a regime: %q (%v)", at, err)
	}
	if _, err := workloads.StudyName("mooncake-conversation?seed-window=20m", 3); err == nil || !strings.Contains(err.Error(), "shorter seed-window") {
		t.Errorf("three 20-minute windows in a 29-minute half: %v", err)
	}
}

// Each seed of a split trace replays exactly the trace's rows in its
// window, at one time scale for every window: the one that gives the whole
// studied part the rate asked for.
func TestSeedsReplayTheirWindows(t *testing.T) {
	rows := mooncakeRows(t)
	name, err := workloads.StudyName("mooncake-conversation?rate=2&window=0s-20m&seed-window=90s", 2)
	if err != nil {
		t.Fatal(err)
	}
	wl, err := workloads.Resolve(name)
	if err != nil {
		t.Fatal(err)
	}
	split, _ := wl.Split()
	cfg, err := settings.Standard()
	if err != nil {
		t.Fatal(err)
	}
	// The rate over the studied part, from the rows themselves (the model's
	// context holds every row of the first 20 minutes).
	in20 := 0
	var last20 int64
	for _, r := range rows {
		if at := arrivalUS(rows, r); at < 20*60e6 && r.Input > 0 && r.Output > 0 {
			in20, last20 = in20+1, at
		}
	}
	wantScale := float64(in20) / (float64(last20) / 1e6) / 2
	seeds := []int64{42, 43}
	ev := wl.OnSeeds(seeds)
	for i, seed := range seeds {
		w := split.Window(int64(i + 1))
		var want []int64 // the window's arrivals, µs since its start
		for _, r := range rows {
			if at := arrivalUS(rows, r); at >= w.Start && at < w.End && r.Input > 0 && r.Output > 0 {
				want = append(want, at-w.Start)
			}
		}
		cfg.Seed = seed
		src, err := ev.Trace.Source(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var got []simcore.Tick
		var req simcore.Request
		for src.Pop(&req) {
			got = append(got, req.Arrival)
		}
		src.Close()
		if len(got) != len(want) || len(want) < 100 {
			t.Fatalf("seed %d replays %d requests, want the %d rows of window %s", seed, len(got), len(want), w)
		}
		if scale := float64(got[len(got)-1]) / float64(want[len(want)-1]); math.Abs(scale/wantScale-1) > 1e-3 {
			t.Errorf("seed %d: time scale %.4f, want %.4f (the whole part's rate / 2 req/s)", seed, scale, wantScale)
		}
	}
}

func arrivalUS(rows []mooncakeRow, r mooncakeRow) int64 {
	return int64(math.Round((r.Timestamp - rows[0].Timestamp) * 1000))
}
