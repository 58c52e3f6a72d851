package strategies

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

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
	return t.WorldFrom(base, values, workload)
}

// WorldFrom is WorldOf from base instead of the standard configuration
// (a study's, with its world file over the standard one).
func (t *Template) WorldFrom(base cluster.Config, values []search.Value, workload string) (cluster.World, error) {
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

// Gives says how the template sets the setting of key: a parameter tunes
// it (tuned), or its mechanism fixes it to fixed (its value text); ok is
// false when the template leaves it to the configuration it starts from.
func (t *Template) Gives(key string) (tuned bool, fixed string, ok bool) {
	if slices.ContainsFunc(t.Params, func(p TemplateParam) bool { return p.SettingKey == key }) {
		return true, "", true
	}
	for _, m := range t.Mechanism() {
		if m.SettingKey == key {
			return false, m.Value, true
		}
	}
	return false, "", false
}

// dropUnreachable follows the pinning of categorical parameter name to
// value: a parameter active only on other choices of it can never be
// active, so it leaves the space (with the parameters conditional on it);
// one active on value as well keeps only that choice in its condition.
func (t *Template) dropUnreachable(name, value string) {
	gone := map[string]bool{}
	var params []TemplateParam
	for _, q := range t.Params {
		if w := q.When; w != nil {
			switch {
			case gone[w.Param]:
				gone[q.Name] = true
				continue
			case w.Param == name && !slices.Contains(w.Choices, value):
				gone[q.Name] = true
				continue
			case w.Param == name:
				q.When = &search.When{Param: name, Choices: []string{value}}
			}
		}
		params = append(params, q)
	}
	t.Params, t.space = params, make(search.Space, len(params))
	for i := range params {
		t.space[i] = params[i].Param
	}
}

// Pinned is a copy of the template whose parameter tuning the setting of
// key takes the one value text (the setting's value text): a study whose
// world file gives a setting the template tunes searches the rest of the
// space in that world. Only a categorical or whole-number parameter is
// pinned (a float's range cannot shrink to a point); an error names what
// the template allows when value is outside it.
func (t *Template) Pinned(key, value string) (*Template, error) {
	i := slices.IndexFunc(t.Params, func(p TemplateParam) bool { return p.SettingKey == key })
	if i < 0 {
		return t, nil
	}
	c := *t
	c.Params, c.space = slices.Clone(t.Params), slices.Clone(t.space)
	p := &c.Params[i]
	switch p.Kind {
	case search.Categorical:
		k := slices.Index(p.Choices, value)
		if k < 0 {
			return nil, fmt.Errorf("%s is %s, and template %s's parameter %s takes %s", key, value, t.Name, p.Name, strings.Join(p.Choices, ", "))
		}
		p.Choices, p.choiceValues = []string{value}, []float64{p.choiceValues[k]}
		p.Default = search.Value{Choice: value}
		c.space[i] = p.Param
		c.dropUnreachable(p.Name, value)
		return &c, nil
	case search.Int:
		v, err := strconv.ParseFloat(value, 64)
		if err != nil || v < p.Low || v > p.High {
			return nil, fmt.Errorf("%s is %s, and template %s's parameter %s takes %g to %g", key, value, t.Name, p.Name, p.Low, p.High)
		}
		p.Low, p.High, p.Default = v, v, search.Value{Number: v}
	default:
		return nil, fmt.Errorf("%s is given, and template %s tunes it over a range (parameter %s): give it or tune it, not both", key, t.Name, p.Name)
	}
	c.space[i] = p.Param
	return &c, nil
}
