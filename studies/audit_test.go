package studies

import (
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"sync"
	"testing"

	"optimize/internal/testkit"
	"optimize/search"
	"optimize/simcore/cluster"
	"optimize/strategies"
	"optimize/strategies/settings"
	"optimize/strategies/workloads"
)

// auditRow records, for one tuned parameter or one fixed mechanism
// setting of a shipped template, the objective that moves most between
// the two ends of its range (or between the template and the template
// with that setting reverted to its base's value), and by how much: the
// relative change |a − b| / max(|a|, |b|) in per cent, measured on the
// template's workload at seeds 42–44. The test asserts that the named
// objective still moves by at least half the recorded amount.
type auditRow struct {
	template, what, objective string
	pct                       float64
}

// measuredRow is an audit row as measured, with every objective's move.
type measuredRow struct {
	auditRow
	moved map[string]float64
}

// auditTable is the measured table. A parameter or setting that moved
// nothing was fixed in its template (see the commit that added this
// table) rather than listed here.
var auditTable = []auditRow{
	{"autoscale", "mechanism autoscaler.interval_us", "ttft_p99", 73.6},
	{"autoscale", "mechanism autoscaler.loading_delay_s", "ttft_p99", 27.0},
	{"autoscale", "mechanism num_instances", "cost_per_hour", 4.4},
	{"autoscale", "parameter kv_cache_threshold", "ttft_p99", 99.6},
	{"autoscale", "parameter scale_down_boundary", "cost_per_hour", 13.3},
	{"autoscale", "parameter scale_down_window_us", "ttft_p99", 73.6},
	{"autoscale", "parameter scale_up_threshold", "ttft_p99", 19.2},
	{"autoscale", "parameter scale_up_window_us", "ttft_p99", 94.9},
	{"baseline", "parameter kv_utilization_weight", "slo_gap", 3.0},
	{"baseline", "parameter prefix_affinity_weight", "critical_ttft_p99", 96.1},
	{"baseline", "parameter queue_depth_weight", "critical_ttft_p99", 96.1},
	{"capacity", "mechanism latency.model", "ttft_p99", 84.1},
	{"capacity", "parameter gpu", "ttft_p99", 80.7},
	{"capacity", "parameter instances", "ttft_p99", 98.3},
	{"capacity", "parameter tp", "cost_per_hour", 50.0},
	{"capacity-joint", "parameter critical_prefill_chunk", "ttft_p99", 0.5},
	{"capacity-joint", "parameter gpu", "ttft_p99", 99.7},
	{"capacity-joint", "parameter instances_a100", "ttft_p99", 99.7},
	{"capacity-joint", "parameter instances_h100", "ttft_p99", 98.3},
	{"capacity-joint", "parameter instances_l40s", "ttft_p99", 99.8},
	{"capacity-joint", "parameter kv_utilization_weight", "ttft_p99", 0.4},
	{"capacity-joint", "parameter scheduler", "ttft_p99", 0.6},
	{"capacity-joint", "parameter token_load_weight", "ttft_p99", 0.05},
	{"capacity-joint", "parameter tp_a100", "ttft_p99", 60.4},
	{"capacity-joint", "parameter tp_h100", "cost_per_hour", 50.0},
	{"capacity-joint", "parameter tp_l40s", "ttft_p99", 99.3},
	{"capacity-pd", "mechanism pd.decider", "ttft_p99", 15.9},
	{"capacity-pd", "parameter critical_prefill_chunk", "ttft_p99", 0.5},
	{"capacity-pd", "parameter gpu", "ttft_p99", 99.7},
	{"capacity-pd", "parameter instances_a100", "ttft_p99", 99.7},
	{"capacity-pd", "parameter instances_h100", "ttft_p99", 98.3},
	{"capacity-pd", "parameter instances_l40s", "ttft_p99", 99.8},
	{"capacity-pd", "parameter kv_utilization_weight", "ttft_p99", 0.4},
	{"capacity-pd", "parameter prefill_instances", "cost_per_hour", 37.5},
	{"capacity-pd", "parameter scheduler", "ttft_p99", 0.6},
	{"capacity-pd", "parameter serving", "cost_per_hour", 20.0},
	{"capacity-pd", "parameter token_load_weight", "ttft_p99", 0.0},
	{"capacity-pd", "parameter tp_a100", "ttft_p99", 60.4},
	{"capacity-pd", "parameter tp_h100", "cost_per_hour", 50.0},
	{"capacity-pd", "parameter tp_l40s", "ttft_p99", 99.3},
	{"joint-kv", "mechanism priority.policy", "critical_ttft_p99", 82.0},
	{"joint-kv", "parameter cpu_blocks", "critical_ttft_p99", 14.5},
	{"joint-kv", "parameter critical_base", "critical_ttft_p99", 86.4},
	{"joint-kv", "parameter kv_pressure_slo_weight", "critical_ttft_p99", 19.3},
	{"joint-kv", "parameter kv_pressure_weight", "critical_ttft_p99", 16.0},
	{"joint-kv", "parameter kv_utilization_weight", "batch_ttft_p99", 3.8},
	{"joint-kv", "parameter offload_threshold", "critical_ttft_p99", 51.1},
	{"joint-kv", "parameter preemption", "critical_ttft_p99", 21.8},
	{"joint-kv", "parameter prefix_affinity_weight", "critical_ttft_p99", 12.3},
	{"joint-kv", "parameter queue_depth_weight", "critical_ttft_p99", 4.1},
	{"joint-kv", "parameter scheduler", "batch_ttft_p99", 15.0},
	{"joint-kv", "parameter session_affinity_weight", "critical_ttft_p99", 6.1},
	{"joint-kv", "parameter token_load_weight", "critical_ttft_p99", 4.2},
	{"joint-slo", "parameter admission", "slo_gap", 46.2},
	{"joint-slo", "parameter age_weight_per_ms", "slo_gap", 29.3},
	{"joint-slo", "parameter critical_base", "slo_gap", 49.3},
	{"joint-slo", "parameter critical_prefill_chunk", "e2e_p99", 0.3},
	{"joint-slo", "parameter kv_utilization_weight", "slo_gap", 0.6},
	{"joint-slo", "parameter prefix_affinity_weight", "critical_ttft_p99", 93.3},
	{"joint-slo", "parameter priority_policy", "slo_gap", 17.9},
	{"joint-slo", "parameter probabilistic_k", "slo_gap", 41.0},
	{"joint-slo", "parameter probabilistic_power", "slo_gap", 66.2},
	{"joint-slo", "parameter queue_depth_weight", "critical_ttft_p99", 93.3},
	{"joint-slo", "parameter scheduler", "slo_gap", 77.1},
	{"joint-slo", "parameter sheddable_gate", "slo_gap", 51.2},
	{"joint-slo", "parameter sheddable_urgency_ms", "slo_gap", 41.6},
	{"joint-slo", "parameter slo_priority_weight", "slo_gap", 2.6},
	{"joint-slo", "parameter standard_base", "slo_gap", 37.8},
	{"joint-slo", "parameter token_budget", "slo_gap", 39.1},
	{"joint-slo", "parameter token_load_weight", "slo_gap", 4.8},
	{"kv-heavy", "parameter kv_utilization_weight", "critical_ttft_p99", 5.5},
	{"kv-heavy", "parameter prefix_affinity_weight", "critical_ttft_p99", 7.6},
	{"kv-heavy", "parameter queue_depth_weight", "e2e_p99", 2.5},
	{"kv-pressure", "mechanism routing.weight.kv-utilization", "batch_ttft_p99", 3.9},
	{"kv-pressure", "parameter kv_pressure_weight", "batch_ttft_p99", 0.7},
	{"kv-pressure", "parameter prefix_affinity_weight", "batch_ttft_p99", 3.4},
	{"kv-pressure", "parameter transfer_scale_us", "critical_ttft_p99", 2.5},
	{"kv-pressure-full", "mechanism priority.policy", "critical_ttft_p99", 83.1},
	{"kv-pressure-full", "mechanism scheduler", "critical_ttft_p99", 82.0},
	{"kv-pressure-full", "parameter critical_priority", "critical_ttft_p99", 86.5},
	{"kv-pressure-full", "parameter kv_pressure_slo_weight", "critical_ttft_p99", 2.9},
	{"kv-pressure-full", "parameter offload_threshold", "critical_ttft_p99", 51.4},
	{"kv-pressure-joint", "mechanism priority.policy", "critical_ttft_p99", 84.2},
	{"kv-pressure-joint", "mechanism scheduler", "critical_ttft_p99", 83.7},
	{"kv-pressure-joint", "parameter critical_priority", "critical_ttft_p99", 87.6},
	{"kv-pressure-joint", "parameter kv_pressure_weight", "critical_ttft_p99", 3.8},
	{"kv-pressure-joint", "parameter transfer_scale_us", "critical_ttft_p99", 14.3},
	{"kv-pressure-slo", "mechanism routing.weight.kv-utilization", "batch_ttft_p99", 3.9},
	{"kv-pressure-slo", "parameter batch_transfer_factor", "critical_ttft_p99", 2.1},
	{"kv-pressure-slo", "parameter kv_pressure_slo_weight", "tokens_per_sec", 1.3},
	{"kv-pressure-slo", "parameter transfer_scale_us", "batch_ttft_p99", 2.0},
	{"llm-d-default", "parameter kv_cache_utilization_weight", "slo_gap", 3.3},
	{"llm-d-default", "parameter prefix_cache_weight", "critical_ttft_p99", 95.9},
	{"llm-d-default", "parameter queue_scorer_weight", "critical_ttft_p99", 95.3},
	{"load-adaptive", "mechanism priority.policy", "slo_gap", 5.9},
	{"load-adaptive", "parameter age_weight_per_ms", "slo_gap", 33.9},
	{"load-adaptive", "parameter critical_base", "slo_gap", 58.6},
	{"load-adaptive", "parameter load_threshold", "slo_gap", 22.4},
	{"load-adaptive", "parameter standard_base", "slo_gap", 36.2},
	{"pd-split", "mechanism latency.model", "ttft_p99", 98.4},
	{"pd-split", "mechanism tp", "ttft_p99", 63.8},
	{"pd-split", "parameter decider", "ttft_p99", 0.8},
	{"pd-split", "parameter decode_tp", "e2e_p99", 33.5},
	{"pd-split", "parameter prefill_p1_d1", "ttft_p99", 97.6},
	{"pd-split", "parameter prefill_p1_d2", "ttft_p99", 96.6},
	{"pd-split", "parameter prefill_p2_d1", "ttft_p99", 98.8},
	{"pd-split", "parameter prefill_p2_d2", "ttft_p99", 96.6},
	{"pd-split", "parameter prefill_tp_d1", "ttft_p99", 62.2},
	{"pd-split", "parameter prefill_tp_d2", "ttft_p99", 63.8},
	{"pd-split", "parameter prefix_threshold", "ttft_p99", 1.9},
	{"pd-split", "parameter serving", "e2e_p99", 40.0},
	{"precise-routing", "mechanism kv.total_blocks", "critical_ttft_p99", 69.1},
	{"precise-routing", "parameter cache_signal_delay_us", "batch_ttft_p99", 4.4},
	{"precise-routing", "parameter precise_prefix_weight", "batch_ttft_p99", 1.6},
	{"precise-routing", "parameter prefix_affinity_weight", "tokens_per_sec", 1.8},
	{"precise-routing", "parameter prefix_index_capacity", "critical_ttft_p99", 4.1},
	{"precise-routing", "parameter queue_depth_weight", "critical_ttft_p99", 7.0},
	{"precise-routing", "parameter snapshot_refresh_us", "critical_ttft_p99", 2.3},
	{"pressure-baseline", "mechanism kv.cpu_blocks", "tokens_per_sec", 2.5},
	{"pressure-baseline", "mechanism kv.total_blocks", "critical_ttft_p99", 98.1},
	{"pressure-baseline", "mechanism kv.transfer_bandwidth", "tokens_per_sec", 1.5},
	{"pressure-baseline", "mechanism kv.transfer_base_latency_us", "batch_ttft_p99", 4.8},
	{"pressure-baseline", "mechanism num_instances", "critical_ttft_p99", 68.5},
	{"pressure-baseline", "parameter kv_utilization_weight", "critical_ttft_p99", 1.8},
	{"pressure-baseline", "parameter prefix_affinity_weight", "critical_ttft_p99", 7.7},
	{"pressure-baseline", "parameter queue_depth_weight", "critical_ttft_p99", 7.0},
	{"round-robin", "mechanism routing.policy", "critical_ttft_p99", 6.5},
	{"round-robin", "parameter offload_threshold", "batch_ttft_p99", 37.9},
	{"slo-cascade", "mechanism priority.policy", "slo_gap", 76.6},
	{"slo-cascade", "mechanism routing.weight.slo-priority", "slo_gap", 0.3},
	{"slo-cascade", "mechanism scheduler", "slo_gap", 77.2},
	{"slo-cascade", "parameter age_weight_per_ms", "slo_gap", 30.2},
	{"slo-cascade", "parameter critical_base", "slo_gap", 61.5},
	{"slo-cascade", "parameter critical_blend", "slo_gap", 4.5},
	{"slo-cascade", "parameter critical_prefill_chunk", "slo_gap", 1.4},
	{"slo-cascade", "parameter sheddable_urgency_ms", "slo_gap", 8.9},
	{"slo-cascade", "parameter standard_base", "slo_gap", 36.2},
	{"slo-cascade-budget", "parameter age_weight_per_ms", "slo_gap", 50.5},
	{"slo-cascade-budget", "parameter critical_base", "critical_ttft_p99", 15.2},
	{"slo-cascade-budget", "parameter critical_prefill_chunk", "critical_ttft_p99", 0.6},
	{"slo-cascade-budget", "parameter token_budget", "slo_gap", 43.1},
	{"slo-cascade-gated", "mechanism admission.policy", "slo_gap", 4.4},
	{"slo-cascade-gated", "parameter age_weight_per_ms", "slo_gap", 34.6},
	{"slo-cascade-gated", "parameter critical_prefill_chunk", "slo_gap", 1.3},
	{"slo-cascade-gated", "parameter sheddable_gate", "slo_gap", 47.5},
	{"slo-cascade-gated", "parameter standard_gate", "slo_gap", 39.8},
	{"slo-cascade-nochunk", "mechanism batch.long_prefill_token_threshold", "critical_ttft_p99", 28.1},
	{"slo-cascade-nochunk", "mechanism priority.policy", "slo_gap", 82.4},
	{"slo-cascade-nochunk", "mechanism scheduler", "slo_gap", 81.8},
	{"slo-cascade-nochunk", "parameter age_weight_per_ms", "slo_gap", 32.3},
	{"slo-cascade-nochunk", "parameter critical_base", "slo_gap", 68.8},
	{"slo-cascade-nochunk", "parameter sheddable_urgency_ms", "slo_gap", 10.7},
	{"slo-cascade-preempt", "mechanism kv.total_blocks", "slo_gap", 65.7},
	{"slo-cascade-preempt", "parameter age_weight_per_ms", "critical_ttft_p99", 74.9},
	{"slo-cascade-preempt", "parameter critical_base", "slo_gap", 89.9},
	{"slo-cascade-preempt", "parameter preemption", "critical_ttft_p99", 55.8},
	{"success-criteria", "parameter admission", "ttft_p99", 59.0},
	{"success-criteria", "parameter age_weight_per_ms", "ttft_p99", 30.5},
	{"success-criteria", "parameter critical_base", "ttft_p99", 2.4},
	{"success-criteria", "parameter critical_prefill_chunk", "e2e_p99", 0.3},
	{"success-criteria", "parameter kv_utilization_weight", "ttft_p99", 0.8},
	{"success-criteria", "parameter prefix_affinity_weight", "ttft_p99", 93.7},
	{"success-criteria", "parameter priority_policy", "ttft_p99", 18.0},
	{"success-criteria", "parameter probabilistic_k", "ttft_p99", 37.4},
	{"success-criteria", "parameter probabilistic_power", "ttft_p99", 14.8},
	{"success-criteria", "parameter queue_depth_weight", "ttft_p99", 93.7},
	{"success-criteria", "parameter scheduler", "ttft_p99", 43.9},
	{"success-criteria", "parameter sheddable_gate", "ttft_p99", 56.2},
	{"success-criteria", "parameter sheddable_urgency_ms", "ttft_p99", 42.1},
	{"success-criteria", "parameter slo_priority_weight", "ttft_p99", 2.3},
	{"success-criteria", "parameter standard_base", "ttft_p99", 39.3},
	{"success-criteria", "parameter token_budget", "ttft_p99", 11.6},
	{"success-criteria", "parameter token_load_weight", "ttft_p99", 3.7},
}

