//go:build quality

package studies_test

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"optimize/internal/testkit/studykit"
	"optimize/studies"
	"optimize/studies/report"
)

// jointRecord is what the joint-slo record reads off one study: its best
// trial's critical TTFT P99 and tokens/s against the baseline (fractions)
// and, when validated, the held-out change with its 95 % interval.
type jointRecord struct {
	seed                       int64
	trial                      int
	critical, tokens           float64
	heldOut, ciLow, ciHigh     float64
	better, heldOutSeeds       int
	scheduler, priority, admit string
	bestScores                 []float64 // the best score after each trial
	// attainment is each class's SLO attainment, [0] the baseline's and
	// [1] the best trial's, by class name.
	attainment map[string][2]float64
}

// runJoint creates and runs one study of template with trials trials (its
// default sampler, 2 workers) named name on workload (empty: the
// template's), warm-started from from when set, and reads its record;
// validate adds the held-out seeds 100-109.
func runJoint(t *testing.T, env *studies.Env, template, name, workload, from string, seed int64, trials int, validate bool) jointRecord {
	t.Helper()
	ctx := context.Background()
	row, err := env.Create(ctx, studies.CreateOptions{Template: template, Name: name, Trials: trials,
		Seeds: []int64{42, 43, 44}, Workload: workload, From: from, SamplerSeed: seed})
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Run(ctx, row); err != nil {
		t.Fatal(err)
	}
	r, err := report.Load(env.Store, env.Registry, name)
	if err != nil {
		t.Fatal(err)
	}
	rec := jointRecord{seed: seed, trial: r.Complete[r.Best].Number, bestScores: bestScores(r), attainment: map[string][2]float64{}}
	for _, row := range r.Table() {
		switch row.Name {
		case "critical_ttft_p99":
			rec.critical = row.Delta
		case "tokens_per_sec":
			rec.tokens = row.Delta
		}
		if class, ok := strings.CutSuffix(row.Name, " SLO attainment"); ok {
			rec.attainment[class] = [2]float64{row.Baseline, row.Best}
		}
	}
	params := r.ParamMap(r.Complete[r.Best].Params)
	rec.scheduler, rec.priority, rec.admit = fmt.Sprint(params["scheduler"]), fmt.Sprint(params["priority_policy"]), fmt.Sprint(params["admission"])
	if template == "joint-kv" {
		rec.priority, rec.admit = fmt.Sprint("preemption ", params["preemption"]), fmt.Sprint("offload above ", params["offload_threshold"])
	}
	if validate {
		v, err := env.Validate(ctx, name, studies.ValidateOptions{Trial: -1})
		if err != nil {
			t.Fatal(err)
		}
		o := v.Candidates[0].Objectives["critical_ttft_p99"]
		rec.heldOut, rec.ciLow, rec.ciHigh = float64(o.HeldOutDelta), float64(o.CI95[0]), float64(o.CI95[1])
		rec.better, rec.heldOutSeeds = o.BetterOnSeeds, o.Seeds
	}
	return rec
}

