package production

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"optimize/simcore"
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
