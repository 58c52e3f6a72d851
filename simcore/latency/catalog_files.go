package latency

import (
	"fmt"
	"strings"
)

// modelFile is one models/<name>.yaml: a model's architecture, with the
// config.json keys the formulas read, and its trained blackbox profiles.
type modelFile struct {
	Model        string         `yaml:"model"`
	Source       string         `yaml:"source"`
	Licence      string         `yaml:"licence"`
	Default      profileDefault `yaml:"default"`
	Architecture *archYAML      `yaml:"architecture"`
	Profiles     []profileEntry `yaml:"profiles"`
}

type profileDefault struct {
	GPU string `yaml:"gpu"`
	TP  int    `yaml:"tp"`
}

type profileEntry struct {
	GPU           string    `yaml:"gpu"`
	TP            int       `yaml:"tp"`
	VLLMVersion   string    `yaml:"vllm_version"`
	Alpha         []float64 `yaml:"alpha"`
	Beta          []float64 `yaml:"beta"`
	TotalKVBlocks int64     `yaml:"total_kv_blocks"`
}

// archYAML is Arch under config.json's key names.
type archYAML struct {
	Layers              int     `yaml:"num_hidden_layers" json:"num_hidden_layers"`
	Hidden              int     `yaml:"hidden_size" json:"hidden_size"`
	Heads               int     `yaml:"num_attention_heads" json:"num_attention_heads"`
	KVHeads             int     `yaml:"num_key_value_heads" json:"num_key_value_heads"`
	Intermediate        int     `yaml:"intermediate_size" json:"intermediate_size"`
	Vocab               int     `yaml:"vocab_size" json:"vocab_size"`
	BytesPerParam       float64 `yaml:"bytes_per_param" json:"bytes_per_param"`
	WeightBytesPerParam float64 `yaml:"weight_bytes_per_param" json:"weight_bytes_per_param"`
	Experts             int     `yaml:"num_local_experts" json:"num_local_experts"`
	ExpertsPerToken     int     `yaml:"num_experts_per_tok" json:"num_experts_per_tok"`
	ExpertFFN           int     `yaml:"moe_intermediate_size" json:"moe_intermediate_size"`
	SharedExpertFFN     int     `yaml:"shared_expert_intermediate_size" json:"shared_expert_intermediate_size"`
	InterleaveStep      int     `yaml:"interleave_moe_layer_step" json:"interleave_moe_layer_step"`
	DenseFFN            int     `yaml:"intermediate_size_mlp" json:"intermediate_size_mlp"`
	HiddenAct           string  `yaml:"hidden_act" json:"hidden_act"`
	HeadDim             int     `yaml:"head_dim" json:"head_dim"`
	KVLoraRank          int     `yaml:"kv_lora_rank" json:"kv_lora_rank"`
	QKRopeHeadDim       int     `yaml:"qk_rope_head_dim" json:"qk_rope_head_dim"`
	FirstKDense         int     `yaml:"first_k_dense_replace" json:"first_k_dense_replace"`
	MaxPositions        int     `yaml:"max_position_embeddings" json:"max_position_embeddings"`
	TiedEmbeddings      bool    `yaml:"tie_word_embeddings" json:"tie_word_embeddings"`
}

func (y archYAML) arch() Arch {
	return Arch{Layers: y.Layers, Hidden: y.Hidden, Heads: y.Heads, KVHeads: y.KVHeads, Intermediate: y.Intermediate,
		Vocab: y.Vocab, BytesPerParam: y.BytesPerParam, WeightBytesPerParam: y.WeightBytesPerParam, Experts: y.Experts,
		ExpertsPerToken: y.ExpertsPerToken, ExpertFFN: y.ExpertFFN, SharedExpertFFN: y.SharedExpertFFN,
		InterleaveStep: y.InterleaveStep, DenseFFN: y.DenseFFN, HiddenAct: y.HiddenAct, HeadDim: y.HeadDim,
		KVLoraRank: y.KVLoraRank, QKRopeHeadDim: y.QKRopeHeadDim, FirstKDense: y.FirstKDense,
		MaxPositions: y.MaxPositions, TiedEmbeddings: y.TiedEmbeddings}
}

// ParseModel reads one model file strictly and adds it.
func (c *Catalog) ParseModel(file string, data []byte) error {
	var f modelFile
	if err := strict(file, data, &f); err != nil {
		return err
	}
	m, err := f.entry(file)
	if err != nil {
		return err
	}
	return c.AddModel(file, m)
}

func (f modelFile) entry(file string) (*ModelEntry, error) {
	if f.Model == "" {
		return nil, fmt.Errorf("%s: model: required", file)
	}
	name := strings.ToLower(f.Model)
	m := &ModelEntry{Name: name, Source: f.Source, Licence: f.Licence, DefaultGPU: f.Default.GPU, DefaultTP: f.Default.TP}
	if f.Architecture == nil {
		return nil, fmt.Errorf("%s: architecture: required (the config.json numbers the latency formulas read)", file)
	}
	m.Arch = f.Architecture.arch()
	if err := m.Arch.Check(); err != nil {
		return nil, fmt.Errorf("%s: architecture: %v", file, err)
	}
	if m.DefaultGPU == "" || m.DefaultTP < 1 {
		return nil, fmt.Errorf("%s: default: gpu and tp ≥ 1 are required", file)
	}
	for i, e := range f.Profiles {
		if len(e.Alpha) != 3 || len(e.Beta) != 3 {
			return nil, fmt.Errorf("%s: profiles[%d]: alpha and beta need exactly 3 coefficients each", file, i)
		}
		if e.TP < 1 || e.GPU == "" || e.TotalKVBlocks < 1 {
			return nil, fmt.Errorf("%s: profiles[%d]: gpu, tp ≥ 1 and total_kv_blocks ≥ 1 are required", file, i)
		}
		p := Profile{Model: name, GPU: e.GPU, TP: e.TP, VLLMVersion: e.VLLMVersion, TotalKVBlocks: e.TotalKVBlocks}
		copy(p.Coeffs.Alpha[:], e.Alpha)
		copy(p.Coeffs.Beta[:], e.Beta)
		if _, err := NewBlackbox(p.Coeffs); err != nil {
			return nil, fmt.Errorf("%s: profiles[%d]: %v", file, i, err)
		}
		m.Profiles = append(m.Profiles, p)
	}
	return m, nil
}

