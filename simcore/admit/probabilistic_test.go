package admit

import (
	"math"
	"strings"
	"testing"

	"optimize/simcore"
	"optimize/simcore/route"
)

// p = min(saturation^5 · 300, 1) at the defaults: a dead zone below about
// 0.1, 1 % at 0.127, 9.6 % at 0.2, and certain rejection from
// (1/300)^(1/5) ≈ 0.320 up.
func TestProbabilistic_RejectProbability(t *testing.T) {
	c := ProbabilisticConfig{}.InEffect()
	capAt := math.Pow(1.0/300, 0.2)
	tests := []struct{ sat, want float64 }{
		{0, 0},
		{0.05, 300 * 3.125e-7}, // 9.4e-5: the dead zone
		{0.08, 300 * 3.2768e-6},
		{0.1, 0.003},
		{0.127, 300 * math.Pow(0.127, 5)}, // 0.0099
		{0.2, 0.096},
		{0.3, 0.729},
		{capAt, 1},
		{0.34, 1}, // 1.36 capped
		{5, 1},
	}
	for _, tc := range tests {
		if got := c.RejectProbability(tc.sat); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("saturation %.3f: p = %.6f, want %.6f", tc.sat, got, tc.want)
		}
	}
	if p := c.RejectProbability(0.08); p >= 0.001 {
		t.Errorf("p(0.08) = %v, want < 0.1 %% (dead zone)", p)
	}
	if p := c.RejectProbability(0.127); p < 0.0095 || p > 0.0105 {
		t.Errorf("p(0.127) = %v, want about 1 %%", p)
	}
	if p := c.RejectProbability(capAt - 0.01); p > 0.9 {
		t.Errorf("p just below the cap = %v, want < 0.9", p)
	}
	// The parameters move the curve: k 100 divides p by 3 below the cap;
	// power 2 makes it gentler.
	k100 := ProbabilisticConfig{K: 100}.InEffect()
	if got := k100.RejectProbability(0.2); math.Abs(got-0.032) > 1e-9 {
		t.Errorf("k 100: p(0.2) = %v, want 0.032", got)
	}
	p2 := ProbabilisticConfig{Power: 2, K: 1}.InEffect()
	if got := p2.RejectProbability(0.5); math.Abs(got-0.25) > 1e-12 {
		t.Errorf("power 2, k 1: p(0.5) = %v, want 0.25", got)
	}
}

// Saturation is the mean over instances of max(queue depth / 5, KV
// utilisation / 0.8) at the defaults.
func TestProbabilistic_Saturation(t *testing.T) {
	c := ProbabilisticConfig{}.InEffect()
	load := &Load{Instances: []route.Snapshot{
		{QueueDepth: 5, KVUtilization: 0.4}, // queue-bound: 1
		{QueueDepth: 0, KVUtilization: 0.8}, // KV-bound: 1
		{QueueDepth: 1, KVUtilization: 0.4}, // 0.2 vs 0.5: 0.5
		{QueueDepth: 0, KVUtilization: 0},   // idle: 0
	}}
	if got := c.Saturation(load); math.Abs(got-2.5/4) > 1e-12 {
		t.Fatalf("saturation %v, want %v", got, 2.5/4)
	}
	c2 := ProbabilisticConfig{QueueDepthThreshold: 10, KVUtilThreshold: 0.5}.InEffect()
	if got := c2.Saturation(load); math.Abs(got-(0.8+1.6+0.8+0)/4) > 1e-12 {
		t.Fatalf("thresholds 10 and 0.5: saturation %v, want %v", got, (0.8+1.6+0.8)/4)
	}
	if got := c.Saturation(&Load{}); got != 0 {
		t.Fatalf("no instances: saturation %v, want 0", got)
	}
}

// uniformLoad is n instances each at the given queue depth (and no KV).
func uniformLoad(n int, depth int32) *Load {
	l := &Load{Instances: make([]route.Snapshot, n)}
	for i := range l.Instances {
		l.Instances[i].QueueDepth = depth
	}
	return l
}

