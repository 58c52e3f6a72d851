package strategies_test

import (
	"flag"
	"os"
	"slices"
	"strings"
	"testing"

	"optimize/internal/testkit"
	"optimize/search"
	"optimize/simcore/cluster"
	"optimize/simcore/latency"
	"optimize/strategies"
	"optimize/strategies/settings"
)

// seedsWorld is the world every shipped template runs in by default.
func seedsWorld(instances int, blocks int64) cluster.World {
	return cluster.World{Model: settings.DefaultModel, GPU: settings.DefaultGPU, TP: settings.DefaultTP,
		LatencyModel: "blackbox", Instances: instances, KVBlocks: blocks}
}

// Every shipped strategy template runs in the seeds' world and tunes none
// of it — but capacity, which searches the cluster itself in the
// trained-physics world, and pd-split, which splits 8 H100s there; a template's mechanism and its workload's regime
// move the cluster's shape (pressure-baseline: 4 instances of 2,000
// blocks; fewer-instances halves them).
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
		if tpl.Name == "capacity" || tpl.Base == "capacity" || tpl.Base == "capacity-joint" {
			if tuned := slices.Sorted(slices.Values(tpl.TunedWorld())); w.LatencyModel != "trained-physics" || !slices.Equal(tuned, []string{"gpu", "num_instances", "tp"}) {
				t.Errorf("%s: world %v tuning %v, want trained-physics tuning num_instances, gpu, tp", tpl.Name, w, tpl.TunedWorld())
			}
			continue
		}
		if tpl.Name == "pd-split" {
			// P/D in the world BLIS models it in: trained-physics, on
			// 8 H100s at TP1 (the pools' TPs are no world setting).
			if w.LatencyModel != "trained-physics" || w.GPU != "H100" || w.TP != 1 || w.Instances != 8 || len(tpl.TunedWorld()) > 0 {
				t.Errorf("%s: world %v tuning %v, want trained-physics on 8 H100 at TP1, tuning none", tpl.Name, w, tpl.TunedWorld())
			}
			continue
		}
		if w.Model != settings.DefaultModel || w.GPU != "H100" || w.TP != 2 || w.LatencyModel != "blackbox" || w.KVBlocks < 1000 {
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
	if keys := settings.WorldKeys(); !slices.Equal(keys, []string{"era", "gpu", "gpu_memory_utilization", "kv.capacity_rule", "kv.total_blocks", "latency.model", "max_model_len", "model", "num_instances", "tp"}) {
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

var update = flag.Bool("update", false, "rewrite the README's lists of models and GPUs from the world data")

// The lists in the README's "Models and hardware" section are the ones
// WorldMarkdown generates from the world data, and the section's prose
// names every latency model and every model and GPU file flag.
func TestREADMEModelsAndHardware(t *testing.T) {
	const path = "../docs/models-and-hardware.md"
	const section, begin, end = "## Models and hardware\n", "<!-- begin: settings.WorldMarkdown", "<!-- end: settings.WorldMarkdown -->"
	readme, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	want, err := settings.WorldMarkdown()
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Index(text, section)
	if s < 0 {
		t.Fatalf("README has no %q", section)
	}
	body := text[s:]
	if next := strings.Index(body[len(section):], "\n## "); next >= 0 {
		body = body[:len(section)+next]
	}
	for _, word := range append(latency.Kinds(), "--model-config", "--hardware-config", "--gpu-memory-utilization", "--total-kv-blocks") {
		if !strings.Contains(body, word) {
			t.Errorf("the section does not mention %s", word)
		}
	}
	b, e := strings.Index(text, begin), strings.Index(text, end)
	if b < s || e < b {
		t.Fatalf("the section has no %s … %s markers", begin, end)
	}
	open := b + strings.Index(text[b:], "-->\n") + len("-->\n")
	if text[open:e] == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(text[:open]+want+text[e:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README's lists of models and GPUs differ from settings.WorldMarkdown (go test ./strategies -run TestREADMEModelsAndHardware -update rewrites them)")
}