// TestJointSLORecord is the joint discovery record of BENCHMARKS.md: five
// 100-trial joint-slo studies at the default load (sampler seeds 1-5),
// each best validated on held-out seeds 100-109; five joint-kv studies,
// validated the same way; ten cold joint-slo studies in sustained overload
// (the workload's 2,000 req/s held for 10,000 requests); and re-tuning at
// 1.2 x the rate, cold against warm-started from the default-load studies.
// It asserts the bars where a study's outcome is not a matter of one
// sampler seed: joint-slo's median best at the default load reaches -74 %
// critical TTFT P99 within the -1 % tokens/s constraint and every held-out
// interval lies below -60 %; joint-kv's median best reaches -80 %; at
// least 6 of the 10 cold overload studies cut critical TTFT P99 by 80 %,
// and every overload winner keeps critical's and standard's SLO
// attainment within the template's one point of the baseline's (the
// winners before the class constraints ranked standard below sheddable:
// 0.093 → 0.03); the warm start's median best after 10 trials beats the
// cold one's.
func TestJointSLORecord(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	slo := bestPerSeed(t, env, "joint-slo", "default")
	for _, rec := range slo {
		if rec.tokens < -0.01 {
			t.Errorf("seed %d: best trial costs %.2f %% tokens/s, beyond the template's -1 %% constraint", rec.seed, 100*rec.tokens)
		}
		if rec.ciHigh >= -0.60 {
			t.Errorf("seed %d: held-out interval [%.1f %%, %.1f %%] not below -60 %%", rec.seed, 100*rec.ciLow, 100*rec.ciHigh)
		}
	}
	if m := medianCritical(slo); m > -0.74 {
		t.Errorf("joint-slo: median best critical TTFT P99 %.1f %%, want -74 %% or better", 100*m)
	}
	if m := medianCritical(bestPerSeed(t, env, "joint-kv", "kv")); m > -0.80 {
		t.Errorf("joint-kv: median best critical TTFT P99 %.1f %%, want -80 %% or better", 100*m)
	}

	var table strings.Builder
	const overload = "orthogonal-slo@sustained-overload"
	fmt.Fprintf(&table, "| study | critical TTFT P99 | tokens/s | SLO attainment: critical / standard / sheddable (baseline → best) | mechanism |\n|---|---:|---:|---|---|\n")
	found := 0
	for seed := int64(1); seed <= 10; seed++ {
		rec := runJoint(t, env, "joint-slo", fmt.Sprintf("overload-%d", seed), overload, "", seed, 100, false)
		if rec.critical <= -0.80 {
			found++
		}
		var att []string
		for _, class := range []string{"critical", "standard", "sheddable"} {
			a := rec.attainment[class]
			att = append(att, fmt.Sprintf("%.3f → %.3f", a[0], a[1]))
			if class != "sheddable" && a[1] < a[0]-0.01 {
				t.Errorf("overload seed %d: %s's SLO attainment %.3f, more than a point below the baseline's %.3f", seed, class, a[1], a[0])
			}
		}
		fmt.Fprintf(&table, "| cold, seed %d | %+.1f %% | %+.1f %% | %s | %s, %s, %s |\n", seed, 100*rec.critical, 100*rec.tokens, strings.Join(att, " / "), rec.scheduler, rec.priority, rec.admit)
	}
	t.Logf("joint-slo in sustained overload, 100 trials, cold: %d of 10 studies cut critical TTFT P99 by 80 %% or more\n%s", found, table.String())
	if found < 6 {
		t.Errorf("%d of 10 cold overload studies cut critical TTFT P99 by 80 %%, want at least 6 (9 measured with the softened sampler penalty, 5 without)", found)
	}

	// Warm start: re-tuning at 1.2 x the rate, 30 trials, cold (sampler
	// seed 10+k) against warm-started from default-k (same seed).
	table.Reset()
	fmt.Fprintf(&table, "| from | cold: best after 10 / 20 / 30 trials | warm: best after 10 / 20 / 30 |\n|---|---|---|\n")
	// The claim is about the first 10 trials: since gp's prior mean
	// (search/gpsampler.go) a cold study catches up by 20 (median best
	// warm 0.256 against cold 0.304 after 10; 0.237 against 0.227 after
	// 20), where with the earlier gp the warm start led at 20 as well
	// (0.20 against 0.26); with the stall rule as well, 0.237 against
	// 0.369 after 10 and 0.211 against 0.228 after 20 (one run).
	var coldAt10, warmAt10 []float64
	for k := int64(1); k <= 5; k++ {
		cold := runJoint(t, env, "joint-slo", fmt.Sprintf("near-cold-%d", k), "orthogonal-slo@rate-1.2x", "", 10+k, 30, false)
		warm := runJoint(t, env, "joint-slo", fmt.Sprintf("near-warm-%d", k), "orthogonal-slo@rate-1.2x", fmt.Sprintf("default-%d", k), 10+k, 30, false)
		c, w := cold.bestScores, warm.bestScores
		coldAt10, warmAt10 = append(coldAt10, c[9]), append(warmAt10, w[9])
		fmt.Fprintf(&table, "| default-%d | %.3f / %.3f / %.3f | %.3f / %.3f / %.3f |\n", k, c[9], c[19], c[29], w[9], w[19], w[29])
	}
	sort.Float64s(coldAt10)
	sort.Float64s(warmAt10)
	t.Logf("re-tuning joint-slo at orthogonal-slo@rate-1.2x (score: critical TTFT P99 / baseline's + penalties); median best after 10 trials: cold %.3f, warm %.3f\n%s",
		coldAt10[2], warmAt10[2], table.String())
	if warmAt10[2] >= coldAt10[2] {
		t.Errorf("warm start: median best after 10 trials %.3f, no better than cold %.3f", warmAt10[2], coldAt10[2])
	}
}

// bestPerSeed runs template's study NAME-1 .. NAME-5 (sampler seeds 1-5,
// 100 trials, the template's workload), validates each best on held-out
// seeds, and logs the table of BENCHMARKS.md.
func bestPerSeed(t *testing.T, env *studies.Env, template, name string) []jointRecord {
	var table strings.Builder
	fmt.Fprintf(&table, "| sampler seed | best trial | critical TTFT P99 | tokens/s | held out (seeds 100-109) | 95 %% interval | better on | mechanism |\n|---:|---:|---:|---:|---:|---|---:|---|\n")
	var recs []jointRecord
	for seed := int64(1); seed <= 5; seed++ {
		rec := runJoint(t, env, template, fmt.Sprintf("%s-%d", name, seed), "", "", seed, 100, true)
		recs = append(recs, rec)
		fmt.Fprintf(&table, "| %d | %d | %+.1f %% | %+.1f %% | %+.1f %% | [%+.1f %%, %+.1f %%] | %d/%d | %s, %s, %s |\n",
			seed, rec.trial, 100*rec.critical, 100*rec.tokens, 100*rec.heldOut, 100*rec.ciLow, 100*rec.ciHigh,
			rec.better, rec.heldOutSeeds, rec.scheduler, rec.priority, rec.admit)
	}
	t.Logf("%s on its workload, 100 trials, default sampler, 2 workers\n%s", template, table.String())
	return recs
}

// medianCritical is the median best critical TTFT P99 change of recs.
func medianCritical(recs []jointRecord) float64 {
	c := make([]float64, len(recs))
	for i, r := range recs {
		c[i] = r.critical
	}
	sort.Float64s(c)
	return c[len(c)/2]
}

// bestScores is, per complete trial in number order, the lowest score so
// far (what the sampler reached, penalties included).
func bestScores(r *report.Report) []float64 {
	out := make([]float64, len(r.Complete))
	best := math.Inf(1)
	for i, c := range r.Complete {
		best = min(best, c.Score)
		out[i] = best
	}
	return out
}
