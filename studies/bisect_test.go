package studies

import (
	"errors"
	"math"
	"testing"
)

// TestMaxRateBrackets: on a predicate that holds up to a known threshold,
// the search answers a rate that meets it, within the tolerance below the
// threshold, with the fails-side bound above it, in at most 2 + the
// bracketing steps + ⌈log2(1/tol)⌉ probes, whether it starts below or
// above the threshold.
func TestMaxRateBrackets(t *testing.T) {
	const tol = 0.02
	for _, c := range []struct{ start, threshold float64 }{
		{1000, 1100}, {2000, 1100}, {100, 1234.5}, {5000, 97}, {1, 1},
	} {
		var probed []float64
		s, err := maxRate(c.start, tol, func(r float64) (bool, error) {
			probed = append(probed, r)
			return r <= c.threshold, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !s.Bounded() {
			t.Fatalf("start %g threshold %g: unbounded %+v", c.start, c.threshold, s)
		}
		if s.Rate > c.threshold || s.Rate < c.threshold/(1+tol) {
			t.Errorf("start %g threshold %g: rate %g, want in [%g, %g]", c.start, c.threshold, s.Rate, c.threshold/(1+tol), c.threshold)
		}
		if s.Above <= c.threshold || s.Above-s.Rate > tol*s.Rate {
			t.Errorf("start %g threshold %g: fails at %g, want above the threshold within %g of %g", c.start, c.threshold, s.Above, tol, s.Rate)
		}
		brackets := math.Ceil(math.Abs(math.Log2(c.threshold / c.start)))
		if bound := 2 + int(brackets) + int(math.Ceil(math.Log2(1/tol))); s.Probes > bound || s.Probes != len(probed) {
			t.Errorf("start %g threshold %g: %d probes (%d calls), want ≤ %d", c.start, c.threshold, s.Probes, len(probed), bound)
		}
	}
}

// TestMaxRateUnbounded: a predicate that always holds (or never does)
// stops after the bracketing steps, saying so.
func TestMaxRateUnbounded(t *testing.T) {
	always, _ := maxRate(100, 0.02, func(float64) (bool, error) { return true, nil })
	if always.Bounded() || always.Rate != 100*(1<<bracketSteps) || always.Probes != 1+bracketSteps {
		t.Errorf("always: %+v, want rate %d unbounded after %d probes", always, 100*(1<<bracketSteps), 1+bracketSteps)
	}
	never, _ := maxRate(100, 0.02, func(float64) (bool, error) { return false, nil })
	if never.Bounded() || never.Rate != 0 || never.Probes != 1+bracketSteps {
		t.Errorf("never: %+v, want rate 0 after %d probes", never, 1+bracketSteps)
	}
	boom := errors.New("boom")
	if _, err := maxRate(100, 0.02, func(r float64) (bool, error) { return r < 300, map[bool]error{true: boom}[r > 300] }); !errors.Is(err, boom) {
		t.Errorf("a failing probe: err %v, want boom", err)
	}
}

// TestMaxRateRepeats: the same answers give the same probes (a search
// rebuilt from stored runs asks for exactly the runs the first one made).
func TestMaxRateRepeats(t *testing.T) {
	var first, second []float64
	run := func(out *[]float64) {
		_, _ = maxRate(700, 0.02, func(r float64) (bool, error) { *out = append(*out, r); return r < 1111, nil })
	}
	run(&first)
	run(&second)
	if len(first) != len(second) {
		t.Fatalf("probes %v then %v", first, second)
	}
	for i := range first {
		if first[i] != second[i] {
			t.Fatalf("probes %v then %v", first, second)
		}
	}
}