// AddModel adds a model; a second model of the same name is an error
// naming file.
func (c *Catalog) AddModel(file string, m *ModelEntry) error {
	if _, dup := c.models[m.Name]; dup {
		return fmt.Errorf("%s: model %s is already defined", file, m.Name)
	}
	c.models[m.Name] = m
	return nil
}

// hardwareFile is hardware/<name>.yaml: GPUs.
type hardwareFile struct {
	GPUs []gpuYAML `yaml:"gpus"`
}

type gpuYAML struct {
	Name        string  `yaml:"name"`
	Source      string  `yaml:"source"`
	TFlopsPeak  float64 `yaml:"tflops_peak"`
	TFlopsFP8   float64 `yaml:"tflops_fp8"`
	BwPeakTBs   float64 `yaml:"bw_peak_tbs"`
	MfuPrefill  float64 `yaml:"mfu_prefill"`
	MfuDecode   float64 `yaml:"mfu_decode"`
	MemoryGiB   float64 `yaml:"memory_gib"`
	PricePerHr  float64 `yaml:"price_per_gpu_hour"`
	PriceSource string  `yaml:"price_source"`
}

// ParseHardware reads one hardware file strictly and adds its GPUs.
func (c *Catalog) ParseHardware(file string, data []byte) error {
	var f hardwareFile
	if err := strict(file, data, &f); err != nil {
		return err
	}
	for i, g := range f.GPUs {
		gpu, err := g.gpu()
		if err != nil {
			return fmt.Errorf("%s: gpus[%d]: %v", file, i, err)
		}
		if err := c.AddGPU(file, gpu); err != nil {
			return err
		}
	}
	return nil
}

func (g gpuYAML) gpu() (GPU, error) {
	if g.Name == "" {
		return GPU{}, fmt.Errorf("name: required")
	}
	out := GPU{Hardware: Hardware{Name: g.Name, TFlopsPeak: g.TFlopsPeak, TFlopsFP8: g.TFlopsFP8, BwPeakTBs: g.BwPeakTBs,
		MfuPrefill: g.MfuPrefill, MfuDecode: g.MfuDecode, MemoryGiB: g.MemoryGiB},
		Source: g.Source, PricePerHr: g.PricePerHr, PriceSource: g.PriceSource}
	if err := out.Check(); err != nil {
		return GPU{}, fmt.Errorf("%s: %v", g.Name, err)
	}
	if !(g.PricePerHr >= 0) {
		return GPU{}, fmt.Errorf("%s: price_per_gpu_hour must be ≥ 0, got %v", g.Name, g.PricePerHr)
	}
	return out, nil
}

// AddGPU adds a GPU; a second GPU of the same name is an error naming file.
func (c *Catalog) AddGPU(file string, g GPU) error {
	if _, err := c.GPU(g.Name); err == nil {
		return fmt.Errorf("%s: GPU %s is already defined", file, g.Name)
	}
	c.gpus[g.Name] = g
	c.gpuOrder = append(c.gpuOrder, g.Name)
	return nil
}

// coefficientsFile is latency/<name>.yaml: the physics models' coefficients.
type coefficientsFile struct {
	Source        string    `yaml:"source"`
	Alpha         []float64 `yaml:"trained_physics_alpha"`
	Beta          []float64 `yaml:"trained_physics_beta"`
	RooflineAlpha []float64 `yaml:"roofline_alpha"`
}

// ParseCoefficients reads the trained-physics and roofline coefficients.
func (c *Catalog) ParseCoefficients(file string, data []byte) error {
	var f coefficientsFile
	if err := strict(file, data, &f); err != nil {
		return err
	}
	if len(f.Alpha) != 3 || len(f.Beta) != 11 || len(f.RooflineAlpha) != 3 {
		return fmt.Errorf("%s: want 3 trained_physics_alpha, 11 trained_physics_beta and 3 roofline_alpha values, got %d, %d and %d",
			file, len(f.Alpha), len(f.Beta), len(f.RooflineAlpha))
	}
	copy(c.physics.Alpha[:], f.Alpha)
	copy(c.physics.Beta[:], f.Beta)
	copy(c.roofline[:], f.RooflineAlpha)
	if err := finite("trained_physics_alpha", f.Alpha); err != nil {
		return fmt.Errorf("%s: %v", file, err)
	}
	if err := finite("trained_physics_beta", f.Beta); err != nil {
		return fmt.Errorf("%s: %v", file, err)
	}
	if err := finite("roofline_alpha", f.RooflineAlpha); err != nil {
		return fmt.Errorf("%s: %v", file, err)
	}
	c.source = f.Source
	return nil
}
