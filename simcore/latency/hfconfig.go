package latency

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ParseModelFile reads a user's model: a Hugging Face config.json (a JSON
// object) or a YAML file in the shipped models' format. A config.json's
// model is named by its file unless name is given. Errors name the file
// and the key.
func ParseModelFile(file, name string, data []byte) (*ModelEntry, error) {
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		a, err := ParseHFConfig(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", file, err)
		}
		if err := a.Check(); err != nil {
			return nil, fmt.Errorf("%s: %v", file, err)
		}
		if name == "" {
			name = file
		}
		return &ModelEntry{Name: strings.ToLower(name), Source: file, Arch: a}, nil
	}
	var f modelFile
	if err := strict(file, data, &f); err != nil {
		return nil, err
	}
	if f.Default.GPU == "" {
		f.Default = profileDefault{GPU: "H100", TP: 1} // a user's file need not name a default world
	}
	return f.entry(file)
}

// dtypeBytes are the widths of config.json's torch_dtype values.
var dtypeBytes = map[string]float64{"float32": 4, "float16": 2, "bfloat16": 2, "int8": 1, "uint8": 1, "fp8": 1, "int4": 1, "nf4": 1}

// expertKeys are the config.json keys that count routed experts, first
// found with two or more wins.
var expertKeys = []string{"num_experts", "moe_num_experts", "n_routed_experts", "num_local_experts", "num_routed_experts"}

// ParseHFConfig reads the architecture from a Hugging Face config.json as
// BLIS does: keys of text_config (multimodal models) override the top
// level; counts are JSON numbers (truncated); the KV heads fall back from
// num_key_value_heads to num_kv_heads, multi_query_group_num and the
// attention heads; the weights' width comes from quantization_config
// (bits/8, 1 for fp8, compressed-tensors' first group's num_bits/8).
func ParseHFConfig(data []byte) (Arch, error) {
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return Arch{}, fmt.Errorf("not a JSON object: %v", err)
	}
	if tc, ok := m["text_config"].(map[string]any); ok {
		for k, v := range tc {
			m[k] = v
		}
	}
	num := func(k string) int {
		if v, ok := m[k].(float64); ok {
			return int(v)
		}
		return 0
	}
	first := func(keys ...string) int {
		for _, k := range keys {
			if v := num(k); v != 0 {
				return v
			}
		}
		return 0
	}
	a := Arch{Layers: num("num_hidden_layers"), Hidden: num("hidden_size"), Vocab: num("vocab_size"),
		Intermediate: first("intermediate_size", "ffn_hidden_size"), Heads: num("num_attention_heads"),
		ExpertsPerToken: num("num_experts_per_tok"), ExpertFFN: num("moe_intermediate_size"),
		InterleaveStep: num("interleave_moe_layer_step"), DenseFFN: num("intermediate_size_mlp"),
		HeadDim: num("head_dim"), KVLoraRank: num("kv_lora_rank"), QKRopeHeadDim: num("qk_rope_head_dim"),
		FirstKDense: num("first_k_dense_replace"), MaxPositions: num("max_position_embeddings")}
	a.KVHeads = first("num_key_value_heads", "num_kv_heads", "multi_query_group_num")
	if a.KVHeads == 0 {
		a.KVHeads = a.Heads
	}
	a.HiddenAct, _ = m["hidden_act"].(string)
	a.TiedEmbeddings, _ = m["tie_word_embeddings"].(bool)
	dtype, ok := m["torch_dtype"].(string)
	if !ok {
		dtype, ok = m["dtype"].(string)
	}
	if !ok {
		return Arch{}, fmt.Errorf("torch_dtype: required (one of %s)", strings.Join(sortedKeys(dtypeBytes), ", "))
	}
	if a.BytesPerParam, ok = dtypeBytes[dtype]; !ok {
		return Arch{}, fmt.Errorf("torch_dtype: %q is not one of %s", dtype, strings.Join(sortedKeys(dtypeBytes), ", "))
	}
	for _, k := range expertKeys {
		if v := num(k); v >= 2 {
			a.Experts = v
			break
		}
	}
	if v := num("shared_expert_intermediate_size"); v > 0 {
		a.SharedExpertFFN = v
	} else if n := num("n_shared_experts"); n > 0 {
		w := a.ExpertFFN
		if w == 0 {
			w = a.Intermediate
		}
		a.SharedExpertFFN = n * w
	}
	for _, k := range []string{"head_dim", "kv_lora_rank", "qk_rope_head_dim", "first_k_dense_replace"} {
		if num(k) < 0 {
			return Arch{}, fmt.Errorf("%s must be ≥ 0, got %d", k, num(k))
		}
	}
	if qc, ok := m["quantization_config"].(map[string]any); ok {
		a.WeightBytesPerParam = quantWidth(qc)
	}
	return a, nil
}

// quantWidth is the stored weights' width a quantization_config gives, 0
// if it gives none.
func quantWidth(qc map[string]any) float64 {
	bits := 0
	switch v := qc["bits"].(type) {
	case float64:
		bits = int(v)
	case string:
		bits, _ = strconv.Atoi(v)
	}
	if bits > 0 {
		return float64(bits) / 8
	}
	method, _ := qc["quant_method"].(string)
	switch strings.ToLower(method) {
	case "fp8":
		return 1
	case "compressed-tensors":
		groups, _ := qc["config_groups"].(map[string]any)
		for _, k := range sortedKeys(groups) {
			g, _ := groups[k].(map[string]any)
			w, _ := g["weights"].(map[string]any)
			if n, ok := w["num_bits"].(float64); ok && n > 0 {
				return n / 8
			}
		}
	}
	return 0
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// ParseGPUFile reads a user's GPU: a YAML file in the shipped hardware
// format holding exactly one GPU.
func ParseGPUFile(file string, data []byte) (GPU, error) {
	var f hardwareFile
	if err := strict(file, data, &f); err != nil {
		return GPU{}, err
	}
	if len(f.GPUs) != 1 {
		return GPU{}, fmt.Errorf("%s: gpus: want exactly one GPU, got %d", file, len(f.GPUs))
	}
	g, err := f.GPUs[0].gpu()
	if err != nil {
		return GPU{}, fmt.Errorf("%s: gpus[0]: %v", file, err)
	}
	return g, nil
}

// Clone returns a copy that models and GPUs can be added to without
// touching c.
func (c *Catalog) Clone() *Catalog {
	out := *c
	out.models = make(map[string]*ModelEntry, len(c.models))
	for k, v := range c.models {
		out.models[k] = v
	}
	out.gpus = make(map[string]GPU, len(c.gpus))
	for k, v := range c.gpus {
		out.gpus[k] = v
	}
	out.gpuOrder = slices.Clone(c.gpuOrder)
	return &out
}
