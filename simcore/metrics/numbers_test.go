package metrics

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"
)

// The numbers are read from the json tags: every float field of the
// summary, by its JSON path, and nothing else.
func TestNumbersFollowTheJSONTags(t *testing.T) {
	var names []string
	for _, n := range SummaryNumbers() {
		names = append(names, n.Name)
	}
	want := []string{"completed", "rejected", "dropped",
		"ttft_ms.mean", "ttft_ms.p50", "ttft_ms.p90", "ttft_ms.p99",
		"e2e_ms.mean", "e2e_ms.p50", "e2e_ms.p90", "e2e_ms.p99",
		"itl_ms.mean", "itl_ms.p50", "itl_ms.p90", "itl_ms.p99",
		"scheduling_delay_ms.mean", "scheduling_delay_ms.p50", "scheduling_delay_ms.p90", "scheduling_delay_ms.p99",
		"tokens_per_sec", "responses_per_sec", "preemptions", "cache_hit_rate", "routing_imbalance",
		"kv.offloaded_blocks", "kv.reloaded_blocks", "kv.transfer_ms", "kv.thrashing_rate",
		"slo_gap", "jain_fairness", "attainment", "goodput", "in_flight", "makespan_ms", "input_tokens", "output_tokens",
		"gpu_count", "cost_per_hour", "gpu_hours", "cost_usd", "trace_zero_output", "trace_zero_input", "trace_over_context",
		"pd.disaggregated", "pd.local", "pd.dropped_at_decode_kv", "pd.transfer_mean_ms", "pd.transfer_p50_ms", "pd.transfer_p95_ms", "pd.transfer_p99_ms",
		"pd.prefill_completions_per_sec", "pd.decode_completions_per_sec", "pd.peak_transfers", "pd.mean_transfer_depth",
		"gateway_rejected", "gateway_shed", "gateway_expired", "gateway_evicted", "gateway_queue_delay_mean_ms", "gateway_queue_delay_p99_ms"}
	if !slices.Equal(names, want) {
		t.Errorf("summary numbers\n %v\nwant\n %v", names, want)
	}
	names = nil
	for _, n := range ClassNumbers() {
		names = append(names, n.Name)
	}
	want = []string{"count", "completed", "rejected", "ttft_ms.mean", "ttft_ms.p50", "ttft_ms.p90", "ttft_ms.p99",
		"e2e_ms.mean", "e2e_ms.p50", "e2e_ms.p90", "e2e_ms.p99", "ttft_attainment", "attainment", "goodput",
		"gateway_rejected", "gateway_shed", "gateway_expired", "gateway_evicted", "gateway_queue_delay_mean_ms", "gateway_queue_delay_p99_ms"}
	if !slices.Equal(names, want) {
		t.Errorf("class numbers\n %v\nwant\n %v", names, want)
	}
	if s := DistStats(); !slices.Equal(s, []string{"mean", "p50", "p90", "p99"}) {
		t.Errorf("dist stats %v", s)
	}
	// Get reads the field the name says.
	var s Summary
	s.KV.TransferMs, s.E2E.P90 = 7, 9
	for _, n := range SummaryNumbers() {
		v, ok := n.Get(&s)
		switch n.Name {
		case "kv.transfer_ms", "e2e_ms.p90":
			if !ok || v == 0 {
				t.Errorf("%s = %v, %v", n.Name, v, ok)
			}
		case "attainment", "goodput", "gpu_count", "cost_per_hour", "gpu_hours", "cost_usd":
			if ok || !n.Optional {
				t.Errorf("%s: unset optional reads as present", n.Name)
			}
		default:
			if v != 0 {
				t.Errorf("%s = %v, want 0", n.Name, v)
			}
		}
	}
}

// Mean, iterating the numbers, gives bit for bit what the field-by-field
// average it replaced gave (explicitMean, kept here as the reference).
func TestMeanMatchesFieldByFieldMean(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	opt := func() *float64 { v := rng.Float64() * 3; return &v }
	summary := func(targets bool) Summary {
		var s Summary
		for _, n := range SummaryNumbers() {
			if !n.Optional {
				n.set(&s, rng.Float64()*1e4/7)
			}
		}
		s.PerSLO = map[string]ClassSummary{}
		for _, k := range []string{"critical", "standard", "sheddable"} {
			if rng.IntN(4) == 0 {
				continue // the class sent nothing in this run
			}
			var c ClassSummary
			for _, n := range ClassNumbers() {
				if !n.Optional {
					n.set(&c, rng.Float64()*1e3/3)
				}
			}
			if targets {
				c.TTFTAttainment, c.Attainment, c.Goodput = opt(), opt(), opt()
			}
			s.PerSLO[k] = c
		}
		if targets {
			s.Attainment, s.Goodput = opt(), opt()
		}
		return s
	}
	for trial := range 50 {
		targets := trial%2 == 0
		runs := make([]Summary, 1+trial%5)
		for i := range runs {
			runs[i] = summary(targets)
		}
		got, _ := json.Marshal(Mean(runs))
		want, _ := json.Marshal(explicitMean(runs))
		if string(got) != string(want) {
			t.Fatalf("%d runs:\n got %s\nwant %s", len(runs), got, want)
		}
	}
}

