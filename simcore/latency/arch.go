package latency

import (
	"fmt"
	"math"
)

// Arch is a model's architecture: the numbers of its Hugging Face
// config.json that the trained-physics and roofline formulas and the KV
// capacity read. Names follow config.json's keys.
type Arch struct {
	Layers              int     // num_hidden_layers
	Hidden              int     // hidden_size
	Heads               int     // num_attention_heads
	KVHeads             int     // num_key_value_heads; 0 = Heads (multi-head attention)
	Intermediate        int     // intermediate_size: the FFN width
	Vocab               int     // vocab_size
	BytesPerParam       float64 // width of the compute dtype (torch_dtype): activations, KV, all-reduce
	WeightBytesPerParam float64 // width of stored weights when quantised (FP8 = 1, W4A16 = 0.5); 0 = BytesPerParam
	Experts             int     // num_local_experts; a mixture of experts when ≥ 2
	ExpertsPerToken     int     // num_experts_per_tok
	ExpertFFN           int     // moe_intermediate_size: one routed expert's FFN width; 0 = Intermediate
	SharedExpertFFN     int     // shared_expert_intermediate_size; 0 = no shared expert
	InterleaveStep      int     // interleave_moe_layer_step: every (step+1)-th layer is MoE; 0 = every layer
	DenseFFN            int     // intermediate_size_mlp: dense layers' FFN width in interleaved models; 0 = Intermediate
	HiddenAct           string  // hidden_act
	HeadDim             int     // head_dim when declared; capacity only (step time uses Hidden/Heads)
	KVLoraRank          int     // kv_lora_rank: multi-head latent attention's KV latent; capacity only
	QKRopeHeadDim       int     // qk_rope_head_dim: MLA's decoupled RoPE key width; capacity only
	FirstKDense         int     // first_k_dense_replace: leading dense layers of an MoE model; capacity only
	MaxPositions        int     // max_position_embeddings (after rope scaling)
	TiedEmbeddings      bool    // tie_word_embeddings: one embedding matrix, not two
}

// MoE reports whether the model mixes experts (two or more).
func (a Arch) MoE() bool { return a.Experts >= 2 }

// WeightBytes is the stored weights' width per parameter.
func (a Arch) WeightBytes() float64 {
	if a.WeightBytesPerParam > 0 {
		return a.WeightBytesPerParam
	}
	return a.BytesPerParam
}

// kvHeads is KVHeads, or Heads for multi-head attention.
func (a Arch) kvHeads() int {
	if a.KVHeads == 0 {
		return a.Heads
	}
	return a.KVHeads
}

// layerSplit is how many layers are MoE and how many dense: an interleaved
// model has Layers/(step+1) MoE layers, a uniform MoE model only MoE
// layers, a dense model only dense ones.
func (a Arch) layerSplit() (moe, dense int) {
	switch {
	case a.InterleaveStep > 0 && a.MoE():
		moe = a.Layers / (a.InterleaveStep + 1)
		return moe, a.Layers - moe
	case a.MoE():
		return a.Layers, 0
	}
	return 0, a.Layers
}

// ffnWidths are the FFN widths of MoE and dense layers.
func (a Arch) ffnWidths() (moe, dense int) {
	moe, dense = a.Intermediate, a.Intermediate
	if a.ExpertFFN > 0 {
		moe = a.ExpertFFN
	}
	if a.DenseFFN > 0 {
		dense = a.DenseFFN
	}
	return moe, dense
}

