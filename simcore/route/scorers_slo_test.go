package route

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"optimize/simcore"
)

// scoreWith builds scorer name for cfg and scores r on snaps.
func scoreWith(t *testing.T, name string, cfg Config, r *simcore.Request, snaps []Snapshot) []float64 {
	t.Helper()
	kind, ok := findScorer(name)
	if !ok {
		t.Fatalf("scorer %q missing from the table", name)
	}
	out := make([]float64, len(snaps))
	kind.build(&profileParts{cfg: &cfg, instances: len(snaps)}).Score(r, snaps, out)
	return out
}

func assertScores(t *testing.T, got, want []float64) {
	t.Helper()
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("scores = %v, want %v", got, want)
		}
	}
}

func TestKVPressure_IsKVUtilizationMinusTransferAndThrashing(t *testing.T) {
	plain := []Snapshot{{KVUtilization: 0}, {KVUtilization: 0.25}, {KVUtilization: 0.9}, {KVUtilization: 1}}
	tests := []struct {
		name  string
		cfg   Config
		snaps []Snapshot
		want  []float64
	}{
		{"no transfer or thrashing: kv-utilization", Config{}, plain, []float64{1, 0.75, 1 - 0.9, 0}},
		{"2000 µs pending costs 0.2 at the default scale", Config{},
			[]Snapshot{{KVUtilization: 0.2, PendingTransferLatency: 2000}}, []float64{0.6}},
		{"thrashing 0.1 costs 0.2 at the default weight", Config{},
			[]Snapshot{{KVUtilization: 0.2, KVThrashingRate: 0.1}}, []float64{0.6}},
		{"both penalties add", Config{},
			[]Snapshot{{KVUtilization: 0.1, PendingTransferLatency: 1000, KVThrashingRate: 0.05}}, []float64{0.7}},
		{"clamped at 0", Config{},
			[]Snapshot{{KVUtilization: 0.5, PendingTransferLatency: 10000}, {KVThrashingRate: 3}}, []float64{0, 0}},
		{"configured scale and weight", Config{KVPressureTransferScale: 1000, KVPressureThrashWeight: 1},
			[]Snapshot{{PendingTransferLatency: 200}, {KVThrashingRate: 0.3}}, []float64{0.8, 0.7}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := scoreWith(t, "kv-pressure", tc.cfg, &simcore.Request{SLO: simcore.SLOCritical}, tc.snaps)
			assertScores(t, got, tc.want)
			if tc.name == tests[0].name {
				assertScores(t, got, scoreWith(t, "kv-utilization", tc.cfg, &simcore.Request{}, tc.snaps))
			}
		})
	}
}

func TestKVPressureSLO_ScalesTransferPenaltyByClass(t *testing.T) {
	// 1000 µs pending: a 0.1 penalty before the class factor.
	snaps := []Snapshot{{PendingTransferLatency: 1000}, {KVUtilization: 0.3}, {KVThrashingRate: 0.1}}
	overridden := Config{KVPressureSLOScale: simcore.PerClass{
		V:   [simcore.NumSLOClasses]float64{simcore.SLOCritical: 10, simcore.SLOBatch: 0},
		Set: [simcore.NumSLOClasses]bool{simcore.SLOCritical: true, simcore.SLOBatch: true}}}
	tests := []struct {
		class simcore.SLOClass
		cfg   Config
		want  []float64 // utilisation and thrashing are never class-scaled
	}{
		{simcore.SLOCritical, Config{}, []float64{0.5, 0.7, 0.8}},
		{simcore.SLOStandard, Config{}, []float64{0.9, 0.7, 0.8}},
		{simcore.SLOSheddable, Config{}, []float64{0.98, 0.7, 0.8}},
		{simcore.SLOBatch, Config{}, []float64{0.98, 0.7, 0.8}},
		{simcore.SLOBackground, Config{}, []float64{0.99, 0.7, 0.8}},
		{simcore.SLONone, Config{}, []float64{0.9, 0.7, 0.8}},
		{simcore.SLOCritical, overridden, []float64{0, 0.7, 0.8}},
		{simcore.SLOBatch, overridden, []float64{1, 0.7, 0.8}},
		{simcore.SLOSheddable, overridden, []float64{0.98, 0.7, 0.8}},
	}
	for _, tc := range tests {
		t.Run(tc.class.Label(), func(t *testing.T) {
			assertScores(t, scoreWith(t, "kv-pressure-slo", tc.cfg, &simcore.Request{SLO: tc.class}, snaps), tc.want)
		})
	}
	penalty := func(c simcore.SLOClass) float64 {
		return 1 - scoreWith(t, "kv-pressure-slo", Config{}, &simcore.Request{SLO: c}, snaps[:1])[0]
	}
	if ratio := penalty(simcore.SLOCritical) / penalty(simcore.SLOSheddable); math.Abs(ratio-25) > 1e-9 {
		t.Fatalf("critical/sheddable transfer penalty ratio %v, want 25", ratio)
	}
}