func explicitMean(runs []Summary) Summary {
	var m Summary
	m.PerSLO = map[string]ClassSummary{}
	classRuns := map[string]float64{}
	targetRuns := 0.0 // runs with an overall attainment
	for _, r := range runs {
		m.Completed += r.Completed
		m.Rejected += r.Rejected
		m.Dropped += r.Dropped
		addDist(&m.TTFT, r.TTFT)
		addDist(&m.E2E, r.E2E)
		addDist(&m.ITL, r.ITL)
		addDist(&m.SchedulingDelay, r.SchedulingDelay)
		m.TokensPerSec += r.TokensPerSec
		m.ResponsesPerSec += r.ResponsesPerSec
		m.Preemptions += r.Preemptions
		m.CacheHitRate += r.CacheHitRate
		m.RoutingImbalance += r.RoutingImbalance
		m.KV.OffloadedBlocks += r.KV.OffloadedBlocks
		m.KV.ReloadedBlocks += r.KV.ReloadedBlocks
		m.KV.TransferMs += r.KV.TransferMs
		m.KV.ThrashingRate += r.KV.ThrashingRate
		m.SLOGap += r.SLOGap
		m.JainFairness += r.JainFairness
		m.InFlight += r.InFlight
		m.MakespanMs += r.MakespanMs
		m.InputTokens += r.InputTokens
		m.OutputTokens += r.OutputTokens
		if r.Attainment != nil {
			m.Attainment = addOpt(m.Attainment, *r.Attainment)
			m.Goodput = addOpt(m.Goodput, *r.Goodput)
			targetRuns++
		}
		for k, c := range r.PerSLO {
			acc := m.PerSLO[k]
			acc.Count += c.Count
			acc.Completed += c.Completed
			acc.Rejected += c.Rejected
			addDist(&acc.TTFT, c.TTFT)
			addDist(&acc.E2E, c.E2E)
			if c.TTFTAttainment != nil {
				acc.TTFTAttainment = addOpt(acc.TTFTAttainment, *c.TTFTAttainment)
			}
			if c.Attainment != nil {
				acc.Attainment = addOpt(acc.Attainment, *c.Attainment)
				acc.Goodput = addOpt(acc.Goodput, *c.Goodput)
			}
			m.PerSLO[k] = acc
			classRuns[k]++
		}
	}
	n := float64(len(runs))
	if n == 0 {
		return m
	}
	for _, f := range []*float64{
		&m.Completed, &m.Rejected, &m.Dropped, &m.TokensPerSec, &m.ResponsesPerSec,
		&m.Preemptions, &m.CacheHitRate, &m.RoutingImbalance, &m.KV.OffloadedBlocks, &m.KV.ReloadedBlocks,
		&m.KV.TransferMs, &m.KV.ThrashingRate, &m.SLOGap, &m.JainFairness, &m.InFlight,
		&m.MakespanMs, &m.InputTokens, &m.OutputTokens,
	} {
		*f /= n
	}
	for _, d := range []*Dist{&m.TTFT, &m.E2E, &m.ITL, &m.SchedulingDelay} {
		scaleDist(d, 1/n)
	}
	if targetRuns > 0 {
		m.Attainment = scaleOpt(m.Attainment, 1/targetRuns)
		m.Goodput = scaleOpt(m.Goodput, 1/targetRuns)
	}
	for k, c := range m.PerSLO {
		inv := 1 / classRuns[k]
		c.Count *= inv
		c.Completed *= inv
		c.Rejected *= inv
		scaleDist(&c.TTFT, inv)
		scaleDist(&c.E2E, inv)
		c.TTFTAttainment = scaleOpt(c.TTFTAttainment, inv)
		c.Attainment = scaleOpt(c.Attainment, inv)
		c.Goodput = scaleOpt(c.Goodput, inv)
		m.PerSLO[k] = c
	}
	return m
}

// addOpt adds v to an optional sum (nil: none yet); the result is a new
// pointer, so summaries never share one.
func addOpt(acc *float64, v float64) *float64 {
	if acc != nil {
		v += *acc
	}
	return &v
}

// scaleOpt multiplies an optional value, keeping nil.
func scaleOpt(p *float64, f float64) *float64 {
	if p == nil {
		return nil
	}
	v := *p * f
	return &v
}

func addDist(acc *Dist, d Dist) {
	acc.Mean += d.Mean
	acc.P50 += d.P50
	acc.P90 += d.P90
	acc.P99 += d.P99
}

func scaleDist(d *Dist, f float64) {
	d.Mean *= f
	d.P50 *= f
	d.P90 *= f
	d.P99 *= f
}

// Every number a person may read has a unit (a field added without its
// unit tag fails here), and a distribution's statistics are in its unit.
func TestEveryNumberHasAUnit(t *testing.T) {
	for _, n := range SummaryNumbers() {
		if n.Unit == "" {
			t.Errorf("summary number %s has no unit tag", n.Name)
		}
		if n.Dist != "" && n.Unit != "ms" {
			t.Errorf("%s: unit %q, want ms (latency distributions are in ms)", n.Name, n.Unit)
		}
	}
	for _, n := range ClassNumbers() {
		if n.Unit == "" {
			t.Errorf("class number %s has no unit tag", n.Name)
		}
	}
	if len(SummaryNumbers()) < 20 {
		t.Fatalf("only %d summary numbers", len(SummaryNumbers()))
	}
}