// TestEveryTunedSettingMovesAnObjective runs, for every shipped template,
// each parameter at the low and the high end of its range (categoricals:
// the first and the last choice), the others at their defaults, and each
// mechanism setting the template itself fixes that differs from its base,
// reverted alone to the base's value (at the first parameter's activation
// where it has an effect, when it has none at the defaults); at least one
// objective must move. Set OPTIMIZE_AUDIT=print
// to print the measured table instead of checking it.
func TestEveryTunedSettingMovesAnObjective(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every shipped template")
	}
	reg, std := testkit.Builtins(t)
	var mu sync.Mutex
	var measured []measuredRow
	var wg sync.WaitGroup
	for _, tpl := range reg.Templates() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows, err := auditTemplate(reg, tpl, std)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("%s: %v", tpl.Name, err)
			}
			measured = append(measured, rows...)
		}()
	}
	wg.Wait()
	sort.Slice(measured, func(i, j int) bool {
		a, b := measured[i], measured[j]
		return a.template < b.template || a.template == b.template && a.what < b.what
	})
	if os.Getenv("OPTIMIZE_AUDIT") == "print" {
		for _, r := range measured {
			fmt.Printf("\t{%q, %q, %q, %.1f},\n", r.template, r.what, r.objective, r.pct)
		}
		return
	}
	for _, m := range measured {
		i := slices.IndexFunc(auditTable, func(r auditRow) bool { return r.template == m.template && r.what == m.what })
		t.Logf("%-22s %-48s %-18s %6.2f%%", m.template, m.what, m.objective, m.pct)
		if i < 0 {
			t.Errorf("%s %s: not in the audit table (moves %s by %.1f%%); add a row", m.template, m.what, m.objective, m.pct)
			continue
		}
		want := auditTable[i]
		if m.pct == 0 {
			t.Errorf("%s %s: moves no objective; fix the template", m.template, m.what)
		}
		got := m.pct
		if m.objective != want.objective {
			got = m.moved[want.objective]
		}
		if got < want.pct/2 {
			t.Errorf("%s %s: %s moves %.2f%%, recorded %.1f%%", m.template, m.what, want.objective, got, want.pct)
		}
	}
	for _, r := range auditTable {
		if !slices.ContainsFunc(measured, func(m measuredRow) bool { return r.template == m.template && r.what == m.what }) {
			t.Errorf("%s %s: in the audit table but no longer tuned or fixed", r.template, r.what)
		}
	}
}

