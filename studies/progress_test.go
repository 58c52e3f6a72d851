package studies

import (
	"strings"
	"testing"
	"time"
)

// The ETA is the pace so far times the trials left; a pace that would
// overflow time.Duration (1e12 trials printed -2562047h47m16s) says so
// instead, and nothing done yet is "?".
func TestETAText(t *testing.T) {
	for _, c := range []struct {
		elapsed     time.Duration
		done, left  int
		want, maybe string
	}{
		{10 * time.Second, 10, 30, "30s", ""},
		{time.Second, 0, 30, "?", ""},
		{time.Second, 5, 0, "0s", ""},
		{time.Hour, 1, 1_000_000_000_000, "", "over 1000h"},
		{time.Duration(1<<63 - 1), 1, 1 << 62, "", "over 1000h"},
	} {
		got := etaText(c.elapsed, c.done, c.left)
		if (c.want != "" && got != c.want) || (c.maybe != "" && got != c.maybe) || strings.HasPrefix(got, "-") {
			t.Errorf("etaText(%v, %d, %d) = %q, want %q%q", c.elapsed, c.done, c.left, got, c.want, c.maybe)
		}
	}
}