// sloSnaps: loads 4, 0, 2 give queue-depth 0, 1, 0.5.
func sloSnaps() []Snapshot { return []Snapshot{{InFlight: 4}, {}, {InFlight: 2}} }

func TestSLOPriority_BlendsAffinityAndLoadPerClass(t *testing.T) {
	blend := func(pairs map[simcore.SLOClass]float64) simcore.PerClass {
		var p simcore.PerClass
		for c, v := range pairs {
			p.V[c], p.Set[c] = v, true
		}
		return p
	}
	tests := []struct {
		name  string
		class simcore.SLOClass
		blend simcore.PerClass
		want  []float64 // affinity 1, 0, 0; queue-depth 0, 1, 0.5
	}{
		{"critical leans on load", simcore.SLOCritical, simcore.PerClass{}, []float64{0.2, 0.8, 0.4}},
		{"standard keeps pa:3 to qd:2", simcore.SLOStandard, simcore.PerClass{}, []float64{0.6, 0.4, 0.2}},
		{"sheddable leans on affinity", simcore.SLOSheddable, simcore.PerClass{}, []float64{0.8, 0.2, 0.1}},
		{"batch like sheddable", simcore.SLOBatch, simcore.PerClass{}, []float64{0.8, 0.2, 0.1}},
		{"background like sheddable", simcore.SLOBackground, simcore.PerClass{}, []float64{0.8, 0.2, 0.1}},
		{"unclassed like standard", simcore.SLONone, simcore.PerClass{}, []float64{0.6, 0.4, 0.2}},
		{"configured 1: affinity only", simcore.SLOCritical, blend(map[simcore.SLOClass]float64{simcore.SLOCritical: 1}), []float64{1, 0, 0}},
		{"configured 0: queue-depth only", simcore.SLOSheddable, blend(map[simcore.SLOClass]float64{simcore.SLOSheddable: 0}), []float64{0, 1, 0.5}},
		{"other classes keep defaults", simcore.SLOStandard, blend(map[simcore.SLOClass]float64{simcore.SLOCritical: 1}), []float64{0.6, 0.4, 0.2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			parts := &profileParts{cfg: &Config{SLOPriorityBlend: tc.blend}, instances: 3}
			s := newSLOPriority(parts.cfg, parts.prefixRecord(), 3)
			parts.affinity.Observe(inputBlocks(1, 2, 3, 4), 0)
			r := inputBlocks(1, 2, 3, 4)
			r.SLO = tc.class
			out := make([]float64, 3)
			s.Score(r, sloSnaps(), out)
			assertScores(t, out, tc.want)
		})
	}
}

// Through the router: with the same cache and loads, a critical request
// goes to the idle instance and a sheddable one to its warm cache.
func TestSLOPriority_RoutesCriticalToLoadAndSheddableToCache(t *testing.T) {
	for _, tc := range []struct {
		class simcore.SLOClass
		want  int
	}{{simcore.SLOCritical, 1}, {simcore.SLOSheddable, 0}} {
		w := mustNew(t, Config{Policy: "weighted", Scorers: []ScorerWeight{{"slo-priority", 1}}}, 3, nil).(*weighted)
		w.observers[0].Observe(inputBlocks(1, 2, 3, 4), 0)
		r := inputBlocks(1, 2, 3, 4)
		r.SLO = tc.class
		if got := w.Route(r, sloSnaps(), 0); got != tc.want {
			t.Fatalf("%s request went to %d, want %d", tc.class, got, tc.want)
		}
	}
}

