package cli

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"optimize/simcore/cluster"
	"optimize/simcore/latency"
	"optimize/strategies/settings"
)

// world gives c the world data its names are read in: the built-ins, plus
// the model of --model-config and the GPU of --hardware-config, which
// then become c's model and GPU.
func (f *simFlags) world(fs *pflag.FlagSet, c *cluster.Config) error {
	cat, err := settings.WorldData()
	if err != nil {
		return failed(err)
	}
	if f.modelConfig == "" && f.hardwareConfig == "" {
		c.Data = cat
		return nil
	}
	cat = cat.Clone()
	if f.modelConfig != "" {
		if changed(fs, "model") {
			return fmt.Errorf("--model-config: --model is given too; give one")
		}
		data, err := os.ReadFile(f.modelConfig)
		if err != nil {
			return fmt.Errorf("--model-config: %v", err)
		}
		m, err := latency.ParseModelFile(f.modelConfig, "", data)
		if err != nil {
			return fmt.Errorf("--model-config: %v", err)
		}
		if _, err := cat.Model(m.Name); err == nil {
			return fmt.Errorf("--model-config: %s: model %s is built in; run it with --model", f.modelConfig, m.Name)
		}
		if err := cat.AddModel(f.modelConfig, m); err != nil {
			return fmt.Errorf("--model-config: %v", err)
		}
		c.Model = m.Name
	}
	if f.hardwareConfig != "" {
		if changed(fs, "hardware") {
			return fmt.Errorf("--hardware-config: --hardware is given too; give one")
		}
		data, err := os.ReadFile(f.hardwareConfig)
		if err != nil {
			return fmt.Errorf("--hardware-config: %v", err)
		}
		g, err := latency.ParseGPUFile(f.hardwareConfig, data)
		if err != nil {
			return fmt.Errorf("--hardware-config: %v", err)
		}
		if err := cat.AddGPU(f.hardwareConfig, g); err != nil {
			return fmt.Errorf("--hardware-config: %v", err)
		}
		c.GPU = g.Name
	}
	c.Data = cat
	return nil
}
