package studies

import (
	"bytes"
	"encoding/json"
	"runtime"
	"sync"
	"testing"

	"optimize/internal/testkit"
	"optimize/simcore/cluster"
	"optimize/strategies"
	"optimize/strategies/workloads"
)

// cacheConfigs are cluster configurations whose runs differ in timing,
// and so in when closed-loop rounds arrive: the baseline (default KV) and
// kv-pressure-full (2000 GPU blocks, CPU tier, preemption).
func cacheConfigs(t *testing.T) []cluster.Config {
	t.Helper()
	reg, std := testkit.Builtins(t)
	var out []cluster.Config
	for _, name := range []string{"baseline", "kv-pressure-full"} {
		tpl, err := reg.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := tpl.Config(std, tpl.Defaults())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, cfg)
	}
	return out
}

func summaryJSON(t *testing.T, v any) []byte {
	t.Helper()
	js, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// A run on the cached workload is byte for byte the run on a freshly
// generated one, for every built-in workload (and one at a regime that
// changes its spec), seed and configuration, whichever configuration drew
// the arrivals first: one evaluator serves both in turn, twice.
func TestCachedWorkloadMatchesFresh(t *testing.T) {
	configs := cacheConfigs(t)
	names := append(workloads.Builtins().Names(), "orthogonal-slo@rate-1.2x")
	for _, name := range names {
		wl, err := workloads.Resolve(name)
		if err != nil {
			t.Fatal(err)
		}
		ev := &evaluator{wl: wl, seeds: []int64{42, 43}}
		for pass := range 2 {
			for i, cfg := range configs {
				_, perSeed, err := ev.run(cfg)
				if err != nil {
					t.Fatal(err)
				}
				for k, seed := range ev.seeds {
					fresh, err := simulate(cfg, wl, seed)
					if err != nil {
						t.Fatal(err)
					}
					got, want := summaryJSON(t, perSeed[k]), summaryJSON(t, fresh)
					if !bytes.Equal(got, want) {
						t.Fatalf("%s seed %d config %d pass %d: cached run differs from a fresh one:\n%s\n%s", name, seed, i, pass, got, want)
					}
				}
			}
		}
		if n := ev.workloads.builds.Load(); n != int64(len(ev.seeds)) {
			t.Errorf("%s: %d workloads drawn for %d seeds", name, n, len(ev.seeds))
		}
	}
}

// Each seed's workload is drawn once for all the evaluations of an
// evaluator, however many run at once; asking for another block size
// replaces a seed's entry rather than adding one.
func TestWorkloadDrawnOncePerSeed(t *testing.T) {
	configs := cacheConfigs(t)
	wl, err := workloads.Resolve("multi-turn-kv")
	if err != nil {
		t.Fatal(err)
	}
	ev := &evaluator{wl: wl, seeds: []int64{42, 43, 44}}
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, errs[i] = ev.run(configs[i%len(configs)])
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := ev.workloads.builds.Load(); n != 3 {
		t.Fatalf("6 evaluations on 3 seeds drew %d workloads, want 3", n)
	}

	cfg := configs[0]
	cfg.BlockSize *= 2
	_, perSeed, err := ev.run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := simulate(cfg, wl, 43)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(summaryJSON(t, perSeed[1]), summaryJSON(t, fresh)) {
		t.Fatal("another block size: the cached run differs from a fresh one")
	}
	if n, entries := ev.workloads.builds.Load(), len(ev.workloads.bySeed); n != 6 || entries != 3 {
		t.Fatalf("another block size: %d workloads drawn, %d held; want 6 and 3", n, entries)
	}
}

// The cache of the slo-cascade study (3 seeds × orthogonal-slo, 1,000
// requests each) after runs of the baseline, the template's defaults and
// a KV-pressured cluster: measured as the heap it keeps alive.
func TestWorkloadCacheMemory(t *testing.T) {
	reg, std, tpl, wl, studyCfg := sloCascadeAtDefaults(t)
	baseCfg, err := baselineConfig(reg, studyCfg, std, nil)
	if err != nil {
		t.Fatal(err)
	}
	configs := append([]cluster.Config{studyCfg, baseCfg}, cacheConfigs(t)...)

	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC() // a second cycle empties the sync.Pools the first moved aside
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	ev := &evaluator{wl: wl, seeds: []int64{42, 43, 44}}
	// Warm what every run allocates once (profiles, pools), then measure
	// the cache alone: the heap with it minus the heap without it.
	for _, cfg := range configs {
		if _, _, err := ev.run(cfg); err != nil {
			t.Fatal(err)
		}
	}
	with := heap()
	var arrivals, lengths int
	for _, e := range ev.workloads.bySeed {
		a, l := e.draws.Arrivals()
		arrivals += a
		lengths += l
	}
	ev.workloads = workloadCache{}
	without := heap()
	held := int64(with) - int64(without)
	requests := int64(len(ev.seeds)) * wl.Spec.NumRequests
	t.Logf("workload cache of %s: %d bytes held for %d seeds, %d arrivals (%d round lengths), %.1f bytes per request",
		tpl.Name, held, len(ev.seeds), arrivals, lengths, float64(held)/float64(requests))
	if held > 256<<10 {
		t.Errorf("the cache holds %d bytes, more than 256 KiB for 3 × 1000 requests", held)
	}
	if arrivals == 0 {
		t.Error("no arrivals held")
	}
}

// BenchmarkSimulateWorkload is one slo-cascade simulation (seed 42, the
// template's defaults) on a freshly generated workload and on the cached
// one: the cost per trial and seed that the cache saves.
func BenchmarkSimulateWorkload(b *testing.B) {
	_, _, _, wl, cfg := sloCascadeAtDefaults(b)
	b.Run("fresh", func(b *testing.B) {
		for b.Loop() {
			if _, err := simulate(cfg, wl, 42); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		ev := &evaluator{wl: wl, seeds: []int64{42}}
		for b.Loop() {
			if _, err := ev.simulate(cfg, 42); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// sloCascadeAtDefaults loads the built-in registry, the standard cluster,
// slo-cascade, its workload and its configuration at the defaults.
func sloCascadeAtDefaults(t testing.TB) (*strategies.Registry, cluster.Config, *strategies.Template, *workloads.Workload, cluster.Config) {
	t.Helper()
	reg, std := testkit.Builtins(t)
	tpl, err := reg.Get("slo-cascade")
	if err != nil {
		t.Fatal(err)
	}
	wl, err := workloads.Resolve(tpl.Workload)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := tpl.Config(std, tpl.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	return reg, std, tpl, wl, cfg
}
