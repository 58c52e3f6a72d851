package studies

import (
	"testing"

	"optimize/internal/testkit"
	"optimize/simcore/cluster"
	"optimize/simcore/metrics"
	"optimize/simcore/workload"
	"optimize/strategies/workloads"
	"optimize/studies/report"
)

// poissonOneInstance is one critical client with Poisson arrivals at 40
// req/s, short prompts and outputs and a 200 ms TTFT target: on a single
// instance its TTFT attainment falls as the rate rises, once the queue
// builds.
const poissonOneInstance = `version: "2"
seed: 7
aggregate_rate: 40
num_requests: 200
clients:
  - id: c
    slo_class: critical
    rate_fraction: 1
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 256, std_dev: 32, min: 128, max: 384}}
    output_distribution: {type: exponential, params: {mean: 64}}
slo_targets:
  critical: {ttft_ms: 200}
`

// builtinBaseline is the baseline template's configuration at its
// defaults, in the seeds' world.
func builtinBaseline(t *testing.T) cluster.Config {
	t.Helper()
	reg, base := testkit.Builtins(t)
	bt, err := reg.Get("baseline")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := bt.Config(base, bt.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// oneInstancePoisson is the baseline on a single instance and the Poisson
// workload whose threshold the tests below know.
func oneInstancePoisson(t *testing.T) (cluster.Config, *workloads.Workload) {
	t.Helper()
	cfg := builtinBaseline(t)
	cfg.NumInstances = 1
	spec, err := workload.ParseSpec("poisson-one", []byte(poissonOneInstance))
	if err != nil {
		t.Fatal(err)
	}
	wl := &workloads.Workload{Name: "poisson-one", Spec: spec}
	return cfg, wl
}

// TestSustainableRateBracketsTheThreshold: on a single instance with
// Poisson arrivals, a scan of rates 1 % apart finds where critical TTFT
// attainment ≥ 0.99 stops holding (and checks that it never holds again
// above); the bisection's answer meets the target, lies below the scan's
// first failing rate and within the tolerance of its last meeting one.
func TestSustainableRateBracketsTheThreshold(t *testing.T) {
	cfg, wl := oneInstancePoisson(t)
	targets := []report.AttainmentTarget{{Metric: "per_slo.critical.ttft_attainment", Min: 0.99}}
	const seed, tol = 100, 0.02
	run := func(_ string, cfg cluster.Config, wl *workloads.Workload, seed int64) (metrics.Summary, error) {
		return simulate(cfg, wl, seed)
	}
	meets := func(rate float64) bool {
		m, err := run("", cfg, atRate(wl, rate), seed)
		if err != nil {
			t.Fatal(err)
		}
		ok, err := meetsTargets(&m, targets)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}

	got, err := sustainable("scan", cfg, wl, seed, targets, tol, run)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Bounded() {
		t.Fatalf("search unbounded: %+v", got)
	}
	// The scan: rates 1 % apart from a quarter of the answer to twice it.
	lastMeet, firstFail := 0.0, 0.0
	for r := got.Rate / 4; r < 2*got.Rate; r *= 1.01 {
		ok := meets(r)
		switch {
		case ok && firstFail > 0:
			t.Fatalf("attainment is not monotone in the rate here: %g meets, %g below it does not", r, firstFail)
		case ok:
			lastMeet = r
		case firstFail == 0:
			firstFail = r
		}
	}
	t.Logf("bisection %.2f req/s (fails at %.2f, %d probes); scan: meets at %.2f, fails from %.2f", got.Rate, got.Above, got.Probes, lastMeet, firstFail)
	if lastMeet == 0 || firstFail == 0 {
		t.Fatalf("the scan did not cross the threshold: last meeting %g, first failing %g", lastMeet, firstFail)
	}
	if got.Rate >= firstFail || got.Rate < lastMeet/(1+tol) {
		t.Errorf("bisection's rate %g, want in [%g, %g): below the scan's first failing rate, within %g of its last meeting one",
			got.Rate, lastMeet/(1+tol), firstFail, tol)
	}
	if got.Above <= lastMeet {
		t.Errorf("bisection fails at %g, at or below the scan's meeting rate %g", got.Above, lastMeet)
	}
	if got.Probes > 2+bracketSteps+6 {
		t.Errorf("%d probes, want ≤ %d", got.Probes, 2+bracketSteps+6)
	}
}

// TestLoadRegimesScaleTheMeasuredCapacity: load-0.6 and load-1.5 set the
// rate to that fraction of the baseline's measured capacity in the world
// (a single instance here); at 0.6 the default targets hold on every
// capacity seed, at 1.5 they fail on every one.
func TestLoadRegimesScaleTheMeasuredCapacity(t *testing.T) {
	cfg, wl := oneInstancePoisson(t)
	capacity, err := capacity(wl, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("capacity %.1f req/s", capacity)
	for _, c := range []struct {
		regime string
		holds  bool
	}{{"load-0.6", true}, {"load-1.5", false}} {
		rg, err := workloads.LookupRegime(c.regime)
		if err != nil {
			t.Fatal(err)
		}
		at, err := atLoad(wl.At(rg), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := at.Spec.AggregateRate / capacity; got != rg.LoadFraction || at.LoadFraction() != 0 {
			t.Errorf("%s: rate %.1f = %g × capacity, want %g (applied once)", c.regime, at.Spec.AggregateRate, got, rg.LoadFraction)
		}
		for _, seed := range capacitySeeds {
			m, err := simulate(cfg, atRate(at, at.Spec.AggregateRate), seed)
			if err != nil {
				t.Fatal(err)
			}
			if ok, _ := meetsTargets(&m, defaultTargets(wl.Spec)); ok != c.holds {
				t.Errorf("%s seed %d: targets met %v, want %v", c.regime, seed, ok, c.holds)
			}
		}
	}
}
