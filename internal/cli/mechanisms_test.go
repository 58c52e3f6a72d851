package cli

import (
	"encoding/json"
	"math"
	"testing"
)

// summary is the part of simulate's JSON the mechanism tests read.
type summary struct {
	Completed float64 `json:"completed"`
	Rejected  float64 `json:"rejected"`
	TPS       float64 `json:"tokens_per_sec"`
	TTFT      struct {
		P99 float64 `json:"p99"`
	} `json:"ttft_ms"`
	KV struct {
		Offloaded  float64 `json:"offloaded_blocks"`
		Reloaded   float64 `json:"reloaded_blocks"`
		TransferMs float64 `json:"transfer_ms"`
	} `json:"kv"`
	PerSLO map[string]struct {
		Count    float64 `json:"count"`
		Rejected float64 `json:"rejected"`
		TTFT     struct {
			P99 float64 `json:"p99"`
		} `json:"ttft_ms"`
		Attainment *float64 `json:"ttft_attainment"`
	} `json:"per_slo"`
}

// simulateMean runs simulate with --output json and returns the mean over
// seeds (or the single run).
func simulateMean(t *testing.T, args ...string) summary {
	t.Helper()
	mean, _ := simulateSeeds(t, args...)
	return mean
}

// simulateSeeds runs simulate with --output json and returns the mean over
// seeds and each seed's summary (one run: that run, once).
func simulateSeeds(t *testing.T, args ...string) (summary, []summary) {
	t.Helper()
	code, out, errs := run(t, append(append([]string{"simulate"}, args...), "--output", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var multi struct {
		Mean    *summary  `json:"mean"`
		PerSeed []summary `json:"per_seed"`
	}
	if err := json.Unmarshal([]byte(out), &multi); err != nil {
		t.Fatal(err)
	}
	if multi.Mean != nil {
		return *multi.Mean, multi.PerSeed
	}
	var s summary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	return s, []summary{s}
}

var baselineFlags = []string{
	"--workload", "orthogonal-slo", "--seeds", "42,43,44", "--num-instances", "8",
	"--routing-policy", "weighted", "--routing-scorers", "prefix-affinity:3,queue-depth:2,kv-utilization:2",
	"--long-prefill-token-threshold", "256",
}

func with(base []string, extra ...string) []string {
	return append(append([]string(nil), base...), extra...)
}

// SLO-class priority cuts the critical class's TTFT P99 by at least 40% at
// the same throughput, and exempting critical from prefill chunking cuts it
// by at least 15% more. Measured on seeds 42-44: 303 ms at baseline, 132 ms
// with slo-class (-56%), 93 ms without chunking for critical (-29% on
// slo-class); tokens/s within 1.2% of baseline.
func TestSLOPriorityAndPerClassChunking(t *testing.T) {
	base := simulateMean(t, baselineFlags...)
	prio := simulateMean(t, with(baselineFlags, "--scheduler", "priority-fcfs", "--priority-policy", "slo-class")...)
	chunk := simulateMean(t, with(baselineFlags, "--scheduler", "priority-fcfs", "--priority-policy", "slo-class",
		"--slo-prefill-threshold", "critical=0,standard=256,sheddable=256")...)
	b, p, c := base.PerSLO["critical"].TTFT.P99, prio.PerSLO["critical"].TTFT.P99, chunk.PerSLO["critical"].TTFT.P99
	t.Logf("critical TTFT P99: baseline %.1f, slo-class %.1f (%+.1f%%), +no-chunk critical %.1f (%+.1f%% on slo-class)",
		b, p, 100*(p/b-1), c, 100*(c/p-1))
	if p > 0.6*b {
		t.Errorf("slo-class priority: critical TTFT P99 %.1f ms, want ≤ 60%% of baseline %.1f", p, b)
	}
	if c > 0.85*p {
		t.Errorf("no chunking for critical: critical TTFT P99 %.1f ms, want ≤ 85%% of slo-class's %.1f", c, p)
	}
	for name, s := range map[string]summary{"slo-class": prio, "no-chunk": chunk} {
		if d := s.TPS/base.TPS - 1; d < -0.02 || d > 0.02 {
			t.Errorf("%s: tokens/s %.0f vs baseline %.0f (%+.1f%%), want within 2%%", name, s.TPS, base.TPS, 100*d)
		}
	}
}

var pressureFlags = []string{
	"--workload", "multi-turn-kv", "--num-instances", "4", "--total-kv-blocks", "2000",
	"--kv-cpu-blocks", "3000", "--kv-offload-threshold", "0.8", "--kv-transfer-bandwidth", "10",
	"--kv-transfer-base-latency", "100", "--routing-policy", "weighted",
}

// pressureSeeds are ten workload seeds: on one seed the two KV scorers'
// TTFT P99 differ by up to 11% and their reloads by up to 17%, either way,
// so only a mean over several says which is better.
var pressureSeeds = []string{"--seeds", "42,43,44,45,46,47,48,49,50,51"}

// Under this offload setting the CPU tier works and charges its cost model,
// and the kv-pressure scorer, which sees pending CPU→GPU transfers, routes
// differently from kv-utilization but neither better nor worse: one would
// expect it to steer requests away from instances busy reloading and so
// lower TTFT P99 and reloads, and here it does not.
//
// Why no gain (measured, seeds 42-51): an instance busy reloading is one
// whose GPU pool is nearly full — when a routing decision sees a pending
// transfer, that instance's KV utilisation averages about 0.985 — so
// kv-utilization already scores it about 0.015. kv-pressure subtracts the
// transfer penalty (about 0.45 on average, more than the 0.015 every time;
// the thrashing term is 0, no block comes back within 1 ms of leaving) and
// the router clamps every scorer's value to [0,1], so the instance's score
// drops by those 0.015 at most: 0.004 of the composite at weight 2 of 7.
// That happens in 20-28% of the decisions and flips near-ties, not the
// routing pattern. Besides, the transfer only
// lasts the instance's current step (milliseconds), while a request routed
// there waits about 2.6 s in the queue before it is scheduled. Per seed the
// two scorers' TTFT P99 differ by 4.7% on average (either way); over the
// ten seeds kv-pressure's mean TTFT P99 is 0.3% lower and its reloaded
// blocks 3.0% fewer, within the seed-to-seed noise.
func TestTieredKVAndPressureRouting(t *testing.T) {
	const utilScorers, pressureScorers = "prefix-affinity:3,queue-depth:2,kv-utilization:2", "prefix-affinity:3,queue-depth:2,kv-pressure:2"
	flags := with(pressureFlags, pressureSeeds...)

	// The tier works: every seed offloads tens of thousands of blocks
	// (measured 58,000-62,000) and reloads thousands of them (3,500-5,000),
	// and each reload costs the base latency plus ceil(16 tokens / 10
	// per µs) = 102 µs of transfer.
	util, utilRuns := simulateSeeds(t, with(flags, "--routing-scorers", utilScorers)...)
	for i, r := range utilRuns {
		if r.KV.Offloaded < 40000 || r.KV.Reloaded < 2500 {
			t.Errorf("seed run %d: %.0f blocks offloaded, %.0f reloaded; want ≥ 40000 and ≥ 2500 under pressure", i, r.KV.Offloaded, r.KV.Reloaded)
		}
		if want := r.KV.Reloaded * 0.102; math.Abs(r.KV.TransferMs-want) > 1e-6*want {
			t.Errorf("seed run %d: transfer %.3f ms for %.0f reloaded blocks, want 0.102 ms each (%.3f)", i, r.KV.TransferMs, r.KV.Reloaded, want)
		}
	}

	// Without a tier there is nothing to transfer or thrash, and kv-pressure
	// is kv-utilization: the same output, byte for byte.
	single := []string{"simulate", "--workload", "multi-turn-kv", "--num-instances", "4", "--total-kv-blocks", "2000",
		"--routing-policy", "weighted", "--seeds", "42,43,44"}
	codeA, a, _ := run(t, with(single, "--routing-scorers", utilScorers, "--output", "json")...)
	codeB, b, _ := run(t, with(single, "--routing-scorers", pressureScorers, "--output", "json")...)
	if codeA != 0 || codeB != 0 || a != b {
		t.Errorf("single-tier KV: kv-pressure and kv-utilization gave different output (exit %d and %d)", codeA, codeB)
	}

	// With the tier kv-pressure sees the transfers: per seed its TTFT P99
	// moves by 4.7% on average (measured), not 0.
	pressure, pressureRuns := simulateSeeds(t, with(flags, "--routing-scorers", pressureScorers)...)
	moved := 0.0
	for i := range utilRuns {
		moved += math.Abs(pressureRuns[i].TTFT.P99/utilRuns[i].TTFT.P99 - 1)
	}
	moved /= float64(len(utilRuns))
	dP99, dReload := pressure.TTFT.P99/util.TTFT.P99-1, pressure.KV.Reloaded/util.KV.Reloaded-1
	t.Logf("mean of %d seeds: kv-utilization TTFT P99 %.1f ms, reloaded %.0f; kv-pressure TTFT P99 %.1f ms (%+.1f%%), reloaded %.0f (%+.1f%%); per-seed |ΔP99| %.1f%%",
		len(utilRuns), util.TTFT.P99, util.KV.Reloaded, pressure.TTFT.P99, 100*dP99, pressure.KV.Reloaded, 100*dReload, 100*moved)
	if moved < 0.015 {
		t.Errorf("kv-pressure moved the per-seed TTFT P99 by %.2f%% on average, want ≥ 1.5%%: does it see the transfers?", 100*moved)
	}
	// ...but gains nothing: the means stay within the seed-to-seed noise. If
	// kv-pressure ever lowers them beyond it, assert that gain here instead.
	if dP99 < -0.05 || dP99 > 0.05 {
		t.Errorf("kv-pressure mean TTFT P99 %+.1f%% on kv-utilization's, want within ±5%%", 100*dP99)
	}
	if dReload < -0.10 || dReload > 0.10 {
		t.Errorf("kv-pressure mean reloaded blocks %+.1f%% on kv-utilization's, want within ±10%%", 100*dReload)
	}
}

// slo-gated sheds only the classes it lists, and only while the cluster's
// queue is deep: with sheddable gated at a total queue depth of 20 it sheds
// at least half the sheddable requests (measured 263 of 307, seeds 42-44)
// and none of the others, whose TTFT P99 drops by at least 25% (measured
// -45% for critical and standard) and critical's attainment of 100 ms rises
// by at least 0.3 (measured 0.15 → 0.72); gated at 200 it sheds at most
// half as many (measured 49).
func TestSLOGatedShedsOnlyListedClasses(t *testing.T) {
	ttft := with(baselineFlags, "--slo-ttft", "critical=100ms,standard=300ms,sheddable=1s")
	open := simulateMean(t, ttft...)
	s := simulateMean(t, with(ttft, "--admission-policy", "slo-gated", "--slo-gate", "sheddable=20")...)
	high := simulateMean(t, with(ttft, "--admission-policy", "slo-gated", "--slo-gate", "sheddable=200")...)
	shed := s.PerSLO["sheddable"]
	t.Logf("sheddable: %.1f of %.1f shed at gate 20, %.1f at gate 200", shed.Rejected, shed.Count, high.PerSLO["sheddable"].Rejected)
	if open.Rejected != 0 {
		t.Errorf("always-admit rejected %v requests", open.Rejected)
	}
	if shed.Rejected < 0.5*shed.Count {
		t.Errorf("gate 20 shed %.1f of %.1f sheddable requests, want at least half", shed.Rejected, shed.Count)
	}
	if h := high.PerSLO["sheddable"].Rejected; h > 0.5*shed.Rejected {
		t.Errorf("gate 200 shed %.1f sheddable requests, want at most half of gate 20's %.1f", h, shed.Rejected)
	}
	for _, cl := range []string{"critical", "standard"} {
		g, o := s.PerSLO[cl], open.PerSLO[cl]
		t.Logf("%s: TTFT P99 %.1f ms gated, %.1f open (%+.1f%%)", cl, g.TTFT.P99, o.TTFT.P99, 100*(g.TTFT.P99/o.TTFT.P99-1))
		if g.Rejected != 0 {
			t.Errorf("%s: %v rejected; only sheddable is gated", cl, g.Rejected)
		}
		if g.TTFT.P99 > 0.75*o.TTFT.P99 {
			t.Errorf("%s: TTFT P99 %.1f ms with the gate, want ≤ 75%% of always-admit's %.1f", cl, g.TTFT.P99, o.TTFT.P99)
		}
	}
	g, o := s.PerSLO["critical"].Attainment, open.PerSLO["critical"].Attainment
	if g == nil || o == nil {
		t.Fatal("no critical TTFT attainment")
	}
	t.Logf("critical attainment of 100 ms: %.3f gated, %.3f open", *g, *o)
	if *g < *o+0.3 || *g > 1 {
		t.Errorf("critical TTFT attainment %.3f with the gate, want ≥ always-admit's %.3f + 0.3", *g, *o)
	}
}
