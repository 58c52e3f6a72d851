package cli

import (
	"encoding/json"
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
	code, out, errs := run(t, append(append([]string{"simulate"}, args...), "--output", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var multi struct {
		Mean *summary `json:"mean"`
	}
	if err := json.Unmarshal([]byte(out), &multi); err != nil {
		t.Fatal(err)
	}
	if multi.Mean != nil {
		return *multi.Mean
	}
	var s summary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

var baselineFlags = []string{
	"--workload", "orthogonal-slo", "--seeds", "42,43,44", "--num-instances", "8",
	"--routing-policy", "weighted", "--routing-scorers", "prefix-affinity:3,queue-depth:2,kv-utilization:2",
	"--long-prefill-token-threshold", "256",
}

func with(base []string, extra ...string) []string {
	return append(append([]string(nil), base...), extra...)
}

// The seeds' first two levers (seed 004 iterations 1 and 4): SLO-class
// priority cuts the critical class's TTFT P99 by ≥ 40% at the same
// throughput, and no chunking for critical cuts it further.
func TestSLOPriorityAndPerClassChunking(t *testing.T) {
	base := simulateMean(t, baselineFlags...)
	prio := simulateMean(t, with(baselineFlags, "--scheduler", "priority-fcfs", "--priority-policy", "slo-class")...)
	chunk := simulateMean(t, with(baselineFlags, "--scheduler", "priority-fcfs", "--priority-policy", "slo-class",
		"--slo-prefill-threshold", "critical=0,standard=256,sheddable=256")...)
	b, p, c := base.PerSLO["critical"].TTFT.P99, prio.PerSLO["critical"].TTFT.P99, chunk.PerSLO["critical"].TTFT.P99
	t.Logf("critical TTFT P99: baseline %.1f, slo-class %.1f (%+.1f%%), +no-chunk critical %.1f (%+.1f%%)",
		b, p, 100*(p/b-1), c, 100*(c/b-1))
	if p > 0.6*b {
		t.Errorf("slo-class priority: critical TTFT P99 %.1f ms, want ≤ 60%% of baseline %.1f", p, b)
	}
	if c >= p {
		t.Errorf("no chunking for critical should cut its TTFT P99 further: %.1f vs %.1f", c, p)
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

// Under seed 001's offload setting the CPU tier works, and the
// kv-pressure scorer (which sees transfers) routes differently from
// kv-utilization.
func TestTieredKVAndPressureRouting(t *testing.T) {
	util := simulateMean(t, with(pressureFlags, "--routing-scorers", "prefix-affinity:3,queue-depth:2,kv-utilization:2")...)
	if util.KV.Offloaded == 0 || util.KV.Reloaded == 0 || util.KV.TransferMs == 0 {
		t.Fatalf("tier idle under pressure: %+v", util.KV)
	}
	pressure := simulateMean(t, with(pressureFlags, "--routing-scorers", "prefix-affinity:3,queue-depth:2,kv-pressure:2")...)
	t.Logf("kv-utilization: TTFT P99 %.1f, reloaded %.0f; kv-pressure: TTFT P99 %.1f, reloaded %.0f",
		util.TTFT.P99, util.KV.Reloaded, pressure.TTFT.P99, pressure.KV.Reloaded)
	if pressure.TTFT.P99 == util.TTFT.P99 && pressure.KV.Reloaded == util.KV.Reloaded {
		t.Error("kv-pressure and kv-utilization gave identical results")
	}
}

// slo-gated sheds only the classes it lists, and only under load.
func TestSLOGatedShedsOnlyListedClasses(t *testing.T) {
	s := simulateMean(t, with(baselineFlags, "--admission-policy", "slo-gated", "--slo-gate", "sheddable=20",
		"--slo-ttft", "critical=100ms,standard=300ms,sheddable=1s")...)
	if s.PerSLO["sheddable"].Rejected == 0 {
		t.Fatal("no sheddable request was shed at threshold 20")
	}
	for _, cl := range []string{"critical", "standard"} {
		if r := s.PerSLO[cl].Rejected; r != 0 {
			t.Errorf("%s: %v rejected; only sheddable is gated", cl, r)
		}
		if a := s.PerSLO[cl].Attainment; a == nil || *a <= 0 || *a > 1 {
			t.Errorf("%s: TTFT attainment %v, want a fraction", cl, a)
		}
	}
}
