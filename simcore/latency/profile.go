package latency

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"optimize/simcore/errtext"
)

// Profile is one trained (model, GPU, TP) entry: coefficients plus the KV
// capacity in blocks that the deployment has per instance.
type Profile struct {
	Model         string
	GPU           string
	TP            int
	VLLMVersion   string
	Coeffs        Coeffs
	TotalKVBlocks int64
}

type profileFile struct {
	Model    string         `yaml:"model"`
	Default  profileDefault `yaml:"default"`
	Profiles []profileEntry `yaml:"profiles"`
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

// Catalog holds the profiles of every known model.
type Catalog struct {
	profiles []Profile
	defaults map[string]profileDefault // model → default GPU/TP
}

// ParseProfiles reads one model's profile file strictly and adds it.
func (c *Catalog) ParseProfiles(file string, data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f profileFile
	if err := dec.Decode(&f); err != nil {
		return fmt.Errorf("%s: %s", file, errtext.OneLine(err.Error()))
	}
	if f.Model == "" {
		return fmt.Errorf("%s: model: required", file)
	}
	if c.defaults == nil {
		c.defaults = map[string]profileDefault{}
	}
	c.defaults[strings.ToLower(f.Model)] = f.Default
	for i, e := range f.Profiles {
		if len(e.Alpha) != 3 || len(e.Beta) != 3 {
			return fmt.Errorf("%s: profiles[%d]: alpha and beta need exactly 3 coefficients each", file, i)
		}
		if e.TP < 1 || e.GPU == "" || e.TotalKVBlocks < 1 {
			return fmt.Errorf("%s: profiles[%d]: gpu, tp ≥ 1 and total_kv_blocks ≥ 1 are required", file, i)
		}
		p := Profile{Model: strings.ToLower(f.Model), GPU: e.GPU, TP: e.TP, VLLMVersion: e.VLLMVersion, TotalKVBlocks: e.TotalKVBlocks}
		copy(p.Coeffs.Alpha[:], e.Alpha)
		copy(p.Coeffs.Beta[:], e.Beta)
		if _, err := New(p.Coeffs); err != nil {
			return fmt.Errorf("%s: profiles[%d]: %v", file, i, err)
		}
		c.profiles = append(c.profiles, p)
	}
	return nil
}

// ErrUnknownModel is what Find reports for a model it has no profile of
// (errors.Is tells it from a known model lacking the GPU or TP asked for).
var ErrUnknownModel = errors.New("unknown model")

// Find returns the profile for model on gpu at tp; gpu "" and tp 0 take the
// model's defaults.
func (c *Catalog) Find(model, gpu string, tp int) (Profile, error) {
	model = strings.ToLower(model)
	d, ok := c.defaults[model]
	if !ok {
		return Profile{}, fmt.Errorf("%w %q (known: %s)", ErrUnknownModel, model, strings.Join(c.Models(), ", "))
	}
	if gpu == "" {
		gpu = d.GPU
	}
	if tp == 0 {
		tp = d.TP
	}
	var have []string
	for _, p := range c.profiles {
		if p.Model != model {
			continue
		}
		if strings.EqualFold(p.GPU, gpu) && p.TP == tp {
			return p, nil
		}
		have = append(have, fmt.Sprintf("%s/TP%d", p.GPU, p.TP))
	}
	return Profile{}, fmt.Errorf("no profile for %s on %s at TP%d (known: %s)", model, gpu, tp, strings.Join(have, ", "))
}

// Models lists the known model names, sorted.
func (c *Catalog) Models() []string {
	out := make([]string, 0, len(c.defaults))
	for m := range c.defaults {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// ReadCatalog reads every model's profile file, dir/*.yaml of fsys. The
// simulator ships no profiles: its caller hands it the files (the binary's
// built-ins, or a folder on disk). Errors name the file as dir/NAME.yaml.
func ReadCatalog(fsys fs.FS, dir string) (*Catalog, error) {
	var c Catalog
	files, err := fs.Glob(fsys, path.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no model profiles (*.yaml)", dir)
	}
	for _, f := range files {
		data, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		if err := c.ParseProfiles(f, data); err != nil {
			return nil, err
		}
	}
	return &c, nil
}
