package cluster

import (
	"testing"

	"optimize/simcore"
	"optimize/simcore/latency"
	"optimize/simcore/metrics"
	"optimize/simcore/workload"
)

// The transfer duration by hand, Llama-3.1-8B in bf16 at TP1: 32 layers ·
// 2 (K, V) · 128 head width · 8 KV heads · 2 bytes = 131,072 bytes a token.
func TestTransferDuration(t *testing.T) {
	const perToken = 32 * 2 * 128 * 8 * 2.0
	for _, c := range []struct {
		name                string
		blocks, blockSize   int64
		bytesPerToken, gbps float64
		baseMs              float64
		active              int
		want                int64
	}{
		// 185 tokens → 12 blocks of 16 → 25,165,824 B at 25,000 B/µs =
		// 1006.63 µs, + 50 µs base = 1056.63 → 1057 (BLIS measured 1057).
		{"one request", 12, 16, perToken, 25, 0.05, 0, 1057},
		// Contention: 3 in flight at the start gets 25/3 GB/s: 3019.9 + 50 → 3070.
		{"a third of the link", 12, 16, perToken, 25, 0.05, 3, 3070},
		// One active transfer keeps the whole link.
		{"alone", 12, 16, perToken, 25, 0.05, 1, 1057},
		// TP2 halves the bytes: 503.3 + 500 µs base → 1004.
		{"prefill TP2, 0.5 ms base", 12, 16, perToken / 2, 25, 0.5, 0, 1004},
		// Nothing to move and no base: still 1 µs.
		{"empty", 0, 16, perToken, 25, 0, 0, 1},
	} {
		if got := transferDuration(c.blocks, c.blockSize, c.bytesPerToken, c.gbps, c.baseMs, c.active); got != c.want {
			t.Errorf("%s: %d µs, want %d", c.name, got, c.want)
		}
	}
	b, err := latency.KVBytesPerToken(latency.Arch{Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, BytesPerParam: 2}, 1)
	if err != nil || b != perToken {
		t.Errorf("KV bytes per token of Llama-3.1-8B at TP1: %v (%v), want %v", b, err, perToken)
	}
}

// The decider by hand, blocks of 16 tokens: a 1,000-token prompt whose
// first 50 blocks (800 tokens) the decode instance holds has 200 tokens
// not cached: prefix-threshold 256 keeps it whole, 199 splits it, 200
// does not (strictly more); always splits, never does not.
func TestPDDecider(t *testing.T) {
	r := &simcore.Request{InputLen: 1000}
	if got := nonCached(r, 50, 16); got != 200 {
		t.Fatalf("non-cached tokens %d, want 200", got)
	}
	p := &pdState{cfg: &PDConfig{}, blockSize: 16}
	split := func(decider string, threshold int64, cached int) bool {
		p.cfg.Decider, p.cfg.PrefixThreshold = decider, threshold
		if decider != PDPrefixThreshold {
			return p.disaggregate(nil, r, 0)
		}
		return nonCached(r, cached, 16) > threshold
	}
	for _, c := range []struct {
		decider   string
		threshold int64
		want      bool
	}{{PDPrefixThreshold, 256, false}, {PDPrefixThreshold, 199, true}, {PDPrefixThreshold, 200, false}, {PDAlways, 0, true}, {PDNever, 0, false}, {"", 0, false}} {
		if got := split(c.decider, c.threshold, 50); got != c.want {
			t.Errorf("%q threshold %d: split %v, want %v", c.decider, c.threshold, got, c.want)
		}
	}
	// The view: copies taken at a time hold the changes before it only.
	copied := simcore.Tick(0)
	v := newPDView(2, &copied)
	r.Content = simcore.Request{}.Content
	r.Content.Prefix = []uint64{11, 12, 13}
	r.Content.Input, r.Content.Shared = 3, 3
	v.observe(1, 11, true, 10)
	v.observe(1, 12, true, 20)
	v.observe(1, 13, true, 30)
	if got := v.cachedBlocks(1, r, nil); got != 0 {
		t.Errorf("before any copy: %d blocks cached, want 0 (the first copy is empty)", got)
	}
	copied = 30 // a copy at 30 precedes what happens at 30
	if got := v.cachedBlocks(1, r, nil); got != 2 {
		t.Errorf("copy at 30: %d blocks cached, want 2", got)
	}
	v.observe(1, 11, false, 40)
	copied = 50
	if got := v.cachedBlocks(1, r, nil); got != 0 {
		t.Errorf("copy at 50, first block evicted at 40: %d blocks cached, want 0 (a leading run)", got)
	}
	if got := v.cachedBlocks(0, r, nil); got != 0 {
		t.Errorf("instance 0: %d blocks cached, want 0", got)
	}
}

