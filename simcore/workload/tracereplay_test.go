package workload

import (
	"os"
	"strings"
	"testing"

	"optimize/simcore"
)

func replayAll(t *testing.T, path string, opt ReplayOptions) ([]simcore.Request, ReplayCounts) {
	t.Helper()
	if opt.BlockSize == 0 {
		opt.BlockSize = 16
	}
	src, err := NewReplay(func() (*TraceReader, error) { return OpenTrace(path, "") }, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var out []simcore.Request
	for {
		var r simcore.Request
		r.Reset()
		if !src.Pop(&r) {
			break
		}
		out = append(out, r)
	}
	if err := src.Err(); err != nil {
		t.Fatal(err)
	}
	return out, src.Counts()
}

func TestReplayControls(t *testing.T) {
	data, _ := os.ReadFile("testdata/burstgpt.csv")
	path := writeFile(t, "b.csv", string(data), false)
	// Row 2 has no output: skipped and counted, never a request.
	got, counts := replayAll(t, path, ReplayOptions{TimeScale: 2})
	if len(got) != 3 || counts != (ReplayCounts{Replayed: 3, ZeroOutput: 1}) {
		t.Fatalf("%d requests, counts %+v", len(got), counts)
	}
	if got[1].Arrival != 226_000_000 || got[2].Arrival != 227_000_000 {
		t.Errorf("scaled arrivals %d, %d", got[1].Arrival, got[2].Arrival)
	}
	// Sessions: s1's second row is its round 1; rows without one have none.
	if got[0].Session != 0 || got[1].Session != 0 || got[1].Round != 1 || got[2].Session != 1 {
		t.Errorf("sessions %+v", got)
	}
	// A window from 40 s: rows at 113 and 113.5 s since the first, from 0.
	got, _ = replayAll(t, path, ReplayOptions{Window: TraceWindow{Start: 40_000_000}})
	if len(got) != 2 || got[0].Arrival != 73_000_000 {
		t.Errorf("window: %d requests, first at %d", len(got), got[0].Arrival)
	}
	// A target rate: 3 requests over 113.5 s scaled to 0.3 req/s.
	got, _ = replayAll(t, path, ReplayOptions{TargetRate: 0.3})
	if last := got[len(got)-1].Arrival; last != 10_000_000 {
		t.Errorf("at 0.3 req/s the last of 3 arrives at %d µs, want 10 s", last)
	}
	// The context window skips the 1360+183-token row.
	_, counts = replayAll(t, path, ReplayOptions{ContextWindow: 1500, MaxRequests: 5})
	if counts.OverContext != 1 || counts.Replayed != 2 {
		t.Errorf("context window: %+v", counts)
	}
}

func TestReplaySLOMixIsSeeded(t *testing.T) {
	var b strings.Builder
	b.WriteString("TIMESTAMP,ContextTokens,GeneratedTokens\n")
	for i := range 2000 {
		b.WriteString("2023-11-16 18:15:46.6805900,10,")
		b.WriteString(string(rune('1' + i%9)))
		b.WriteString("\n")
	}
	path := writeFile(t, "a.csv", b.String(), false)
	mix, err := ParseSLOMix("critical=0.2,standard=0.5,sheddable=0.3")
	if err != nil {
		t.Fatal(err)
	}
	classes := func(seed int64) (out []simcore.SLOClass, n [simcore.NumSLOClasses]int) {
		got, _ := replayAll(t, path, ReplayOptions{Seed: seed, SLOMix: mix})
		for _, r := range got {
			out = append(out, r.SLO)
			n[r.SLO]++
		}
		return out, n
	}
	a, n := classes(1)
	b2, _ := classes(1)
	c, _ := classes(2)
	if !equalClasses(a, b2) || equalClasses(a, c) {
		t.Fatal("the same seed must give the same classes, another seed others")
	}
	for _, s := range mix {
		if share := float64(n[s.Class]) / 2000; share < s.Share-0.04 || share > s.Share+0.04 {
			t.Errorf("%s: share %.3f, want %.2f ± 0.04", s.Class, share, s.Share)
		}
	}
}

func equalClasses(a, b []simcore.SLOClass) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Requests agreeing on k hash ids share exactly the simulator blocks
// inside their first k×512 tokens, at any block size.
func TestBlockChainsShareAgreeingIDs(t *testing.T) {
	for _, bs := range []int{16, 48, 512, 1000} {
		b := newBlockChains(bs)
		p1 := append([]uint64(nil), b.prefix([]uint64{1, 2, 3}, 1400)...)
		p2 := b.prefix([]uint64{1, 2, 9}, 1300)
		p3 := b.prefix([]uint64{1, 2}, 1024)
		common := 0
		for common < min(len(p1), len(p2)) && p1[common] == p2[common] {
			common++
		}
		if want := 1024 / bs; common != want {
			t.Errorf("block size %d: %d blocks shared, want %d", bs, common, want)
		}
		if len(p3) != 1024/bs || (len(p3) > 0 && p3[len(p3)-1] != p1[len(p3)-1]) {
			t.Errorf("block size %d: a prompt of the two shared ids is %d blocks of the first", bs, len(p3))
		}
	}
}
