package settings

import (
	"optimize/simcore/cluster"
)

// The binary's built-in data — workload specs and model latency profiles,
// embedded by package templates — is read here and handed to the
// simulator, which parses what it is given and embeds nothing. The CLI,
// the server and the studies reach the built-ins through these functions.

// DefaultModel is the model whose profile the simulator runs on when no
// model is named: the one the baseline figures were measured on.
const DefaultModel = "meta-llama/llama-3.1-8b-instruct"

// DefaultGPU and DefaultTP complete the default world.
const (
	DefaultGPU = "H100"
	DefaultTP  = 2
)

// Standard is the simulator's defaults in the default world (llama-3.1-8b
// on H100 at TP2, its blackbox profile: the world the baseline figures
// were measured in), read in the built-in world data. Templates and
// studies start from it.
func Standard() (cluster.Config, error) {
	cat, err := WorldData()
	if err != nil {
		return cluster.Config{}, err
	}
	c := cluster.Defaults()
	c.Model, c.GPU, c.TP, c.Data = DefaultModel, DefaultGPU, DefaultTP, cat
	if _, err := c.Resolve(); err != nil {
		return cluster.Config{}, err
	}
	return c, nil
}

// CheckBase is the configuration load-time checks apply defaults to: the
// standard one (if the world data does not load, the plain defaults, and
// CheckConfig reports why).
func CheckBase() cluster.Config {
	c, err := Standard()
	if err != nil {
		return cluster.Defaults()
	}
	return c
}
