package cluster

import (
	"fmt"
	"strings"
)

// World is where a configuration runs: the model served, the GPU, the
// tensor parallelism, the latency model pricing its steps, how many
// instances and the GPU KV blocks of each. A study records it when
// created and its reports state it; it changes no simulated event.
type World struct {
	Model        string `json:"model"`
	GPU          string `json:"gpu"`
	TP           int    `json:"tp"`
	LatencyModel string `json:"latency_model"`
	Instances    int    `json:"instances"`
	// KVBlocks is the GPU KV capacity of one instance in blocks
	// (Config.KVBlocks); 0 when it cannot be derived (the model does not
	// fit on the GPU at the TP).
	KVBlocks int64 `json:"kv_blocks_per_instance"`
}

// Where is the world c runs in, its names as its data spells them; a world
// that does not resolve has no latency model and no KV blocks (Validate
// says why).
func (c *Config) Where() World {
	w, err := c.Resolve()
	if err != nil {
		return World{Model: c.Model, GPU: c.GPU, TP: c.TP, Instances: c.NumInstances}
	}
	blocks, err := c.KVBlocks(w)
	if err != nil {
		blocks = 0
	}
	return World{Model: w.Model, GPU: w.GPU, TP: c.TP, LatencyModel: w.Kind(), Instances: c.NumInstances, KVBlocks: blocks}
}

// Line names the model, GPU, TP and latency model: "meta-llama/llama-3.1-8b-instruct
// on H100, TP2, blackbox latency model".
func (w World) Line() string {
	return fmt.Sprintf("%s on %s, TP%d, %s latency model", w.Model, w.GPU, w.TP, w.LatencyModel)
}

// String is Line with the cluster's shape: "… · 8 instances · 132139 KV
// blocks per instance".
func (w World) String() string {
	return fmt.Sprintf("%s · %s · %s", w.Line(), count(w.Instances, "instance"), w.blocksText())
}

// Short is the world in a few words, for a list's column: "llama-3.1-8b-instruct
// H100×8 TP2 blackbox" (the model without its organisation, the GPU ×
// instances).
func (w World) Short() string {
	model := w.Model
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	return fmt.Sprintf("%s %s×%d TP%d %s", model, w.GPU, w.Instances, w.TP, w.LatencyModel)
}

func (w World) blocksText() string {
	if w.KVBlocks < 1 {
		return "KV blocks not derivable"
	}
	return fmt.Sprintf("%d KV blocks per instance", w.KVBlocks)
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
