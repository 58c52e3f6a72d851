//go:build quality

package studies_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"optimize/internal/testkit/studykit"
)

// TestHistoryBoundQuality measures what bounding TPE's history costs in a
// long study: slo-cascade, 1,000 trials on 2 workers, sampler seeds 1-5,
// the best score found when TPE models the best 25 and the newest 150 (the
// default), the newest 275, or every trial. It asserts nothing; the table
// is in BENCHMARKS.md.
func TestHistoryBoundQuality(t *testing.T) {
	const trials, seeds = 1000, 5
	bounds := []struct {
		name    string
		history int
	}{{"25 best + 150 newest (default)", 0}, {"25 best + 275 newest", 275}, {"every trial", -1}}
	var b strings.Builder
	fmt.Fprintf(&b, "| history TPE models | median best score | range | seed 1-%d |\n|---|---:|---|---|\n", seeds)
	for _, bound := range bounds {
		var best []float64
		for seed := int64(1); seed <= seeds; seed++ {
			env := studykit.TempEnv(t, 2)
			env.History = bound.history
			r := runTemplateStudy(t, env, "slo-cascade", "tpe", seed, trials)
			best = append(best, r.Complete[r.Best].Score)
			t.Logf("%s, seed %d: best score %.4f", bound.name, seed, best[len(best)-1])
		}
		sorted := append([]float64(nil), best...)
		sort.Float64s(sorted)
		cells := make([]string, len(best))
		for i, v := range best {
			cells[i] = fmt.Sprintf("%.4f", v)
		}
		fmt.Fprintf(&b, "| %s | %.4f | %.4f-%.4f | %s |\n", bound.name, sorted[seeds/2], sorted[0], sorted[seeds-1], strings.Join(cells, ", "))
	}
	t.Logf("slo-cascade, %d trials, 2 workers, simulation seeds 42-44; best score, lower is better\n%s", trials, b.String())
}
