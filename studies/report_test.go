package studies

import (
	"math"
	"slices"
	"testing"

	"optimize/simcore/metrics"
	"optimize/strategies"
)

// A loaded report carries every trial's per-seed metrics in the study's
// seed order: their mean is the stored mean, and the seed range and the
// per-seed comparison with the baseline are computed from them.
func TestReportCarriesPerSeedMetrics(t *testing.T) {
	env := testEnv(t, 1)
	r := runStudyIn(t, env, "random", 3, 3)
	if len(r.Seeds) != 3 || len(r.BaseSeeds) != 3 {
		t.Fatalf("seeds %v, %d baseline runs", r.Seeds, len(r.BaseSeeds))
	}
	rows, err := env.Store.StudySeedMetrics(r.Study.ID)
	if err != nil {
		t.Fatal(err)
	}
	crit := strategies.Objective{Name: "crit", Metric: "per_slo.critical.ttft_ms.p99", Minimize: true}
	get := metricOf(crit.Metric)
	for _, c := range r.Complete {
		seeds, summary := c.Seeds(), c.Summary()
		if k := slices.IndexFunc(r.Template.Objectives, func(o strategies.Objective) bool { return o.Metric == crit.Metric }); k >= 0 {
			if sp, want := c.objectiveRange(k, crit.Metric), Spread(seeds, get); sp != want {
				t.Fatalf("trial %d: stored seed range %v, from the seeds %v", c.Number, sp, want)
			}
		}
		if len(seeds) != 3 {
			t.Fatalf("trial %d: %d per-seed runs", c.Number, len(seeds))
		}
		for _, row := range rows[trialID(t, env, r, c.Number)] {
			if i := slices.Index(r.Seeds, row.Seed); get(&seeds[i]) != get(&row.Metrics) {
				t.Fatalf("trial %d: PerSeed[%d] is not seed %d's run", c.Number, i, row.Seed)
			}
		}
		sp := Spread(seeds, get)
		mean := (get(&seeds[0]) + get(&seeds[1]) + get(&seeds[2])) / 3
		if !(sp.Min <= get(&summary) && get(&summary) <= sp.Max) || math.Abs(mean-get(&summary)) > 1e-9*mean || sp.Min == sp.Max {
			t.Fatalf("trial %d: mean %v, per-seed range %v, mean of the seeds %v", c.Number, get(&summary), sp, mean)
		}
		better := 0
		for i := range seeds {
			if get(&seeds[i]) < get(&r.BaseSeeds[i]) {
				better++
			}
		}
		if got := r.BetterOnSeeds(&c, crit); got != better {
			t.Fatalf("trial %d: better on %d seeds, counted %d", c.Number, got, better)
		}
	}
}

func TestSpread(t *testing.T) {
	runs := []metrics.Summary{{TokensPerSec: 3}, {TokensPerSec: 1}, {TokensPerSec: 2}}
	if sp := Spread(runs, func(m *metrics.Summary) float64 { return m.TokensPerSec }); sp != (SeedRange{Min: 1, Max: 3}) {
		t.Fatalf("spread %v, want 1 – 3", sp)
	}
}

func trialID(t *testing.T, env *Env, r *Report, number int) uint {
	trials, err := env.Store.Trials(r.Study.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range trials {
		if tr.Number == number {
			return tr.ID
		}
	}
	t.Fatalf("no trial %d", number)
	return 0
}
