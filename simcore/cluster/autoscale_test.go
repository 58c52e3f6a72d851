package cluster

import (
	"testing"
)

// Hand computations of the saturation analyzer V2 and the unlimited
// engine (BLIS f90a1e3a's arithmetic), thresholds at their defaults: KV
// 0.8, scale-up 0.8, scale-down 0.4, 512 input tokens per queued request.
// An instance of 4,000 blocks of 16 tokens holds 64,000 tokens, so its
// capacity is 0.8 × 64,000 = 51,200 tokens.
func TestAnalyzerByHand(t *testing.T) {
	p := analyzerParams{kvThreshold: 0.8, upThreshold: 0.8, downBoundary: 0.4, avgInput: 512}
	full := int64(64000)
	cases := []struct {
		name    string
		reps    []replicaSignal
		pending int64
		delta   int
	}{
		// Demand 40,000 + 10×512 = 45,120 and 30,000 + 20×512 = 40,240:
		// 85,360 tokens. Required = 85,360 / 0.8 − 102,400 = 4,300 > 0:
		// add ceil(4,300 / 51,200) = 1 instance.
		{"deficit", []replicaSignal{{full, 40000, 10}, {full, 30000, 20}}, 0, 1},
		// A loading instance of 64,000 tokens adds 51,200 of pending supply:
		// 106,700 − 153,600 < 0, no scale-up; spare = 102,400 − 85,360 / 0.4
		// = −111,000 ≤ 0, no scale-down.
		{"covered by a loading instance", []replicaSignal{{full, 40000, 10}, {full, 30000, 20}}, full, 0},
		// Full caches and 100 queued each: demand 2 × (64,000 + 51,200) =
		// 230,400; required 230,400 / 0.8 − 102,400 = 185,600 = 3.625
		// instances' capacity: add 4.
		{"deficit of 4 instances", []replicaSignal{{full, 64000, 100}, {full, 64000, 100}}, 0, 4},
		// Idle: supply 204,800, demand 0, spare 204,800; without one
		// instance 153,600 > 0, so floor(204,800 / 51,200) = 4 go: all of
		// them (BLIS checks that one can go, then drains the whole surplus).
		{"idle drained whole", []replicaSignal{{full, 0, 0}, {full, 0, 0}, {full, 0, 0}, {full, 0, 0}}, 0, -4},
		// Demand 20,000: 20,000 / 0.4 = 50,000; spare = 204,800 − 50,000 =
		// 154,800; 153,600 > 50,000; floor(154,800 / 51,200) = 3.
		{"surplus of 3", []replicaSignal{{full, 5000, 0}, {full, 5000, 0}, {full, 5000, 0}, {full, 5000, 0}}, 0, -3},
		// One instance is never drained by the analyzer.
		{"last instance", []replicaSignal{{full, 0, 0}}, 0, 0},
		// Not read yet (t = 0: capacity 0): no signal at all.
		{"unread", []replicaSignal{{0, 0, 5}, {0, 0, 5}}, 0, 0},
		// Nothing routable: no scale-from-zero, even with load pending.
		{"none routable", nil, full, 0},
	}
	for _, c := range cases {
		a := analyze(c.reps, c.pending, p)
		if d := a.delta(); d != c.delta {
			t.Errorf("%s: delta %d, want %d (%+v)", c.name, d, c.delta, a)
		}
	}
	// The deficit case's numbers themselves.
	a := analyze(cases[0].reps, 0, p)
	if a.supply != 102400 || a.demand != 85360 || a.required != 85360/0.8-102400 || a.spare != 0 {
		t.Errorf("deficit: %+v; want supply 102400, demand 85360, required 4300", a)
	}
}

// A window of 1,000 µs, ticks every 500 µs: the first signal starts the
// window and is held, the signal at 1,000 µs has lasted the window and
// passes, and starts afresh; a tick without the signal forgets it. A
// window of 0 passes every signal.
func TestStabilizerByHand(t *testing.T) {
	var s stabilizer
	steps := []struct {
		now    int64
		signal bool
		pass   bool
	}{
		{0, true, false}, {500, true, false}, {1000, true, true},
		{1500, true, false}, {2000, false, false}, {2500, true, false}, {3000, true, false}, {3500, true, true},
	}
	for _, st := range steps {
		if got := s.pass(st.signal, st.now, 1000); got != st.pass {
			t.Errorf("t=%d signal %v: pass %v, want %v", st.now, st.signal, got, st.pass)
		}
	}
	var z stabilizer
	for _, now := range []int64{0, 1, 2} {
		if !z.pass(true, now, 0) {
			t.Errorf("window 0: t=%d held", now)
		}
	}
}

// Delays: without a spread exactly the mean and no draw; with one, mean +
// stddev × the draw, clamped at 0, in whole µs.
func TestSampleDelayByHand(t *testing.T) {
	noDraw := func() float64 { t.Fatal("drew without a spread"); return 0 }
	if got := sampleDelay(Delay{Mean: 2}, noDraw); got != 2_000_000 {
		t.Errorf("2 s: %d µs", got)
	}
	if got := sampleDelay(Delay{Mean: 1, Stddev: 0.5}, func() float64 { return 0.5 }); got != 1_250_000 {
		t.Errorf("1 + 0.5 × 0.5 s: %d µs, want 1250000", got)
	}
	if got := sampleDelay(Delay{Mean: 1, Stddev: 0.5}, func() float64 { return -3 }); got != 0 {
		t.Errorf("1 − 1.5 s clamps at 0: %d µs", got)
	}
}
