package cli

import (
	"bytes"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"optimize/storage"
)

// BenchmarkLargeStudies measures, in one run, what a user of large studies
// waits for on this machine, through the command line in process:
//   - slo-cascade, 1,000 trials on 2 workers, with TPE and with random
//     search (s/study for each, and their ratio);
//   - a 10,000-trial slo-cascade study with the template's default sampler
//     on 2 workers: the wall of trials 1-1,000 against 9,001-10,000 (from
//     the trials' finish times), then `study show` and `study export` of
//     it (median of 5).
//
// Each runs once whatever -benchtime says (b.N is ignored): one study is
// the unit. `make bench` runs it; see BENCHMARKS.md.
func BenchmarkLargeStudies(b *testing.B) {
	dir := b.TempDir()
	study := func(b *testing.B, name string, args ...string) time.Duration {
		dsn := "sqlite:///" + filepath.Join(dir, name+".db")
		began := time.Now()
		var out, errs bytes.Buffer
		args = append([]string{"study", "create", "slo-cascade", "--name", name, "--workers", "2", "--storage", dsn}, args...)
		if code := Execute(args, Streams{Out: &out, Err: &errs}); code != 0 {
			b.Fatalf("%v: exit %d: %s", args, code, errs.String())
		}
		return time.Since(began)
	}
	b.Run("1000-trials", func(b *testing.B) {
		tpe := study(b, "tpe1000", "--trials", "1000", "--sampler", "tpe")
		random := study(b, "random1000", "--trials", "1000", "--sampler", "random")
		b.ReportMetric(tpe.Seconds(), "tpe-s")
		b.ReportMetric(random.Seconds(), "random-s")
		b.ReportMetric(tpe.Seconds()/random.Seconds(), "tpe/random")
	})
	b.Run("10000-trials", func(b *testing.B) {
		study(b, "big", "--trials", "10000")
		dsn := "sqlite:///" + filepath.Join(dir, "big.db")
		first, last := blockWalls(b, dsn, "big", 1000)
		b.ReportMetric(first.Seconds(), "trials-1-1000-s")
		b.ReportMetric(last.Seconds(), "trials-9001-10000-s")
		b.ReportMetric(last.Seconds()/first.Seconds(), "late/early")
		for _, cmd := range [][]string{{"study", "show", "big"}, {"study", "export", "big", "--format", "csv", "-o", filepath.Join(dir, "big.csv")}} {
			var took []time.Duration
			for range 5 {
				var out, errs bytes.Buffer
				began := time.Now()
				if code := Execute(append(cmd, "--storage", dsn), Streams{Out: &out, Err: &errs}); code != 0 {
					b.Fatalf("%v: exit %d: %s", cmd, code, errs.String())
				}
				took = append(took, time.Since(began))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[2].Milliseconds()), cmd[1]+"-ms")
		}
	})
}

// blockWalls is the wall time of a study's first and last blocks of size
// trials: from the previous block's last finish (the first trial's start
// for the first block) to the block's last finish, trials in number order.
func blockWalls(b *testing.B, dsn, name string, size int) (first, last time.Duration) {
	_, trials := storedTrials(b, dsn, name)
	var finished []time.Time
	start := time.Time{}
	for _, t := range trials {
		if t.State != storage.TrialComplete || t.FinishedAt == nil {
			continue
		}
		if start.IsZero() || t.StartedAt.Before(start) {
			start = t.StartedAt
		}
		finished = append(finished, *t.FinishedAt)
	}
	n := len(finished)
	if n < 2*size {
		b.Fatalf("%d complete trials, want at least %d", n, 2*size)
	}
	// Trials finish out of number order by at most the workers' overlap:
	// the block's latest finish bounds it.
	latest := func(ts []time.Time) time.Time {
		return slices.MaxFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	}
	first = latest(finished[:size]).Sub(start)
	last = latest(finished[n-size:]).Sub(latest(finished[:n-size]))
	if first <= 0 || last <= 0 {
		b.Fatalf("block walls %v and %v: trials' times out of order", first, last)
	}
	return first, last
}
