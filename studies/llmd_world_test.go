package studies

import (
	"testing"

	"optimize/internal/testkit"
	"optimize/simcore/metrics"
	"optimize/strategies"
	"optimize/strategies/settings"
	"optimize/strategies/workloads"
)

// llm-d's default profile (queue-scorer 2, kv-cache-utilization-scorer 2,
// prefix-cache-scorer 3, max-score-picker) spreads orthogonal-slo's burst
// over the 8 instances in the blackbox world, where queues build and the
// load scorers tell the instances apart; in trained-physics the queues
// stay short, the load scorers barely differ, and the prefix-cache-scorer
// sends each shared prefix back to the few instances that took it first.
// That pile-up is the profile's +69 % critical TTFT P99 there. Its
// cache_hit_rate "halves" only because BLIS's rate is the unweighted mean
// over instances and the idle ones count 0. Without the prefix scorer the
// burst spreads again.
func TestLLMDDefaultPilesUpInTrainedPhysics(t *testing.T) {
	reg, base := testkit.Builtins(t)
	tpl, err := reg.Get("llm-d-default")
	if err != nil {
		t.Fatal(err)
	}
	wl, err := workloads.Resolve("orthogonal-slo")
	if err != nil {
		t.Fatal(err)
	}
	prefix, ok := settings.Lookup("routing.weight.prefix-cache-scorer")
	if !ok {
		t.Fatal("no setting routing.weight.prefix-cache-scorer")
	}
	run := func(world string, prefixOff bool) metrics.Summary {
		t.Helper()
		cfg, err := tpl.Config(base, tpl.Defaults())
		if err != nil {
			t.Fatal(err)
		}
		if err := (strategies.Scenario{World: world}).ApplyWorld(&cfg); err != nil {
			t.Fatal(err)
		}
		if prefixOff {
			if err := prefix.Set(&cfg, "0"); err != nil {
				t.Fatal(err)
			}
		}
		s, err := simulate(cfg, wl, 42)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	bb, tp, tpNoPrefix := run("blackbox", false), run("trained-physics", false), run("trained-physics", true)
	t.Logf("routing imbalance (busiest instance / mean): blackbox %.2f, trained-physics %.2f, trained-physics without the prefix scorer %.2f; cache hit rate %.3f, %.3f, %.3f",
		bb.RoutingImbalance, tp.RoutingImbalance, tpNoPrefix.RoutingImbalance, bb.CacheHitRate, tp.CacheHitRate, tpNoPrefix.CacheHitRate)
	if bb.RoutingImbalance > 1.5 || tpNoPrefix.RoutingImbalance > 1.5 {
		t.Errorf("routing imbalance %.2f in blackbox, %.2f in trained-physics without the prefix scorer: want both spread (≤ 1.5)", bb.RoutingImbalance, tpNoPrefix.RoutingImbalance)
	}
	if tp.RoutingImbalance < 2.4 {
		t.Errorf("routing imbalance in trained-physics %.2f: want the pile-up (≥ 2.4, the busiest instance taking 30 %% of the burst)", tp.RoutingImbalance)
	}
	if tp.CacheHitRate > 0.6*bb.CacheHitRate {
		t.Errorf("cache hit rate %.3f in trained-physics against %.3f in blackbox: want the idle instances to pull the mean down", tp.CacheHitRate, bb.CacheHitRate)
	}
}
