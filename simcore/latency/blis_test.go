package latency

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
)

// The reference table testdata/blis_f90a1e3a.json was computed by BLIS
// itself, commit f90a1e3a of github.com/inference-sim/inference-sim,
// through the code path `blis run --latency-model trained-physics|roofline
// --model M --hardware G --tp N` takes (its resolveLatencyConfig). It
// holds each model's architecture as BLIS parses its config.json, the KV
// blocks of every model × GPU × TP, and step times of 20 batches for both
// physics models on every model × GPU × TP BLIS accepts; which BLIS
// function computed each section is in testdata/README.md.
type blisRef struct {
	Hardware []struct {
		Name  string `json:"name"`
		Calib struct {
			TFlopsPeak, TFlopsFP8, BwPeakTBs, MfuPrefill, MfuDecode, MemoryGiB float64
		} `json:"calib"`
	} `json:"hardware"`
	Models []struct {
		Name        string `json:"name"`
		ModelConfig struct {
			NumLayers, HiddenDim, NumHeads, NumKVHeads, VocabSize  int
			BytesPerParam                                          float64
			IntermediateDim, NumLocalExperts, NumExpertsPerTok     int
			MoEExpertFFNDim, SharedExpertFFNDim                    int
			InterleaveMoELayerStep, DenseIntermediateDim           int
			HiddenAct                                              string
			WeightBytesPerParam                                    float64
			HeadDim, KVLoraRank, QKRopeHeadDim, FirstKDenseReplace int
		} `json:"model_config"`
		KVParams struct{ TieWordEmbeddings bool } `json:"kv_capacity_params"`
		MaxLen   int                              `json:"rope_scaled_max_model_len"`
	} `json:"models"`
	Coefficients []struct {
		Backend string    `json:"backend"`
		Alpha   []float64 `json:"alpha"`
		Beta    []float64 `json:"beta"`
	} `json:"coefficients"`
	RooflineProbe struct {
		Alpha    []float64 `json:"alpha"`
		Inputs   []int64   `json:"input_lens"`
		Queueing []int64   `json:"queueing_time_us"`
		Output   int64     `json:"output_token_processing_time_us"`
	} `json:"roofline_alpha_probe"`
	KVBlocks []struct {
		Model  string `json:"model"`
		GPU    string `json:"gpu"`
		TP     int    `json:"tp"`
		Blocks int64  `json:"blocks"`
		Error  string `json:"error"`
	} `json:"kv_blocks"`
	Batches []struct {
		Name     string `json:"name"`
		Requests []struct {
			Input    int64 `json:"input_len"`
			Progress int64 `json:"progress_index"`
			New      int64 `json:"num_new_tokens"`
			Output   int64 `json:"output_len"`
		} `json:"requests"`
	} `json:"batches"`
	Steps []struct {
		Backend    string  `json:"backend"`
		Model      string  `json:"model"`
		GPU        string  `json:"gpu"`
		TP         int     `json:"tp"`
		StepTimes  []int64 `json:"step_time_us"`
		Queueing   []int64 `json:"queueing_time_us"`
		OutputTime int64   `json:"output_token_processing_time_us"`
		PostDecode int64   `json:"post_decode_fixed_overhead_us"`
		Error      string  `json:"error"`
	} `json:"steps"`
}

