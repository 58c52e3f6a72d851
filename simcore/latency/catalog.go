package latency

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"optimize/simcore/errtext"
)

// A Catalog is the simulator's world data, read from files its caller
// hands it: models (architecture and, for some, blackbox profiles), GPUs,
// and the trained-physics and roofline coefficients. The simulator embeds
// none of it.
type Catalog struct {
	models   map[string]*ModelEntry
	gpus     map[string]GPU
	gpuOrder []string
	physics  Physics
	roofline [3]float64
	source   string // where the coefficients come from
}

// HuggingFaceID is the model's Hugging Face repository id as its source
// spells it ("meta-llama/Llama-3.1-8B-Instruct", from
// https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct/…), "" when the
// source is not a Hugging Face URL.
func (m ModelEntry) HuggingFaceID() string {
	rest, ok := strings.CutPrefix(m.Source, "https://huggingface.co/")
	if !ok {
		return ""
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return ""
	}
	return parts[0] + "/" + parts[1]
}

// ModelEntry is one model: its architecture, the world it runs in when
// none is named, and its trained blackbox profiles.
type ModelEntry struct {
	Name       string
	Source     string // where the architecture numbers come from
	Licence    string
	Arch       Arch
	DefaultGPU string
	DefaultTP  int
	Profiles   []Profile
}

// Profile is one trained blackbox (model, GPU, TP) entry: coefficients
// plus the KV capacity in blocks that the deployment had per instance.
type Profile struct {
	Model         string
	GPU           string
	TP            int
	VLLMVersion   string
	Coeffs        Coeffs
	TotalKVBlocks int64
}

// GPU is a GPU's figures and its price.
type GPU struct {
	Hardware
	Source      string  // where the figures come from
	PricePerHr  float64 // USD per GPU-hour, the default of cost.gpu_hour.<name>
	PriceSource string  // where the price comes from, and when
}

// ErrUnknownModel is what Model reports for a model it does not know
// (errors.Is tells it from a known model lacking the GPU or TP asked for).
var ErrUnknownModel = errors.New("unknown model")

// Model returns the model named (case-insensitive).
func (c *Catalog) Model(name string) (*ModelEntry, error) {
	m, ok := c.models[strings.ToLower(name)]
	if !ok {
		return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownModel, name, strings.Join(c.Models(), ", "))
	}
	return m, nil
}

// Profile returns the model's blackbox profile on gpu at tp, if trained.
func (m *ModelEntry) Profile(gpu string, tp int) (Profile, bool) {
	for _, p := range m.Profiles {
		if strings.EqualFold(p.GPU, gpu) && p.TP == tp {
			return p, true
		}
	}
	return Profile{}, false
}

// ProfileNames lists the model's blackbox profiles as GPU/TPn.
func (m *ModelEntry) ProfileNames() []string {
	var out []string
	for _, p := range m.Profiles {
		out = append(out, fmt.Sprintf("%s/TP%d", p.GPU, p.TP))
	}
	return out
}

// Find returns the blackbox profile for model on gpu at tp; gpu "" and tp
// 0 take the model's defaults.
func (c *Catalog) Find(model, gpu string, tp int) (Profile, error) {
	m, err := c.Model(model)
	if err != nil {
		return Profile{}, err
	}
	if gpu == "" {
		gpu = m.DefaultGPU
	}
	if tp == 0 {
		tp = m.DefaultTP
	}
	if p, ok := m.Profile(gpu, tp); ok {
		return p, nil
	}
	have := "none"
	if len(m.Profiles) > 0 {
		have = strings.Join(m.ProfileNames(), ", ")
	}
	return Profile{}, fmt.Errorf("no blackbox profile for %s on %s at TP%d (trained: %s)", m.Name, gpu, tp, have)
}

// GPU returns the GPU named (case-insensitive).
func (c *Catalog) GPU(name string) (GPU, error) {
	for _, n := range c.gpuOrder {
		if strings.EqualFold(n, name) {
			return c.gpus[n], nil
		}
	}
	return GPU{}, fmt.Errorf("unknown GPU %q (known: %s)", name, strings.Join(c.gpuOrder, ", "))
}

// Models lists the known model names, sorted.
func (c *Catalog) Models() []string {
	out := make([]string, 0, len(c.models))
	for m := range c.models {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}

// GPUs lists the known GPU names in file order.
func (c *Catalog) GPUs() []string { return slices.Clone(c.gpuOrder) }

// Physics returns the trained-physics coefficients.
func (c *Catalog) Physics() Physics { return c.physics }

// RooflineAlpha returns the roofline's α.
func (c *Catalog) RooflineAlpha() [3]float64 { return c.roofline }

// CoefficientSource says where the trained-physics coefficients come from.
func (c *Catalog) CoefficientSource() string { return c.source }

// ReadCatalog reads the world data under fsys: models/*.yaml,
// hardware/*.yaml and latency/*.yaml. Errors name the file.
func ReadCatalog(fsys fs.FS) (*Catalog, error) {
	c := &Catalog{models: map[string]*ModelEntry{}, gpus: map[string]GPU{}}
	for _, part := range []struct {
		dir   string
		parse func(file string, data []byte) error
	}{{"models", c.ParseModel}, {"hardware", c.ParseHardware}, {"latency", c.ParseCoefficients}} {
		files, err := fs.Glob(fsys, path.Join(part.dir, "*.yaml"))
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: no data files (*.yaml)", part.dir)
		}
		for _, f := range files {
			data, err := fs.ReadFile(fsys, f)
			if err != nil {
				return nil, err
			}
			if err := part.parse(f, data); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

// strict decodes YAML refusing unknown keys, with one-line errors.
func strict(file string, data []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %s", file, errtext.OneLine(err.Error()))
	}
	return nil
}