// The pools' checks name the setting and what is allowed.
func TestPDConfigErrors(t *testing.T) {
	for _, c := range []struct {
		pd   PDConfig
		n    int
		want string
	}{
		{PDConfig{Prefill: 2}, 4, "pd.prefill_instances: 2 prefill instances need a decode pool: pd.decode_instances or pd.shared_instances ≥ 1, got 0"},
		{PDConfig{Prefill: 2, Decode: 3}, 4, "num_instances: must be ≥ the pools' 5 instances (2 prefill + 3 decode + 0 shared), got 4"},
		{PDConfig{Prefill: 1, Decode: 1, Decider: "sometimes"}, 2, `pd.decider: unknown value "sometimes" (allowed: never, always, prefix-threshold)`},
		{PDConfig{Prefill: 1, Decode: 1, TransferBandwidth: -1}, 2, "pd.transfer_bandwidth_gbps: must be a finite number > 0 GB/s (0 = 25), got -1"},
		{PDConfig{Shared: 2, Decider: PDAlways}, 2, ""},
	} {
		err := c.pd.check(c.n)
		if got := errString(err); got != c.want {
			t.Errorf("%+v: %q, want %q", c.pd, got, c.want)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A split request's life, on a small P/D cluster in BLIS f90a1e3a's
// world: every request completes, once, with a TTFT from its arrival to
// its decode instance's first token, and the counts add up; never keeps
// every request whole on the decode pool; shared instances serve both.
func TestPDRuns(t *testing.T) {
	spec := &workload.Spec{Version: "2", Seed: 7, AggregateRate: 20, NumRequests: 300, Clients: []workload.Client{{
		ID: "c", RateFraction: 1, Arrival: workload.Arrival{Process: "poisson"},
		Input:  workload.Distribution{Type: "gaussian", Params: map[string]float64{"mean": 600, "std_dev": 200, "min": 50, "max": 2000}},
		Output: workload.Distribution{Type: "gaussian", Params: map[string]float64{"mean": 60, "std_dev": 30, "min": 1, "max": 200}},
	}}}
	run := func(pd PDConfig, n int) metrics.Summary {
		t.Helper()
		cfg := Defaults()
		inWorld(&cfg, latency.KindTrainedPhysics)
		cfg.NumInstances, cfg.PD = n, pd
		cfg.PD.TransferBandwidth, cfg.PD.TransferBaseLatency = 25, 0.05
		return runSpec(t, cfg, spec, 7)
	}
	for _, c := range []struct {
		name            string
		pd              PDConfig
		n               int
		split, local    float64
		prefillAtLeast1 bool
	}{
		{"always 1P:2D", PDConfig{Prefill: 1, Decode: 2, Decider: PDAlways}, 3, 300, 0, true},
		{"never 1P:2D", PDConfig{Prefill: 1, Decode: 2, Decider: PDNever}, 3, 0, 300, false},
		{"always on 2 shared + a spare", PDConfig{Shared: 2, Decider: PDAlways}, 3, 300, 0, true},
	} {
		s := run(c.pd, c.n)
		if s.Completed != 300 || s.Dropped != 0 {
			t.Errorf("%s: completed %v, dropped %v; want 300, 0", c.name, s.Completed, s.Dropped)
		}
		if *s.PD.Disaggregated != c.split || *s.PD.Local != c.local {
			t.Errorf("%s: split %v, local %v; want %v, %v", c.name, *s.PD.Disaggregated, *s.PD.Local, c.split, c.local)
		}
		if (*s.PD.PrefillThroughput > 0) != c.prefillAtLeast1 {
			t.Errorf("%s: prefill pool completions/s %v", c.name, *s.PD.PrefillThroughput)
		}
		if c.split > 0 && !(s.TTFT.Mean > *s.PD.TransferMean) {
			t.Errorf("%s: TTFT mean %v ms within the transfer's %v ms", c.name, s.TTFT.Mean, *s.PD.TransferMean)
		}
		if s.OutputTokens == 0 || s.InputTokens == 0 {
			t.Errorf("%s: tokens in %v, out %v", c.name, s.InputTokens, s.OutputTokens)
		}
	}
	// Tight decode KV: splits that do not fit are dropped and counted.
	cfg := PDConfig{Prefill: 1, Decode: 1, Decider: PDAlways}
	s := func() metrics.Summary {
		c := Defaults()
		inWorld(&c, latency.KindTrainedPhysics)
		c.NumInstances, c.PD, c.TotalKVBlocks = 2, cfg, 200
		c.PD.TransferBandwidth, c.PD.TransferBaseLatency = 0.05, 1
		src, _ := workload.NewGenerator(spec, workload.Options{Seed: 7, BlockSize: 16})
		eng, err := New(c, src)
		if err != nil {
			t.Fatal(err)
		}
		return eng.Run()
	}()
	if *s.PD.DroppedAtDecodeKV == 0 || s.Dropped < *s.PD.DroppedAtDecodeKV || s.Completed+s.Dropped != 300 {
		t.Errorf("tight decode KV: completed %v, dropped %v, at decode KV %v", s.Completed, s.Dropped, *s.PD.DroppedAtDecodeKV)
	}
}
