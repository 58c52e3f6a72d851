package report_test

import (
	"math"
	"slices"
	"testing"

	"optimize/internal/testkit/studykit"
	"optimize/simcore/metrics"
	"optimize/strategies"
	"optimize/studies"
	"optimize/studies/report"
)

// A loaded report carries every trial's per-seed metrics in the study's
// seed order: their mean is the stored mean, and the seed range and the
// per-seed comparison with the baseline are computed from them.
func TestReportCarriesPerSeedMetrics(t *testing.T) {
	env := studykit.TempEnv(t, 1)
	o := studykit.Study("slo-cascade", "q", 3)
	o.Sampler, o.SamplerSeed = "random", 3
	r := studykit.RunStudy(t, env, o)
	if len(r.Seeds) != 3 || len(r.BaseSeeds) != 3 {
		t.Fatalf("seeds %v, %d baseline runs", r.Seeds, len(r.BaseSeeds))
	}
	rows, err := env.Store.StudySeedMetrics(r.Study.ID)
	if err != nil {
		t.Fatal(err)
	}
	crit := strategies.Objective{Name: "crit", Metric: "per_slo.critical.ttft_ms.p99", Minimize: true}
	get := report.MetricOf(crit.Metric)
	for _, c := range r.Complete {
		seeds, summary := c.Seeds(), c.Summary()
		if k := slices.IndexFunc(r.Template.Objectives, func(o strategies.Objective) bool { return o.Metric == crit.Metric }); k >= 0 {
			if sp, want := c.ObjectiveRange(k, crit.Metric), report.Spread(seeds, crit.Metric); sp != want {
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
		sp := report.Spread(seeds, crit.Metric)
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
	if sp := report.Spread(runs, "tokens_per_sec"); sp != (report.SeedRange{Min: 1, Max: 3}) {
		t.Fatalf("spread %v, want 1 – 3", sp)
	}
}

func trialID(t *testing.T, env *studies.Env, r *report.Report, number int) uint {
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
