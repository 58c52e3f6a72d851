//go:build quality

package studies_test

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"optimize/internal/testkit/studykit"
)

// TestHypervolumeBySampler measures how well each sampler covers the
// trade-off: per template and sampler seed 1-10, the hypervolume of the
// study's Pareto front after 100 trials (objectives as ratios to the
// baseline, reference 2 on each axis: the study's own definition), for the
// multi-objective sampler (parego), TPE on the scalarised primary
// objective, and random search (only trials within the constraints count,
// as in the study's own front). It logs each sampler's median, range and
// wins out of 10 against each other sampler; the templates are $OPTIMIZE_MO_TEMPLATES
// (comma-separated) or slo-cascade, joint-slo and joint-kv. It
// asserts nothing: it is the measurement that picks the default sampler
// for templates with several objectives (BENCHMARKS.md).
func TestHypervolumeBySampler(t *testing.T) {
	templates := []string{"slo-cascade", "joint-slo", "joint-kv"}
	if env := os.Getenv("OPTIMIZE_MO_TEMPLATES"); env != "" {
		templates = strings.Split(env, ",")
	}
	const trials, seeds = 100, 10
	samplers := []string{"parego", "tpe", "random"}
	if env := os.Getenv("OPTIMIZE_MO_SAMPLERS"); env != "" {
		samplers = strings.Split(env, ",")
	}
	var table strings.Builder
	fmt.Fprintf(&table, "| template | sampler | median hypervolume | min – max | wins /%d against |\n|---|---|---:|---:|---|\n", seeds)
	for _, tpl := range templates {
		if _, err := studykit.TempEnv(t, 1).Registry.Get(tpl); err != nil {
			t.Logf("%s: not a template here, skipped", tpl)
			continue
		}
		hv := map[string][]float64{}
		for _, smp := range samplers {
			for seed := int64(1); seed <= seeds; seed++ {
				r := runTemplateStudy(t, studykit.TempEnv(t, 2), tpl, smp, seed, trials)
				hv[smp] = append(hv[smp], r.Hypervolume)
				t.Logf("%s %s seed %2d: hypervolume %.4f (front of %d)", tpl, smp, seed, r.Hypervolume, len(r.Pareto))
			}
		}
		for _, smp := range samplers {
			var wins []string
			for _, other := range samplers {
				if other == smp {
					continue
				}
				n := 0
				for i := range hv[smp] {
					if hv[smp][i] > hv[other][i] {
						n++
					}
				}
				wins = append(wins, fmt.Sprintf("%s %d", other, n))
			}
			sorted := append([]float64(nil), hv[smp]...)
			sort.Float64s(sorted)
			median := (sorted[seeds/2-1] + sorted[seeds/2]) / 2
			fmt.Fprintf(&table, "| %s | %s | %.4f | %.4f – %.4f | %s |\n", tpl, smp, median, sorted[0], sorted[seeds-1], strings.Join(wins, ", "))
		}
	}
	t.Logf("%d trials, 2 workers, sampler seeds 1-%d, simulation seeds 42-44\n%s", trials, seeds, table.String())
}
