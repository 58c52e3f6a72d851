package latency

import (
	"fmt"
	"math"
)

// The KV capacity rules: how many KV blocks an instance's GPUs hold.
const (
	// KVRuleVLLM is vLLM's (KVBlocksVLLM), the default.
	KVRuleVLLM = "vllm"
	// KVRuleBLIS is BLIS f90a1e3a's (kvBlocksBLIS): right at TP1 within
	// its overheads, TP times too many blocks at TP > 1.
	KVRuleBLIS = "blis-f90a1e3a"
)

// KVRules lists the KV capacity rules, the default first.
func KVRules() []string { return []string{KVRuleVLLM, KVRuleBLIS} }

// vLLM sizes the KV cache per worker, one GPU each: of that GPU's memory ×
// gpu_memory_utilization it takes the worker's shard of the weights
// (weights / TP) and what its profiling run measures besides (the
// activation peak of a max_num_batched_tokens step, the CUDA context,
// CUDA graphs and, with TP, NCCL's buffers); the rest holds blocks of
// block size × that worker's KV bytes per token, and every worker holds
// as many blocks. The profiling overhead, fitted to the num_gpu_blocks
// vLLM logged on H100 at gpu_memory_utilization 0.9 (Qwen3-14B TP1 18,038;
// Llama-2-7B TP1 7,462; Mixtral-8x7B TP2 27,510; CodeLlama-34B TP2
// 26,602; Llama-2-70B TP4 31,356; each within 1.5 % by this rule):
const (
	vllmOverheadTP1GiB = 0.8 // one GPU: activations, CUDA context and graphs
	vllmOverheadTPGiB  = 1.6 // per GPU with TP: the same and NCCL's buffers
)

// KVBlocksVLLM is KVBlocks by vLLM's per-worker rule.
func KVBlocksVLLM(a Arch, h Hardware, tp int, blockSize int64, util float64) (int64, error) {
	perBlock, err := blockBytes(a, tp, blockSize, util, workerKVBytesPerToken)
	if err != nil {
		return 0, err
	}
	available := h.MemoryGiB * util
	shard := float64(WeightBytes(a)) / float64(gib) / float64(tp)
	overhead := vllmOverheadTPGiB
	if tp == 1 {
		overhead = vllmOverheadTP1GiB
	}
	if shard+overhead >= available {
		minTP := int(math.Ceil(float64(WeightBytes(a)) / float64(gib) / (available - vllmOverheadTPGiB)))
		return 0, fmt.Errorf("does not fit: each GPU needs %.2f GiB (%.2f of weights, 1/%d of them, + %.2f profiled overhead) of the %.2f GiB it offers (%g GiB × %g); it needs at least %d GPUs per instance",
			shard+overhead, shard, tp, overhead, available, h.MemoryGiB, util, max(minTP, tp+1))
	}
	return blocksIn(available-shard-overhead, perBlock)
}

// workerKVBytesPerToken is the KV cache one token takes on one vLLM
// worker of tp: its whole KV heads (kvBytesPerToken).
func workerKVBytesPerToken(a Arch, tp int) (float64, error) { return kvBytesPerToken(a, tp, true) }
