package production

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"

	"optimize/simcore"
	"optimize/simcore/keys"
	"optimize/simcore/latency"
	"optimize/simcore/route"
	"optimize/strategies/settings"
)

// vLLM's own argument forms import as vLLM reads them: the one-dash
// alias -tp, --arg=value, and human-readable integers on the arguments
// vLLM reads so (k, m: ×1000, ×10⁶ with a fraction allowed; K: ×1024,
// whole numbers only). Export writes one --arg=value token a line.
func TestVLLMArgumentForms(t *testing.T) {
	c, err := settings.Standard()
	if err != nil {
		t.Fatal(err)
	}
	args := "-tp 1\n--max-model-len 8k\n--max-num-batched-tokens=2K\n--model qwen/qwen3-14b\n"
	if _, err := ApplyVLLMArgs("a.txt", []byte(args), &c); err != nil {
		t.Fatal(err)
	}
	if c.TP != 1 || c.MaxModelLen != 8000 || c.MaxScheduledTokens != 2048 {
		t.Errorf("read as TP %d, max_model_len %d, max_num_batched_tokens %d; want 1, 8000, 2048", c.TP, c.MaxModelLen, c.MaxScheduledTokens)
	}
	for in, want := range map[string]string{"8192": "8192", "1.5k": "1500", "2m": "2000000", "4K": "4096", "1G": "1073741824"} {
		if got, err := humanReadableInt(in); err != nil || got != want {
			t.Errorf("%s read as %s (%v), want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"1.5K", "-2k", "k", "1e3k"} {
		if _, err := humanReadableInt(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	for _, a := range VLLMArgs(&c) {
		if strings.Contains(a, " ") {
			t.Errorf("exported argument %q is two tokens", a)
		}
	}
}

// Class priorities become distinct integers in their order: 9.949 and
// 9.73 both round to 10, and critical must still be served before
// standard in llm-d (11 and 10); equal priorities stay equal.
func TestClassPrioritiesStayDistinct(t *testing.T) {
	got := distinctIntegers(map[simcore.SLOClass]float64{simcore.SLOCritical: 9.949, simcore.SLOStandard: 9.73, simcore.SLOSheddable: 1.2})
	if got[simcore.SLOCritical] != 11 || got[simcore.SLOStandard] != 10 || got[simcore.SLOSheddable] != 1 {
		t.Errorf("priorities %v, want critical 11, standard 10, sheddable 1", got)
	}
	got = distinctIntegers(map[simcore.SLOClass]float64{simcore.SLOCritical: 3, simcore.SLOStandard: 3, simcore.SLOSheddable: -2.6})
	if got[simcore.SLOCritical] != 3 || got[simcore.SLOStandard] != 3 || got[simcore.SLOSheddable] != -3 {
		t.Errorf("priorities %v, want 3, 3, -3", got)
	}
}

// An export with token-load-scorer writes the inflight-load-producer it
// consumes (llm-d's loader refuses the config without it), outside the
// scheduling profile, and reads back.
func TestTokenLoadExportCarriesItsProducer(t *testing.T) {
	c, err := settings.Standard()
	if err != nil {
		t.Fatal(err)
	}
	for key, v := range map[string]string{"routing.policy": "weighted"} {
		s, _ := settings.Lookup(key)
		if err := s.Set(&c, v); err != nil {
			t.Fatal(err)
		}
	}
	c.Routing.Scorers = []route.ScorerWeight{{Name: "token-load", Weight: 2}, {Name: "queue-depth", Weight: 1}}
	if err := settings.CheckConfig(&c); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteEPPConfig(&b, &c, nil); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	plugins, profile, _ := strings.Cut(text, "schedulingProfiles:")
	if !strings.Contains(plugins, "- type: inflight-load-producer") || strings.Contains(profile, "inflight-load-producer") {
		t.Errorf("the producer is not a plugin beside the profile:\n%s", text)
	}
	d, _ := settings.Standard()
	if _, err := ApplyEPPConfig("epp-config.yaml", b.Bytes(), &d); err != nil {
		t.Errorf("read back: %v", err)
	}
}

// KV blocks vLLM cannot hold are never exported: the seeds' world's
// 132,139 blocks (its blackbox profile, a calibration figure) need about
// twice an H100's memory at TP2, so no --num-gpu-blocks-override is
// written and MAPPING.md says what vLLM would allocate; a count that fits
// (Qwen3-14B's measured 18,038 on one H100) is written as it is.
func TestKVBlocksThatCannotFitAreNotExported(t *testing.T) {
	c, err := settings.Standard()
	if err != nil {
		t.Fatal(err)
	}
	blocks, _ := settings.Lookup("kv.total_blocks")
	cr := Carry(blocks, &c)
	if cr.Value != "132139" || cr.Production != "" || cr.Fidelity != settings.WorldFact || !strings.Contains(cr.Note, "vLLM allocates about") {
		t.Errorf("the seeds' world: %+v", cr)
	}
	for _, a := range VLLMArgs(&c) {
		if strings.HasPrefix(a, "--num-gpu-blocks-override") {
			t.Errorf("exported %s", a)
		}
	}
	for key, v := range map[string]string{"model": "qwen/qwen3-14b", "tp": "1", "kv.total_blocks": "18038"} {
		s, _ := settings.Lookup(key)
		if err := s.Set(&c, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := settings.CheckConfig(&c); err != nil {
		t.Fatal(err)
	}
	if cr := Carry(blocks, &c); cr.Production != "18038" || cr.Fidelity != settings.Exact {
		t.Errorf("a count that fits: %+v", cr)
	}
}

// vLLM is given the model's Hugging Face id, with its capitals, as the
// Hub spells it (from the model file's source); importing it finds the
// catalog's model whatever the case.
func TestModelExportsItsHuggingFaceID(t *testing.T) {
	c, err := settings.Standard()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(VLLMArgs(&c), "--model=meta-llama/Llama-3.1-8B-Instruct") {
		t.Errorf("exported %v", VLLMArgs(&c))
	}
	d, _ := settings.Standard()
	if _, err := ApplyVLLMArgs("a.txt", []byte("--model Qwen/Qwen3-14B\n--tensor-parallel-size=1\n"), &d); err != nil || d.Model != "qwen/qwen3-14b" {
		t.Errorf("imported %s (%v)", d.Model, err)
	}
}

// No export gives vLLM more KV blocks than the GPU can hold: over every
// shipped model × GPU × TP that fits, with the block count either rule
// gives (vLLM's, and BLIS's, which is TP times too large at TP > 1), a
// written --num-gpu-blocks-override=N has N blocks' KV bytes per GPU —
// N × block_size × KV bytes per token per GPU, KV heads split over TP —
// within the GPU's memory, and at most 5 % above vLLM's own count.
func TestNoExportedBlockCountExceedsTheGPU(t *testing.T) {
	model, _ := settings.Lookup("model")
	gpu, _ := settings.Lookup("gpu")
	tp, _ := settings.Lookup(keys.TP)
	latencyModel, _ := settings.Lookup(settings.LatencyModelKey)
	blocks, _ := settings.Lookup(keys.KVTotalBlocks)
	written, worlds := 0, 0
	for _, m := range model.Choices {
		for _, g := range gpu.Choices {
			for _, n := range []string{"1", "2", "4", "8"} {
				c, err := settings.Standard()
				if err != nil {
					t.Fatal(err)
				}
				if latencyModel.Set(&c, latency.KindTrainedPhysics) != nil || model.Set(&c, m) != nil || gpu.Set(&c, g) != nil || tp.Set(&c, n) != nil {
					continue
				}
				r, err := c.World.Resolve()
				if err != nil {
					continue // does not fit, or no such world
				}
				a, h := r.Spec.Arch, r.Spec.Hardware
				vllmN, err1 := latency.KVBlocks(a, h, c.TP, c.BlockSize, c.GPUMemoryUtilization, latency.KVRuleVLLM)
				blisN, err2 := latency.KVBlocks(a, h, c.TP, c.BlockSize, c.GPUMemoryUtilization, latency.KVRuleBLIS)
				perToken, err3 := latency.KVBytesPerToken(a, c.TP)
				if err1 != nil || err2 != nil || err3 != nil {
					continue
				}
				worlds++
				for _, count := range []int64{vllmN, blisN} {
					if err := blocks.Set(&c, strconv.FormatInt(count, 10)); err != nil {
						t.Fatal(err)
					}
					for _, arg := range VLLMArgs(&c) {
						v, ok := strings.CutPrefix(arg, "--num-gpu-blocks-override=")
						if !ok {
							continue
						}
						written++
						got, _ := strconv.ParseFloat(v, 64)
						bytes := got * float64(c.BlockSize) * perToken
						if bytes > h.MemoryGiB*(1<<30) || got > 1.05*float64(vllmN) {
							t.Errorf("%s on %s at TP%s: exported %s blocks (%.1f GiB of KV per GPU on a %g GiB GPU; vLLM allocates %d)",
								m, g, n, v, bytes/(1<<30), h.MemoryGiB, vllmN)
						}
					}
				}
			}
		}
	}
	if worlds < 40 || written < worlds {
		t.Errorf("%d worlds, %d block counts written: want every shipped model × GPU × TP that fits (at least 40), vLLM's count written in each", worlds, written)
	}
}