func newTestPolicy(t *testing.T, cfg ProbabilisticConfig, seed int64) Policy {
	t.Helper()
	p, err := New(Config{Policy: Probabilistic, Probabilistic: cfg}, simcore.SubsystemRNG(seed, "admission"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Critical, standard and unclassed requests are admitted at any load and
// draw nothing; sheddable, batch and background ones are shed at the
// formula's rate, one draw each.
func TestProbabilistic_ShedsOnlyTheSheddableTiers(t *testing.T) {
	p := newTestPolicy(t, ProbabilisticConfig{}, 42)
	swamped := uniformLoad(8, 1000) // saturation 200: p = 1
	for _, c := range []simcore.SLOClass{simcore.SLOCritical, simcore.SLOStandard, simcore.SLONone, simcore.SLOClass(200)} {
		for i := range 1000 {
			if !p.Admit(&simcore.Request{SLO: c}, simcore.Tick(i), swamped) {
				t.Fatalf("%s rejected at saturation 200", c.Label())
			}
		}
	}
	// Nothing was drawn: the stream is where a fresh one starts.
	fresh := simcore.SubsystemRNG(42, "admission")
	if got, want := p.(*probabilistic).rng.Int63(), fresh.Int63(); got != want {
		t.Fatalf("never-shed classes drew from the stream")
	}
	idle := uniformLoad(8, 0)
	for _, c := range []simcore.SLOClass{simcore.SLOSheddable, simcore.SLOBatch, simcore.SLOBackground} {
		for i := range 1000 {
			if !p.Admit(&simcore.Request{SLO: c}, 0, idle) {
				t.Fatalf("%s rejected when idle", c)
			}
			if p.Admit(&simcore.Request{SLO: c}, simcore.Tick(i), swamped) {
				t.Fatalf("%s admitted at saturation 200", c)
			}
		}
	}
	// Saturation 0.2 (one waiting request per instance): 9.6 % shed.
	at02 := uniformLoad(8, 1)
	const n = 100_000
	shed := 0
	for i := range n {
		if !p.Admit(&simcore.Request{SLO: simcore.SLOSheddable}, simcore.Tick(i), at02) {
			shed++
		}
	}
	if rate := float64(shed) / n; rate < 0.09 || rate > 0.102 {
		t.Fatalf("saturation 0.2: shed %.4f of sheddable requests, want 0.096 ± 0.006", rate)
	}
}

// The same seed gives the same decisions; another seed others.
func TestProbabilistic_DeterministicPerSeed(t *testing.T) {
	decide := func(seed int64) []bool {
		p := newTestPolicy(t, ProbabilisticConfig{}, seed)
		out := make([]bool, 2000)
		load := uniformLoad(4, 1)
		for i := range out {
			out[i] = p.Admit(&simcore.Request{SLO: simcore.SLOBatch}, simcore.Tick(i), load)
		}
		return out
	}
	a, b, c := decide(7), decide(7), decide(8)
	same := true
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("seed 7 twice: decision %d differs", i)
		}
		same = same && a[i] == c[i]
	}
	if same {
		t.Fatal("seeds 7 and 8 made the same 2000 decisions")
	}
}

func TestProbabilistic_RejectsBadConfig(t *testing.T) {
	tests := []struct {
		cfg     ProbabilisticConfig
		wantErr string
	}{
		{ProbabilisticConfig{QueueDepthThreshold: -1}, "admission.probabilistic.queue_depth_threshold: must be a finite number > 0, got -1"},
		{ProbabilisticConfig{KVUtilThreshold: 1.5}, "admission.probabilistic.kv_util_threshold: must be a number in (0, 1], got 1.5"},
		{ProbabilisticConfig{Power: math.NaN()}, "admission.probabilistic.power: must be a finite number > 0, got NaN"},
		{ProbabilisticConfig{K: math.Inf(1)}, "admission.probabilistic.k: must be a finite number > 0, got +Inf"},
	}
	for _, tc := range tests {
		for _, policy := range []string{Probabilistic, "always-admit"} {
			p, err := New(Config{Policy: policy, Probabilistic: tc.cfg}, nil)
			if err == nil || err.Error() != tc.wantErr || p != nil {
				t.Errorf("%s: got %v, %v; want %q", policy, p, err, tc.wantErr)
			}
		}
	}
	if _, err := New(Config{Policy: Probabilistic}, nil); err == nil || !strings.Contains(err.Error(), "needs a random stream") {
		t.Errorf("no stream: %v", err)
	}
	if err := Validate(Config{Policy: Probabilistic}); err != nil {
		t.Errorf("Validate without a stream: %v", err)
	}
}

func TestProbabilistic_DoesNotAllocate(t *testing.T) {
	p := newTestPolicy(t, ProbabilisticConfig{}, 1)
	load := uniformLoad(8, 1)
	r := &simcore.Request{SLO: simcore.SLOSheddable}
	if allocs := testing.AllocsPerRun(1000, func() { p.Admit(r, 0, load) }); allocs != 0 {
		t.Fatalf("Admit allocates %v times per call", allocs)
	}
}