// Check reports the first architecture number the formulas cannot use,
// naming it by its config.json key.
func (a Arch) Check() error {
	positive := []struct {
		key string
		v   int
	}{{"num_hidden_layers", a.Layers}, {"hidden_size", a.Hidden}, {"num_attention_heads", a.Heads}, {"intermediate_size", a.Intermediate}}
	for _, p := range positive {
		if p.v <= 0 {
			return fmt.Errorf("%s must be > 0, got %d", p.key, p.v)
		}
	}
	switch {
	case !(a.BytesPerParam > 0) || math.IsInf(a.BytesPerParam, 0):
		return fmt.Errorf("bytes_per_param (the compute dtype's width) must be > 0, got %v", a.BytesPerParam)
	case a.WeightBytesPerParam < 0 || math.IsNaN(a.WeightBytesPerParam) || math.IsInf(a.WeightBytesPerParam, 0):
		return fmt.Errorf("weight_bytes_per_param must be ≥ 0 (0 = bytes_per_param), got %v", a.WeightBytesPerParam)
	case a.KVHeads < 0 || a.Experts < 0 || a.ExpertsPerToken < 0 || a.ExpertFFN < 0 || a.SharedExpertFFN < 0 || a.InterleaveStep < 0 || a.DenseFFN < 0:
		return fmt.Errorf("head, expert and FFN counts must be ≥ 0")
	case a.Experts > 1 && a.ExpertsPerToken <= 0:
		return fmt.Errorf("num_experts_per_tok must be > 0 for a model of %d experts", a.Experts)
	case a.Experts > 1 && a.ExpertsPerToken > a.Experts:
		return fmt.Errorf("num_experts_per_tok (%d) cannot exceed num_local_experts (%d)", a.ExpertsPerToken, a.Experts)
	}
	return nil
}

// CheckTP reports whether the model's heads split evenly over tp GPUs, as
// vLLM's tensor parallelism requires of attention and KV heads.
func (a Arch) CheckTP(tp int) error {
	switch {
	case tp < 1:
		return fmt.Errorf("tensor parallelism must be ≥ 1, got %d", tp)
	case a.Heads%tp != 0:
		return fmt.Errorf("num_attention_heads (%d) is not divisible by TP %d", a.Heads, tp)
	case a.kvHeads()%tp != 0:
		return fmt.Errorf("num_key_value_heads (%d) is not divisible by TP %d", a.kvHeads(), tp)
	}
	return nil
}

// checkWorld reports the first thing the physics models cannot use: an
// architecture number, heads that do not split over tp, a GPU figure.
func checkWorld(a Arch, h Hardware, tp int) error {
	if err := a.Check(); err != nil {
		return fmt.Errorf("model: %v", err)
	}
	if err := a.CheckTP(tp); err != nil {
		return fmt.Errorf("model: %v", err)
	}
	if err := h.Check(); err != nil {
		return fmt.Errorf("hardware %s: %v", h.Name, err)
	}
	return nil
}

// Hardware is one GPU's figures: dense peak FLOPS (BF16, and FP8 where the
// tensor cores have it), HBM bandwidth and capacity, and the model FLOPS
// utilisation a prefill and a decode reach (the roofline's MFU).
type Hardware struct {
	Name       string
	TFlopsPeak float64 // dense BF16/FP16 TFLOP/s
	TFlopsFP8  float64 // dense FP8 TFLOP/s; 0 = no FP8 tensor cores
	BwPeakTBs  float64 // HBM TB/s
	MfuPrefill float64
	MfuDecode  float64
	MemoryGiB  float64
}

// Check reports the first figure that is not a finite positive number.
func (h Hardware) Check() error {
	for _, f := range []struct {
		key string
		v   float64
	}{{"tflops_peak", h.TFlopsPeak}, {"bw_peak_tbs", h.BwPeakTBs}, {"mfu_prefill", h.MfuPrefill}, {"mfu_decode", h.MfuDecode}, {"memory_gib", h.MemoryGiB}} {
		if !(f.v > 0) || math.IsInf(f.v, 0) {
			return fmt.Errorf("%s must be a finite number > 0, got %v", f.key, f.v)
		}
	}
	if !(h.TFlopsFP8 >= 0) || math.IsInf(h.TFlopsFP8, 0) {
		return fmt.Errorf("tflops_fp8 must be a finite number ≥ 0 (0 = no FP8), got %v", h.TFlopsFP8)
	}
	return nil
}

// peakFlops is the GEMM rate the weights run at: FP8's for FP8 weights
// (exactly one byte) on a GPU with FP8 tensor cores, else BF16's (weights
// narrower than a byte are dequantised to BF16 for the GEMM).
func (h Hardware) peakFlops(a Arch) float64 {
	if a.WeightBytes() == 1.0 && h.TFlopsFP8 > 0 {
		return h.TFlopsFP8
	}
	return h.TFlopsPeak
}
