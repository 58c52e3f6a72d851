package cli

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"optimize/simcore/cluster"
	"optimize/strategies/settings"
)

// settingsFile is simulate's --settings FILE: a whole strategy as data,
// `key: value` lines of the settings table, as `study show --trial N
// --settings` and `study export --format settings` write them. It is the
// base the flags and --set then override (as a template is): the file is
// checked on its own — every setting it gives must have an effect in the
// configuration it makes — and a flag given too may change that
// configuration, as it may a template's.
type settingsFile struct{ path string }

func (f *settingsFile) bind(fs *pflag.FlagSet) {
	fs.StringVar(&f.path, "settings", "", "a strategy as key: value settings (as study show --settings and study export --format settings write them); flags and --set given too override it")
}

// apply reads the file onto c, which the workload has moved to its
// operating point: the file's num_instances and kv.total_blocks are the
// ones the run gets. A model or GPU of the user's own (--model-config,
// --hardware-config) replaces the file's, as its flag would.
func (f *simFlags) applySettingsFile(c *cluster.Config) error {
	if f.worldFile != "" {
		name, data, err := settings.ReadWorldFile(f.worldFile)
		if err != nil {
			return fmt.Errorf("--world-file: %v", err)
		}
		if _, err := settings.ApplyWorldFile(name, data, c); err != nil {
			return fmt.Errorf("--world-file: %v", err)
		}
	}
	path := f.file.path
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--settings: %v", err)
	}
	model, gpu := c.Model, c.GPU
	if _, err := settings.ApplyFile(path, data, c); err != nil {
		return fmt.Errorf("--settings: %v", err)
	}
	if f.modelConfig != "" {
		c.Model = model
	}
	if f.hardwareConfig != "" {
		c.GPU = gpu
	}
	return nil
}