func TestSLOPriority_SharesOnePrefixRecord(t *testing.T) {
	tests := []struct {
		name    string
		scorers []ScorerWeight
	}{
		{"alone, owning the record", []ScorerWeight{{"slo-priority", 1}, {"queue-depth", 1}}},
		{"after prefix-affinity", []ScorerWeight{{"prefix-affinity", 3}, {"slo-priority", 2}}},
		{"before prefix-affinity", []ScorerWeight{{"slo-priority", 2}, {"kv-utilization", 1}, {"prefix-affinity", 3}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := mustNew(t, Config{Policy: "weighted", Scorers: tc.scorers}, 3, rand.New(rand.NewSource(1))).(*weighted)
			if len(w.observers) != 1 {
				t.Fatalf("%d records observed, want 1", len(w.observers))
			}
			record := w.observers[0].(*prefixAffinity)
			for _, s := range w.scorers {
				if p, ok := s.(*prefixAffinity); ok && p != record {
					t.Fatal("prefix-affinity has its own record")
				}
				if p, ok := s.(*sloPriority); ok && p.affinity != record {
					t.Fatal("slo-priority has its own record")
				}
			}
			chosen := w.Route(inputBlocks(1, 2, 3, 4), make([]Snapshot, 3), 0)
			// Recorded once: four touches on the chosen instance's ring.
			if ring := &record.index.rings[chosen]; ring.head != 4 || record.index.blockCount(chosen) != 4 {
				t.Fatalf("ring head %d, %d blocks; want 4 touches of 4 blocks", ring.head, record.index.blockCount(chosen))
			}
			// The next decision scores its own request, not a remembered one.
			out := make([]float64, 3)
			record.Score(inputBlocks(1, 2, 9), make([]Snapshot, 3), out)
			want := []float64{0, 0, 0}
			want[chosen] = 2.0 / 3
			assertScores(t, out, want)
		})
	}
}

func TestConfig_RejectsBadSeedScorerSettings(t *testing.T) {
	critical := func(v float64) simcore.PerClass {
		var p simcore.PerClass
		p.V[simcore.SLOCritical], p.Set[simcore.SLOCritical] = v, true
		return p
	}
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"negative delay", Config{CacheSignalDelay: -1}, "routing.cache_signal_delay_us: must be >= 0 µs (0 = live), got -1"},
		{"negative transfer scale", Config{KVPressureTransferScale: -5}, "routing.kv_pressure.transfer_scale: must be a finite number >= 0 µs (0 = default 10000), got -5"},
		{"infinite transfer scale", Config{KVPressureTransferScale: math.Inf(1)}, "routing.kv_pressure.transfer_scale: must be a finite number >= 0 µs (0 = default 10000), got +Inf"},
		{"NaN thrash weight", Config{KVPressureThrashWeight: math.NaN()}, "routing.kv_pressure.thrash_weight: must be a finite number >= 0 (0 = default 2), got NaN"},
		{"negative thrash weight", Config{KVPressureThrashWeight: -1}, "routing.kv_pressure.thrash_weight:"},
		{"blend above 1", Config{SLOPriorityBlend: critical(1.5)}, "routing.slo_priority_blend.critical: must be in [0,1] (the prefix-affinity share), got 1.5"},
		{"blend below 0", Config{SLOPriorityBlend: critical(-0.1)}, "routing.slo_priority_blend.critical: must be in [0,1] (the prefix-affinity share), got -0.1"},
		{"NaN blend", Config{SLOPriorityBlend: critical(math.NaN())}, "routing.slo_priority_blend.critical: must be in [0,1] (the prefix-affinity share), got NaN"},
		{"negative class scale", Config{KVPressureSLOScale: critical(-2)}, "routing.kv_pressure_slo_scale.critical: must be a finite number >= 0, got -2"},
		{"infinite class scale", Config{KVPressureSLOScale: critical(math.Inf(1))}, "routing.kv_pressure_slo_scale.critical: must be a finite number >= 0, got +Inf"},
		{"unknown scorer", Config{Scorers: []ScorerWeight{{"precise-prefix-cache", 1}}}, `unknown scorer "precise-prefix-cache" (allowed: active-request-scorer, kv-cache-utilization-scorer, kv-pressure, kv-pressure-slo, kv-utilization, load-aware-scorer, load-balance, no-hit-lru-scorer, precise-prefix, precise-prefix-cache-scorer, prefix-affinity, prefix-cache-scorer, queue-depth, queue-scorer, running-requests-size-scorer, session-affinity, session-affinity-scorer, slo-priority, token-load)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Policy = "weighted"
			r, err := New(tc.cfg, 2, nil)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v, want one line containing %q", err, tc.wantErr)
			}
			if r != nil {
				t.Fatal("got a router with the error")
			}
		})
	}
	valid := Config{Policy: "weighted", CacheSignalDelay: 0, SLOPriorityBlend: critical(0), KVPressureSLOScale: critical(0)}
	if err := valid.Validate(); err != nil {
		t.Fatalf("bounds rejected: %v", err)
	}
}
