package cluster

import (
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"optimize/simcore"
	"optimize/simcore/sched"
	"optimize/simcore/workload"
)

var updateOrderGolden = flag.Bool("update-order-golden", false, "rewrite testdata/order_golden.txt from the current code")

// orderCase is one scheduler × priority-policy configuration of the
// differential test.
type orderCase struct {
	scheduler, policy string
	bridge            bool
	preemption        string
	tweak             string // "", "no-age" (age weight 0) or "load-4" (slo-adaptive threshold 4)
}

func (c orderCase) name() string {
	return fmt.Sprintf("%s/%s/bridge=%v/preempt=%s/%s", c.scheduler, c.policy, c.bridge, c.preemption, c.tweak)
}

func orderCases() []orderCase {
	var cases []orderCase
	for _, s := range sched.SchedulerNames() {
		for _, p := range sched.PolicyNames() {
			for _, bridge := range []bool{false, true} {
				for _, pre := range []string{"fcfs", "priority"} {
					cases = append(cases, orderCase{s, p, bridge, pre, ""})
				}
			}
		}
		cases = append(cases, orderCase{s, sched.SLOTiered, false, "priority", "no-age"},
			orderCase{s, sched.SLOAdaptive, true, "priority", "load-4"})
	}
	return cases
}

// TestOrderGolden runs every scheduler × priority policy (router hints on
// and off, both preemption victims) through a long overload with KV
// pressure on two instances and compares a digest of the whole summary
// with the one recorded from the sort-every-step implementation: the
// queue's data structure may change, the order it serves may not.
func TestOrderGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("long overload runs")
	}
	spec, err := builtinWorkloads.Spec("orthogonal-slo")
	if err != nil {
		t.Fatal(err)
	}
	var ttft simcore.PerClass
	for c, v := range map[simcore.SLOClass]float64{1: 200, 2: 1000, 3: 5000} {
		ttft.V[c], ttft.Set[c] = v, true
	}
	var got []string
	for _, c := range orderCases() {
		cfg := testConfig(2, 3000)
		cfg.Scheduler = c.scheduler
		cfg.Priority = sched.PolicyConfig{Name: c.policy}
		cfg.PriorityBridge = c.bridge && cfg.Priority.UsesClassBase()
		cfg.PreemptionPolicy = c.preemption
		cfg.SLOTTFT = ttft
		switch c.tweak {
		case "no-age":
			cfg.Priority.AgeWeightGiven = true
		case "load-4":
			cfg.Priority.LoadThreshold = 4
		}
		src, err := workload.NewGenerator(spec, workload.Options{Seed: 42, BlockSize: 16, NumRequests: 3000})
		if err != nil {
			t.Fatal(err)
		}
		eng, err := New(cfg, src)
		if err != nil {
			t.Fatalf("%s: %v", c.name(), err)
		}
		s := eng.Run()
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %x", c.name(), sha256.Sum256(b)))
	}
	const file = "testdata/order_golden.txt"
	if *updateOrderGolden {
		if err := os.WriteFile(file, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	wantLines := strings.Split(strings.TrimSpace(string(want)), "\n")
	if len(wantLines) != len(got) {
		t.Fatalf("%d cases, golden has %d", len(got), len(wantLines))
	}
	for i := range got {
		if got[i] != wantLines[i] {
			t.Errorf("summary changed:\n got %s\nwant %s", got[i], wantLines[i])
		}
	}
}