func loadBLISRef(t *testing.T) (*blisRef, map[string]Arch, map[string]Hardware) {
	t.Helper()
	data, err := os.ReadFile("testdata/blis_f90a1e3a.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref blisRef
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	archs := map[string]Arch{}
	for _, m := range ref.Models {
		c := m.ModelConfig
		archs[m.Name] = Arch{Layers: c.NumLayers, Hidden: c.HiddenDim, Heads: c.NumHeads, KVHeads: c.NumKVHeads, Vocab: c.VocabSize,
			BytesPerParam: c.BytesPerParam, Intermediate: c.IntermediateDim, Experts: c.NumLocalExperts, ExpertsPerToken: c.NumExpertsPerTok,
			ExpertFFN: c.MoEExpertFFNDim, SharedExpertFFN: c.SharedExpertFFNDim, InterleaveStep: c.InterleaveMoELayerStep,
			DenseFFN: c.DenseIntermediateDim, HiddenAct: c.HiddenAct, WeightBytesPerParam: c.WeightBytesPerParam, HeadDim: c.HeadDim,
			KVLoraRank: c.KVLoraRank, QKRopeHeadDim: c.QKRopeHeadDim, FirstKDense: c.FirstKDenseReplace,
			TiedEmbeddings: m.KVParams.TieWordEmbeddings, MaxPositions: m.MaxLen}
	}
	gpus := map[string]Hardware{}
	for _, h := range ref.Hardware {
		c := h.Calib
		gpus[h.Name] = Hardware{Name: h.Name, TFlopsPeak: c.TFlopsPeak, TFlopsFP8: c.TFlopsFP8, BwPeakTBs: c.BwPeakTBs,
			MfuPrefill: c.MfuPrefill, MfuDecode: c.MfuDecode, MemoryGiB: c.MemoryGiB}
	}
	return &ref, archs, gpus
}

// refStep turns a reference batch into a Step as BLIS's StepTime reads
// it: a request before the end of its prompt is a prefill chunk; after
// it, a decode if it has output at all; every request counts in the batch.
func refStep(reqs []struct {
	Input    int64 `json:"input_len"`
	Progress int64 `json:"progress_index"`
	New      int64 `json:"num_new_tokens"`
	Output   int64 `json:"output_len"`
}) *Step {
	s := &Step{Requests: len(reqs)}
	for _, r := range reqs {
		switch {
		case r.Progress < r.Input:
			s.Prefills = append(s.Prefills, Chunk{Done: r.Progress, New: r.New, Input: r.Input})
			s.PrefillTokens += r.New
		case r.Output > 0:
			s.Decodes++
			s.DecodeContext += r.Progress
		}
	}
	return s
}

// TestStepTimesMatchBLIS: every step time of the reference table (both
// physics models, 13 models × 3 GPUs × every TP BLIS accepts, 20 batches
// of prefill chunks, decodes and both mixed) matches BLIS to 1e-9
// relative, and so do the α terms.
func TestStepTimesMatchBLIS(t *testing.T) {
	ref, archs, gpus := loadBLISRef(t)
	var physics Physics
	for _, c := range ref.Coefficients {
		if c.Backend == KindTrainedPhysics {
			copy(physics.Alpha[:], c.Alpha)
			copy(physics.Beta[:], c.Beta)
		}
	}
	checked, models := 0, map[string]bool{}
	for _, st := range ref.Steps {
		if st.Error != "" {
			continue // a world BLIS refuses (the KV test checks the refusal)
		}
		a, h := archs[st.Model], gpus[st.GPU]
		var m Model
		var err error
		if st.Backend == KindTrainedPhysics {
			m, err = NewTrainedPhysics(physics, a, h, st.TP)
		} else {
			m, err = NewRoofline([3]float64{}, a, h, st.TP)
		}
		if err != nil {
			if a.CheckTP(st.TP) != nil && st.Backend == KindRoofline {
				continue // BLIS's roofline runs heads that do not split over TP; we refuse them, as its trained-physics does
			}
			t.Fatalf("%s %s %s TP%d: %v", st.Backend, st.Model, st.GPU, st.TP, err)
		}
		for i, b := range ref.Batches {
			got, want := m.StepTime(refStep(b.Requests)), st.StepTimes[i]
			if math.Abs(float64(got-want)) > 1e-9*float64(want) {
				t.Errorf("%s %s %s TP%d %s: step %d µs, BLIS %d", st.Backend, st.Model, st.GPU, st.TP, b.Name, got, want)
			}
			checked++
		}
		for i, in := range []int64{1, 512, 4096} {
			if got := m.QueueingTime(in); got != st.Queueing[i] {
				t.Errorf("%s %s: queueing(%d) %d, BLIS %d", st.Backend, st.Model, in, got, st.Queueing[i])
			}
		}
		if m.OutputTokenTime() != st.OutputTime || m.PostDecodeTime() != st.PostDecode {
			t.Errorf("%s %s: output %d post %d, BLIS %d %d", st.Backend, st.Model, m.OutputTokenTime(), m.PostDecodeTime(), st.OutputTime, st.PostDecode)
		}
		models[st.Model] = true
	}
	if checked < 5*3*20 || len(models) < 5 {
		t.Fatalf("checked %d step times over %d models; the table should cover ≥ 5 models × 3 GPUs", checked, len(models))
	}
	probe := ref.RooflineProbe
	m, err := NewRoofline([3]float64(probe.Alpha), archs["qwen/qwen3-14b"], gpus["H100"], 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, in := range probe.Inputs {
		if got := m.QueueingTime(in); got != probe.Queueing[i] {
			t.Errorf("roofline queueing(%d) = %d, BLIS %d (α0 + α1·input)", in, got, probe.Queueing[i])
		}
	}
	t.Logf("%d step times of %d models match BLIS f90a1e3a", checked, len(models))
}

// TestKVBlocksMatchBLIS: by BLIS's rule, the KV capacity of every model × GPU × TP is
// BLIS's integer, and where BLIS refuses (the model does not fit) so do
// we, saying how many GPUs it needs.
func TestKVBlocksMatchBLIS(t *testing.T) {
	ref, archs, gpus := loadBLISRef(t)
	for _, k := range ref.KVBlocks {
		got, err := KVBlocks(archs[k.Model], gpus[k.GPU], k.TP, 16, 0.9, KVRuleBLIS)
		switch {
		case k.Error != "" && err == nil:
			t.Errorf("%s %s TP%d: %d blocks, BLIS refuses: %s", k.Model, k.GPU, k.TP, got, k.Error)
		case k.Error != "" && strings.Contains(k.Error, "Minimum GPUs") && !strings.Contains(err.Error(), "GPUs per instance"):
			t.Errorf("%s %s TP%d: %v, want the GPUs it needs", k.Model, k.GPU, k.TP, err)
		case k.Error == "" && (err != nil || got != k.Blocks):
			t.Errorf("%s %s TP%d: %d blocks (%v), BLIS %d", k.Model, k.GPU, k.TP, got, err, k.Blocks)
		}
	}
}

// TestShippedModelsAreBLISs: the architecture shipped for each of the 13
// models is the one BLIS parses from its config.json.
func TestShippedModelsAreBLISs(t *testing.T) {
	ref, archs, _ := loadBLISRef(t)
	c, err := ReadCatalog(os.DirFS("../../data"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ref.Models {
		got, err := c.Model(m.Name)
		if err != nil {
			t.Errorf("%s not shipped: %v", m.Name, err)
			continue
		}
		if got.Arch != archs[m.Name] {
			t.Errorf("%s: shipped %+v, BLIS %+v", m.Name, got.Arch, archs[m.Name])
		}
	}
}

// TestParseHFConfig: a config.json gives BLIS's architecture — Llama
// 3.1 8B's as published; a multimodal model's text_config overrides the
// top level; FP8 quantisation makes weights one byte; an unknown dtype is
// an error naming the key.
func TestParseHFConfig(t *testing.T) {
	_, archs, _ := loadBLISRef(t)
	llama := `{"architectures": ["LlamaForCausalLM"], "hidden_act": "silu", "hidden_size": 4096, "intermediate_size": 14336,
	  "max_position_embeddings": 131072, "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
	  "rope_scaling": {"factor": 8.0, "rope_type": "llama3"}, "tie_word_embeddings": false, "torch_dtype": "bfloat16", "vocab_size": 128256}`
	a, err := ParseHFConfig([]byte(llama))
	if err != nil || a != archs["meta-llama/llama-3.1-8b-instruct"] {
		t.Fatalf("llama-3.1-8b: %+v, %v; BLIS %+v", a, err, archs["meta-llama/llama-3.1-8b-instruct"])
	}
	mm := `{"torch_dtype": "bfloat16", "quantization_config": {"quant_method": "fp8"}, "text_config": {"hidden_size": 1024, "num_hidden_layers": 4,
	  "num_attention_heads": 8, "intermediate_size": 4096, "vocab_size": 100, "num_local_experts": 16, "num_experts_per_tok": 1, "hidden_size_extra": 1}}`
	a, err = ParseHFConfig([]byte(mm))
	if err != nil || a.Hidden != 1024 || a.Layers != 4 || a.KVHeads != 8 || a.Experts != 16 || a.WeightBytes() != 1 || !a.MoE() {
		t.Fatalf("multimodal FP8 MoE: %+v, %v", a, err)
	}
	if _, err := ParseHFConfig([]byte(`{"torch_dtype": "float8_e4m3", "hidden_size": 8}`)); err == nil || !strings.Contains(err.Error(), "torch_dtype") || !strings.Contains(err.Error(), "bfloat16") {
		t.Fatalf("unknown dtype: %v", err)
	}
	if _, err := ParseModelFile("my.json", "", []byte(`{"torch_dtype": "bfloat16", "hidden_size": 8}`)); err == nil || !strings.Contains(err.Error(), "my.json: num_hidden_layers") {
		t.Fatalf("missing layers: %v", err)
	}
}
