package latency

import (
	"fmt"
	"math"
	"strings"

	"optimize/simcore/errtext"
	"optimize/simcore/keys"
)

// KV capacity as BLIS f90a1e3a estimates it (KVRuleBLIS): of the
// instance's memory, MemoryGiB × gpu_memory_utilization × TP, subtract
// the weights, the activation peak of a profiling forward pass (5.5 GiB
// dense, 8 GiB MoE) and the non-torch memory (CUDA context, NCCL: 0.15 GiB
// on one GPU, 0.6 GiB per GPU with TP); what is left, in whole bytes,
// holds KV blocks of block size × (KV bytes per token per GPU), also
// truncated to whole bytes. Summing the memory over the TP GPUs and also
// dividing the KV bytes per token by TP counts each GPU's KV TP times: at
// TP2 it gives Mixtral-8x7B on H100 48,956 blocks where vLLM has 27,510.
// vLLM's own rule is KVBlocksVLLM (kvcap_vllm.go), the default.
const (
	activationDenseGiB = 5.5
	activationMoEGiB   = 8.0
	nonTorchTP1GiB     = 0.15
	nonTorchTPGiB      = 0.6
	gib                = 1 << 30
)

// swiGLU are the activations whose FFN has three matrices (gate, up,
// down): the only FFN the weight count knows ("" = unspecified, taken as
// SwiGLU).
var swiGLU = []string{"silu", "swiglu", "geglu", "situ", ""}

// KVBytesPerToken is the KV cache one token takes on one of tp GPUs as
// BLIS f90a1e3a counts it: K and V of every layer (2 · KV heads · head
// width, split over TP, fractionally when TP exceeds the KV heads), or,
// for multi-head latent attention, the compressed latent (kv_lora_rank +
// qk_rope_head_dim, replicated on every GPU).
func KVBytesPerToken(a Arch, tp int) (float64, error) { return kvBytesPerToken(a, tp, false) }

// kvBytesPerToken is KVBytesPerToken, or, for a vLLM worker, the same with
// whole KV heads per GPU: KV heads / TP, one replicated head per worker
// when TP exceeds them.
func kvBytesPerToken(a Arch, tp int, worker bool) (float64, error) {
	if a.KVLoraRank > 0 {
		return float64(a.Layers) * float64(a.KVLoraRank+a.QKRopeHeadDim) * a.BytesPerParam, nil
	}
	if a.HeadDim <= 0 && a.Hidden%a.Heads != 0 {
		return 0, fmt.Errorf("hidden_size (%d) is not divisible by num_attention_heads (%d)", a.Hidden, a.Heads)
	}
	kv := a.kvHeads()
	if kv >= tp && kv%tp != 0 {
		return 0, fmt.Errorf("num_key_value_heads (%d) is not divisible by TP %d", kv, tp)
	}
	if worker {
		return float64(a.Layers) * 2.0 * float64(a.headDimForKV()) * float64(max(1, kv/tp)) * a.BytesPerParam, nil
	}
	// BLIS's order of operations, so that its block counts come out to the integer.
	return float64(a.Layers) * 2.0 * float64(a.headDimForKV()) * float64(kv) * a.BytesPerParam / float64(tp), nil
}

// headDimForKV is head_dim when declared, else hidden / heads.
func (a Arch) headDimForKV() int {
	if a.HeadDim > 0 {
		return a.HeadDim
	}
	return a.Hidden / a.Heads
}

// KVBlocks is the GPU KV capacity of one instance of tp GPUs, in blocks
// of blockSize tokens, at memory utilisation util, by rule (one of
// KVRules; "" is KVRuleVLLM). A model that does not fit is an error giving
// the memory it needs and the GPUs it would take.
func KVBlocks(a Arch, h Hardware, tp int, blockSize int64, util float64, rule string) (int64, error) {
	switch rule {
	case "", KVRuleVLLM:
		return KVBlocksVLLM(a, h, tp, blockSize, util)
	case KVRuleBLIS:
		return kvBlocksBLIS(a, h, tp, blockSize, util)
	}
	return 0, errtext.BadSetting(keys.KVCapacityRule, "must be one of %s, got %q", strings.Join(KVRules(), ", "), rule)
}

