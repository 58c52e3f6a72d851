package strategies_test

import (
	"slices"
	"testing"

	"optimize/internal/testkit"
	"optimize/search"
	"optimize/simcore/cluster"
	"optimize/strategies"
)

// seedsWorld is the world every shipped template runs in by default.
func seedsWorld(instances int, blocks int64) cluster.World {
	return cluster.World{Model: strategies.DefaultModel, GPU: strategies.DefaultGPU, TP: strategies.DefaultTP,
		LatencyModel: "blackbox", Instances: instances, KVBlocks: blocks}
}

// Every shipped template runs in the seeds' world and tunes none of it;
// a template's mechanism and its workload's regime move the cluster's
// shape (pressure-baseline: 4 instances of 2,000 blocks; fewer-instances
// halves them).
func TestShippedTemplatesRunInTheSeedsWorld(t *testing.T) {
	reg, err := strategies.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, tpl := range reg.Templates() {
		w, err := tpl.World()
		if err != nil {
			t.Fatalf("%s: %v", tpl.Name, err)
		}
		if w.Model != strategies.DefaultModel || w.GPU != "H100" || w.TP != 2 || w.LatencyModel != "blackbox" || w.KVBlocks < 1000 {
			t.Errorf("%s: world %v, want the seeds' (llama-3.1-8b on H100, TP2, blackbox)", tpl.Name, w)
		}
		if tuned := tpl.TunedWorld(); len(tuned) > 0 {
			t.Errorf("%s tunes %v, want none", tpl.Name, tuned)
		}
	}
	pb, _ := reg.Get("pressure-baseline")
	if w, _ := pb.World(); w != seedsWorld(4, 2000) {
		t.Errorf("pressure-baseline: %+v, want 4 instances of 2000 blocks", w)
	}
	if w, err := pb.WorldOf(pb.Defaults(), "orthogonal-slo@fewer-instances"); err != nil || w.Instances != 2 {
		t.Errorf("pressure-baseline under fewer-instances: %+v (%v), want 2 instances", w, err)
	}
	sc, _ := reg.Get("slo-cascade")
	if w, _ := sc.World(); w != seedsWorld(8, 132139) {
		t.Errorf("slo-cascade: %+v, want 8 instances of the profile's 132139 blocks", w)
	}
}

// A template that tunes the GPU and the instances says so, and each
// parameter vector has its own world: KV blocks derived from the chosen
// GPU's memory, more on H100 (80 GB) than on L40S (48 GB). Before studies
// recorded their world, the template's would have been the seeds'.
func TestATemplateTuningTheWorld(t *testing.T) {
	reg, err := strategies.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	testkit.AddWorldTemplate(t, reg)
	tpl, err := reg.Get(testkit.WorldTemplateName)
	if err != nil {
		t.Fatal(err)
	}
	if got := tpl.TunedWorld(); !slices.Equal(got, []string{"gpu", "num_instances"}) {
		t.Fatalf("tunes %v, want gpu and num_instances", got)
	}
	if keys := strategies.WorldKeys(); !slices.Equal(keys, []string{"gpu", "gpu_memory_utilization", "kv.total_blocks", "latency.model", "model", "num_instances", "tp"}) {
		t.Fatalf("world keys %v", keys)
	}
	def, err := tpl.World()
	if err != nil {
		t.Fatal(err)
	}
	if def.Model != "qwen/qwen3-14b" || def.GPU != "H100" || def.Instances != 4 || def.LatencyModel != "trained-physics" {
		t.Fatalf("defaults' world %+v", def)
	}
	l40s, err := tpl.WorldOf([]search.Value{{Choice: "L40S"}, {Number: 6}}, tpl.Workload)
	if err != nil {
		t.Fatal(err)
	}
	if l40s.GPU != "L40S" || l40s.Instances != 6 || l40s.KVBlocks < 1000 || l40s.KVBlocks*3/2 > def.KVBlocks {
		t.Fatalf("L40S ×6: %+v; want fewer than two thirds of H100's %d blocks", l40s, def.KVBlocks)
	}
	if old, err := tpl.SeedsWorld(tpl.Workload); err != nil || old != seedsWorld(4, 132139) {
		t.Fatalf("the seeds' world of the template: %+v (%v)", old, err)
	}
}
