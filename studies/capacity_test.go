package studies_test

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"optimize/internal/testkit/studykit"
	"optimize/strategies"
	"optimize/strategies/settings"
	"optimize/studies/report"
)

// A short capacity study (the grid's first 18 clusters: 2 to 4 instances
// of each GPU at TP1 and TP2, one seed, 1,000 of steady-chat's requests)
// finds the cost/latency trade-off: a front of several GPUs on which cost
// rises as TTFT P99 falls, whose cheapest cluster is far below the
// over-provisioned baseline's cost while a cheaper one misses the SLO
// floor; and every trial's cost is its instances × TP × its GPU's price,
// exactly.
func TestCapacityStudyFindsTheCostLatencyTradeOff(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "data", "workloads", "steady-chat.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(t.TempDir(), "steady-chat-short.yaml")
	if err := os.WriteFile(short, []byte(strings.Replace(string(data), "num_requests: 4000", "num_requests: 1000", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	o := studykit.Study("capacity", "cap", 18)
	o.Sampler, o.Seeds, o.Workload = "grid", []int64{42}, short
	r := studykit.RunStudy(t, studykit.TempEnv(t, 2), o)
	if len(r.Complete) != 18 {
		t.Fatalf("%d complete trials, want 18", len(r.Complete))
	}

	cat, err := settings.WorldData()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Complete {
		p := r.ParamMap(c.Params)
		gpu, _ := cat.GPU(p["gpu"].(string))
		n, tp := p["instances"].(float64), p["tp"].(float64)
		s := c.Summary()
		if s.GPUCount == nil || *s.GPUCount != n*tp || s.CostPerHour == nil || *s.CostPerHour != n*tp*gpu.PricePerHr {
			t.Errorf("trial %d (%v): gpu_count %v, cost_per_hour %v; want %v and %v × %v exactly", c.Number, p, s.GPUCount, s.CostPerHour, n*tp, n*tp, gpu.PricePerHr)
		}
		perMtok, err := strategies.Metric(&s, strategies.CostPerMillionTokens)
		if want := *s.CostPerHour / (s.TokensPerSec * 3600) * 1e6; err != nil || perMtok != want {
			t.Errorf("trial %d: cost_per_million_tokens %v (%v), want %v", c.Number, perMtok, err, want)
		}
	}

	front := slices.Clone(r.Pareto)
	cost := func(i int) float64 { return r.Complete[i].Objectives[0] }
	ttft := func(i int) float64 { return r.Complete[i].Objectives[1] }
	slices.SortFunc(front, func(a, b int) int { return cmp.Compare(cost(a), cost(b)) })
	gpus := map[any]bool{}
	var lines []string
	for k, i := range front {
		p := r.ParamMap(r.Complete[i].Params)
		gpus[p["gpu"]] = true
		lines = append(lines, fmt.Sprintf("%v %.2f USD/h %.1f ms", p, cost(i), ttft(i)))
		if k > 0 && !(cost(i) > cost(front[k-1]) && ttft(i) < ttft(front[k-1])) {
			t.Errorf("along the front cost must rise as TTFT P99 falls: %s after %s", lines[k], lines[k-1])
		}
	}
	t.Logf("front:\n%s", strings.Join(lines, "\n"))
	if len(front) < 3 || len(gpus) < 2 {
		t.Errorf("front of %d trials on %d GPUs, want at least 3 trials on 2 GPUs", len(front), len(gpus))
	}
	base := *r.Baseline.CostPerHour
	if cheapest := cost(front[0]); cheapest > 0.5*base {
		t.Errorf("cheapest cluster meeting the SLO costs %.2f USD/h, want under half the baseline's %.2f", cheapest, base)
	}
	cheaperMisses := slices.ContainsFunc(r.Complete, func(c report.Result) bool {
		return c.Objectives[0] < cost(front[0]) && r.MissedConstraint(&c) != ""
	})
	if !cheaperMisses {
		t.Error("no cluster cheaper than the front's cheapest misses the SLO floor: the constraint does not bind")
	}
}