// kvBlocksBLIS is KVBlocks by BLIS f90a1e3a's rule.
func kvBlocksBLIS(a Arch, h Hardware, tp int, blockSize int64, util float64) (int64, error) {
	perBlock, err := blockBytes(a, tp, blockSize, util, KVBytesPerToken)
	if err != nil {
		return 0, err
	}
	available := h.MemoryGiB * util * float64(tp)
	weights := float64(WeightBytes(a)) / float64(gib)
	activation := activationDenseGiB
	if a.MoE() {
		activation = activationMoEGiB
	}
	nonTorch := nonTorchTPGiB
	if tp == 1 {
		nonTorch = nonTorchTP1GiB
	}
	overhead := weights + activation + nonTorch*float64(tp)
	if overhead >= available {
		minTP := int(math.Ceil((weights + activation) / (h.MemoryGiB*util - nonTorchTPGiB)))
		return 0, fmt.Errorf("does not fit: it needs %.2f GiB (%.2f weights + %.2f activations + %.2f non-torch) of the %.2f GiB available (%g GiB × %g × %d GPUs); it needs at least %d GPUs per instance",
			overhead, weights, activation, nonTorch*float64(tp), available, h.MemoryGiB, util, tp, minTP)
	}
	return blocksIn(available-overhead, perBlock)
}

// blockBytes checks what either rule reads and is one KV block's bytes on
// one GPU, its KV bytes per token by perToken.
func blockBytes(a Arch, tp int, blockSize int64, util float64, perToken func(Arch, int) (float64, error)) (int64, error) {
	if err := checkKVInputs(a, tp, blockSize, util); err != nil {
		return 0, err
	}
	bytes, err := perToken(a, tp)
	if err != nil {
		return 0, err
	}
	perBlock := int64(bytes * float64(blockSize))
	if perBlock <= 0 {
		return 0, fmt.Errorf("a KV block takes %d bytes; check torch_dtype and TP", perBlock)
	}
	return perBlock, nil
}

// blocksIn is how many blocks of perBlock bytes fit in left GiB (whole
// bytes, as vLLM truncates); none is an error.
func blocksIn(left float64, perBlock int64) (int64, error) {
	blocks := int64(left*float64(gib)) / perBlock
	if blocks <= 0 {
		return 0, fmt.Errorf("no room for a KV block (%.2f GiB left, %d bytes per block)", left, perBlock)
	}
	return blocks, nil
}

// checkKVInputs checks what either rule reads: the utilisation, the block
// size, and an architecture whose weights it can count.
func checkKVInputs(a Arch, tp int, blockSize int64, util float64) error {
	switch {
	case !(util > 0 && util <= 1):
		return fmt.Errorf("gpu_memory_utilization must be in (0, 1], got %v", util)
	case blockSize < 1:
		return fmt.Errorf("block size must be ≥ 1, got %d", blockSize)
	case tp < 1:
		return fmt.Errorf("TP must be ≥ 1, got %d", tp)
	case a.Vocab <= 0:
		return fmt.Errorf("vocab_size must be > 0 to count the weights, got %d", a.Vocab)
	case !isSwiGLU(a.HiddenAct):
		return fmt.Errorf("hidden_act %q: the weight count knows only SwiGLU-family FFNs (silu, swiglu, geglu, situ)", a.HiddenAct)
	}
	return a.Check()
}

func isSwiGLU(act string) bool {
	for _, s := range swiGLU {
		if act == s {
			return true
		}
	}
	return false
}

// WeightBytes counts the model's weights in bytes (truncated): embeddings
// (vocab × d, twice unless tied), per layer attention d(d + 2·d_kv) + d²
// and two norms of d, three-matrix FFNs (MoE layers: every expert's,
// shared experts and the router's E × d; the first_k_dense_replace layers
// dense), and the final norm, at the weights' width.
func WeightBytes(a Arch) int64 {
	d, vocab, layers, ffn := int64(a.Hidden), int64(a.Vocab), int64(a.Layers), int64(a.Intermediate)
	kvDim := int64(a.kvHeads()) * int64(a.headDimForKV())
	attention := d*(d+2*kvDim) + d*d
	dense := 3 * d * ffn
	var mlp int64
	if a.MoE() {
		expert := ffn
		if a.ExpertFFN > 0 {
			expert = int64(a.ExpertFFN)
		}
		moe := 3 * d * expert * int64(a.Experts)
		if a.SharedExpertFFN > 0 {
			moe += 3 * d * int64(a.SharedExpertFFN)
		}
		moe += int64(a.Experts) * d
		prefix := dense
		if a.DenseFFN > 0 {
			prefix = 3 * d * int64(a.DenseFFN)
		}
		nDense := min(max(int64(a.FirstKDense), 0), layers)
		mlp = nDense*prefix + (layers-nDense)*moe
	} else {
		mlp = layers * dense
	}
	var lmHead int64
	if !a.TiedEmbeddings {
		lmHead = vocab * d
	}
	total := vocab*d + layers*(attention+2*d) + mlp + lmHead + d
	return int64(float64(total) * a.WeightBytes())
}
