package strategies

import (
	"slices"

	"optimize/search"
	"optimize/simcore/cluster"
	"optimize/simcore/latency"
	"optimize/strategies/settings"
	"optimize/strategies/workloads"
)

// TunedWorld lists the world settings t's parameters tune (WorldKeys), in
// parameter order; none for a template whose trials all run in its
// defaults' world.
func (t *Template) TunedWorld() []string {
	keys := settings.WorldKeys()
	var out []string
	for _, p := range t.Params {
		if slices.Contains(keys, p.SettingKey) && !slices.Contains(out, p.SettingKey) {
			out = append(out, p.SettingKey)
		}
	}
	return out
}

// World is the world of t's defaults under t's own workload: the world
// its studies' baselines run in, and every trial's unless t tunes the
// world (TunedWorld).
func (t *Template) World() (cluster.World, error) { return t.WorldOf(t.Defaults(), t.Workload) }

// WorldOf is the world values (aligned with t's parameters) run in, in
// the standard configuration, under workload — a workload name as a
// study stores it, whose "@REGIME" moves the cluster (regimes scale the
// instances or set the KV blocks). Only the name's regime is read: the
// world of a study whose spec file has gone can still be told.
func (t *Template) WorldOf(values []search.Value, workload string) (cluster.World, error) {
	base, err := settings.StandardConfig()
	if err != nil {
		return cluster.World{}, err
	}
	c, err := t.Config(base, values)
	if err != nil {
		return cluster.World{}, err
	}
	return inRegime(c, workload)
}

// SeedsWorld is the world t's defaults ran in under workload before
// studies recorded their world: every study then ran in the seeds' world
// (DefaultModel on DefaultGPU at DefaultTP, its blackbox profile), with
// the instances and KV blocks the template and the regime gave it — the
// seeds' world whatever the template says today.
func (t *Template) SeedsWorld(workload string) (cluster.World, error) {
	base, err := settings.StandardConfig()
	if err != nil {
		return cluster.World{}, err
	}
	c, err := t.Config(base, t.Defaults())
	if err != nil {
		return cluster.World{}, err
	}
	c.Model, c.GPU, c.TP, c.LatencyModel = settings.DefaultModel, settings.DefaultGPU, settings.DefaultTP, latency.KindBlackbox
	return inRegime(c, workload)
}

// inRegime is the world of c moved by the regime workload names
// ("NAME@REGIME"), if any.
func inRegime(c cluster.Config, workload string) (cluster.World, error) {
	if err := workloads.ApplyRegimes(workload, &c); err != nil {
		return cluster.World{}, err
	}
	if _, err := c.Resolve(); err != nil {
		return cluster.World{}, err
	}
	return c.Where(), nil
}