// auditTemplate measures every tuned parameter and every own mechanism
// setting of tpl.
func auditTemplate(reg *strategies.Registry, tpl *strategies.Template, std cluster.Config) ([]measuredRow, error) {
	wl, err := workloads.Resolve(tpl.Workload)
	if err != nil {
		return nil, err
	}
	ev := &evaluator{tpl: tpl, base: std, wl: wl, seeds: []int64{42, 43, 44}}
	objectivesOf := func(cfg cluster.Config) ([]float64, error) {
		mean, _, err := ev.run(cfg)
		if err != nil {
			return nil, err
		}
		out := make([]float64, len(tpl.Objectives))
		for i, o := range tpl.Objectives {
			if out[i], err = strategies.Metric(&mean, o.Metric); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	row := func(what string, a, b []float64) measuredRow {
		m := measuredRow{auditRow: auditRow{template: tpl.Name, what: what}, moved: map[string]float64{}}
		for k, o := range tpl.Objectives {
			pct := 100 * relativeChange(a[k], b[k])
			m.moved[o.Name] = pct
			if pct > m.pct {
				m.objective, m.pct = o.Name, pct
			}
		}
		return m
	}
	var out []measuredRow
	defaults := tpl.Defaults()
	for i, p := range tpl.Params {
		at := func(v search.Value) ([]float64, error) {
			values := activate(tpl, i, defaults)
			values[i] = v
			cfg, err := tpl.Config(std, settle(tpl, values))
			if err != nil {
				return nil, err
			}
			return objectivesOf(cfg)
		}
		low, high := search.Value{Number: p.Low}, search.Value{Number: p.High}
		if p.Kind == search.Categorical {
			low, high = search.Value{Choice: p.Choices[0]}, search.Value{Choice: p.Choices[len(p.Choices)-1]}
		}
		a, err := at(low)
		if err != nil {
			return nil, fmt.Errorf("parameter %s at %s: %v", p.Name, p.Format(low), err)
		}
		b, err := at(high)
		if err != nil {
			return nil, fmt.Errorf("parameter %s at %s: %v", p.Name, p.Format(high), err)
		}
		out = append(out, row("parameter "+p.Name, a, b))
	}

	if tpl.Base == "" {
		// The root template's mechanism defines the production reference
		// rather than changing one: there is nothing to revert it to. (Its
		// CPU KV tier, required of every strategy, is idle on the
		// orthogonal workload, whose GPU KV never fills.)
		return out, nil
	}
	cfg, err := tpl.Config(std, defaults)
	if err != nil {
		return nil, err
	}
	bt, err := reg.Get(tpl.Base)
	if err != nil {
		return nil, err
	}
	baseCfg, err := bt.Config(std, bt.Defaults())
	if err != nil {
		return nil, err
	}
	full, err := objectivesOf(cfg)
	if err != nil {
		return nil, err
	}
	for _, f := range tpl.Mechanism() {
		if f.From != tpl.Name {
			continue
		}
		s, _ := settings.Lookup(f.SettingKey)
		if s.Same(&cfg, &baseCfg) {
			continue // the base has the same value: nothing to revert
		}
		at, atFull := cfg, full
		if !s.Active.Holds(&cfg) {
			// Inert at the defaults (capacity-joint's pd.decider while
			// aggregated): measured at the first parameter's activation
			// that makes it matter.
			for i := range tpl.Params {
				c, err := tpl.Config(std, activate(tpl, i, defaults))
				if err == nil && s.Active.Holds(&c) {
					if atFull, err = objectivesOf(c); err != nil {
						return nil, err
					}
					at = c
					break
				}
			}
		}
		reverted := at
		s.Restore(&reverted, &baseCfg)
		if err := settings.CheckConfig(&reverted); err != nil {
			return nil, fmt.Errorf("mechanism %s reverted: %v", f.SettingKey, err)
		}
		r, err := objectivesOf(reverted)
		if err != nil {
			return nil, err
		}
		out = append(out, row("mechanism "+f.SettingKey, atFull, r))
	}
	return out, nil
}

// activate returns defaults with parameter i made active: each condition
// on its chain set to its first choice.
func activate(tpl *strategies.Template, i int, defaults []search.Value) []search.Value {
	values := slices.Clone(defaults)
	space := tpl.Space()
	for range tpl.Params {
		active := space.Active(values)
		if active[i] {
			break
		}
		for j := i; ; {
			w := tpl.Params[j].When
			k := space.Index(w.Param)
			if active[k] {
				values[k] = search.Value{Choice: w.Choices[0]}
				break
			}
			j = k
		}
	}
	return settle(tpl, values)
}

// settle gives newly active parameters their defaults and makes inactive
// ones NaN, until nothing changes (a default can activate a parameter
// conditioned on it: pd-split's chain of TPs).
func settle(tpl *strategies.Template, values []search.Value) []search.Value {
	for changed := true; changed; {
		changed = false
		for j, on := range tpl.Space().Active(values) {
			switch {
			case !on && !values[j].Absent():
				values[j], changed = search.Inactive(), true
			case on && values[j].Absent():
				values[j], changed = tpl.Params[j].Default, true
			}
		}
	}
	return values
}

func relativeChange(a, b float64) float64 {
	d := math.Max(math.Abs(a), math.Abs(b))
	if d == 0 {
		return 0
	}
	return math.Abs(a-b) / d
}
