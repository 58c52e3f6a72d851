// Package strategies turns strategy templates into simulator configurations.
//
// A template (data/strategies/*.yaml) names a mechanism — setting
// values that do not vary — and a parameter space: each parameter tunes one
// setting within bounds, possibly only while a categorical parameter takes
// given values (its condition). Template.Config applies the mechanism, then
// a parameter vector, to a base cluster.Config through the typed setters of
// the settings table (package strategies/settings), the one declaration of
// every simulator setting; nothing in that path looks names up. Loading (load.go,
// resolve.go) rejects anything malformed with a one-line error naming the
// file, the field and what is allowed; the Registry (registry.go) holds the
// built-in and user templates; Metric (metric.go) reads objective and
// constraint values out of a run's summary, and Judge (judge.go) scores a
// run against the baseline. What a study runs on is package
// strategies/workloads; llm-d and vLLM files are strategies/production.
package strategies

import (
	"fmt"
	"slices"
	"strings"

	"optimize/search"
	"optimize/simcore/cluster"
	"optimize/strategies/settings"
)

// TemplateParam is one tunable dimension of a template. Its space (kind,
// range or choices, condition) is a search.Param, the one description the
// samplers sample, values are checked against and reports show; what the
// template adds is the setting it tunes and its default. A value of it is
// a search.Value: the number, or the choice by name; search.Inactive()
// while its condition does not hold (it is then neither sampled nor
// applied).
type TemplateParam struct {
	search.Param
	Default    search.Value
	SettingKey string // the key of the setting it tunes

	setting *settings.Setting
	// choiceValues are the setting's values of Choices (categorical only),
	// so that applying a choice is a lookup, not a parse.
	choiceValues []float64
}

// Setting is the setting the parameter tunes; nil for a switch.
func (p *TemplateParam) Setting() *settings.Setting { return p.setting }

// Switch reports whether p is a switch: a categorical parameter that
// tunes no setting, whose choices only decide which parameters
// conditioned on it (when:) apply.
func (p *TemplateParam) Switch() bool { return p.setting == nil }

// Tunes is what p tunes, for display: its setting's key, or for a switch
// what it does instead.
func (p *TemplateParam) Tunes() string {
	if p.Switch() {
		return "(switch: selects the parameters conditioned on it)"
	}
	return p.SettingKey
}

// settingValue is the setting's value for v, an active value of p.
func (p *TemplateParam) settingValue(v search.Value) float64 {
	if p.Kind == search.Categorical {
		return p.choiceValues[slices.Index(p.Choices, v.Choice)]
	}
	return v.Number
}

// Objective is one metric to optimise.
type Objective struct {
	Name, Metric string
	Minimize     bool
}

// Constraint bounds a metric, absolutely or relative to the study's
// baseline run; at least one bound is set. Ratios are > 0 when set, so 0
// means unset; Min and Max may be 0 (e.g. max 0 dropped requests), so
// HasMin and HasMax say whether they are set. MinDeltaToBaseline bounds
// the difference v − baseline from below, in the metric's own unit: −0.05
// on an attainment lets a strategy lose at most 5 points of it (0 is a
// bound too, so HasMinDelta says whether it is set).
type Constraint struct {
	Metric                                 string
	MinRatioToBaseline, MaxRatioToBaseline float64
	MinDeltaToBaseline                     float64
	Min, Max                               float64
	HasMinDelta, HasMin, HasMax            bool
}

// Words renders the bounds that are set, e.g. "tokens_per_sec ≥ 0.98 ×
// baseline".
func (c Constraint) Words() string {
	var parts []string
	if c.MinRatioToBaseline != 0 {
		parts = append(parts, fmt.Sprintf("≥ %g × baseline", c.MinRatioToBaseline))
	}
	if c.MaxRatioToBaseline != 0 {
		parts = append(parts, fmt.Sprintf("≤ %g × baseline", c.MaxRatioToBaseline))
	}
	if c.HasMinDelta {
		parts = append(parts, fmt.Sprintf("≥ baseline %+g", c.MinDeltaToBaseline))
	}
	if c.HasMin {
		parts = append(parts, fmt.Sprintf("≥ %g", c.Min))
	}
	if c.HasMax {
		parts = append(parts, fmt.Sprintf("≤ %g", c.Max))
	}
	return c.Metric + " " + strings.Join(parts, ", ")
}

// Fixed is one resolved mechanism value, for display.
type Fixed struct {
	SettingKey string `json:"setting"`
	Value      string `json:"value"`
	From       string `json:"from"` // the template that set it (this one or a base)
}

// fixed is one resolved mechanism value, ready to apply.
type fixed struct {
	setting *settings.Setting
	value   float64 // number, or index into setting.Choices
	from    string
}

// Template is a loaded, validated strategy template.
type Template struct {
	Name, Description string
	Base              string // template whose mechanism is inherited, or ""
	Workload          string // default built-in workload
	File              string // where it was loaded from
	Params            []TemplateParam
	Objectives        []Objective
	Primary           int // index into Objectives
	Constraints       []Constraint
	// Regimes are the operating points `study validate --regimes` checks
	// by default (names of built-in regimes).
	Regimes []string
	// Robust is what a study of this template runs every trial in unless
	// study create says otherwise: robust_regimes × robust_worlds,
	// aggregated by robust_aggregate (none: the study's own scenario).
	// Not inherited, like Sampler: it multiplies a study's cost.
	Robust Robust
	// Sampler is the --sampler a study of this template gets when none is
	// given ("" for the default by objective count). Not inherited: it was
	// chosen by measurement on this template's own space.
	Sampler string
	// Deployable: every study of this template searches only what
	// production carries (study create --deployable; ForProduction). Not
	// inherited, like Sampler.
	Deployable bool
	// GPUs, when > 0, is the cluster's fixed GPU total: the template
	// derives the instance counts from it (derivePools). Inherited.
	GPUs int

	mechanism []fixed // inherited first, one entry per setting
	space     search.Space
}

// Space is the parameters' search space, in Params order, for the
// samplers. The slice is shared: do not modify.
func (t *Template) Space() search.Space { return t.space }

// Mechanism returns the fixed setting values, inherited ones first.
// Settings a parameter tunes are left out (an inherited value of theirs is
// applied but then overridden while the parameter is active), and so are
// the instance counts a template with a GPU total derives.
func (t *Template) Mechanism() []Fixed {
	out := make([]Fixed, 0, len(t.mechanism))
	for _, s := range t.mechanism {
		if t.derives(s.setting.Key) {
			continue // an inherited value the derived one replaces
		}
		if !slices.ContainsFunc(t.Params, func(p TemplateParam) bool { return p.SettingKey == s.setting.Key }) {
			out = append(out, Fixed{SettingKey: s.setting.Key, Value: s.setting.FormatNumber(s.value), From: s.from})
		}
	}
	return out
}

// Defaults returns the parameters' default values, inactive for a
// parameter whose condition the defaults do not meet.
func (t *Template) Defaults() []search.Value {
	v := make([]search.Value, len(t.Params))
	for i, p := range t.Params {
		v[i] = p.Default
	}
	for i, on := range t.space.Active(v) {
		if !on {
			v[i] = search.Inactive()
		}
	}
	return v
}

// Config applies the mechanism, then values (aligned with Params; an
// inactive parameter's value is ignored), to base and validates the
// result. base is not modified. Errors name the parameter and its allowed
// range. Loading checked that every active parameter has an effect at the
// template's probe points (each numeric parameter at either end alone); a
// combination of several at their ends can still leave one without
// effect, and the trial then simply runs without it rather than failing.
func (t *Template) Config(base cluster.Config, values []search.Value) (cluster.Config, error) {
	c, _, err := t.apply(base, values)
	return c, err
}

// apply builds and validates the configuration of values without checking
// that every active parameter has an effect.
func (t *Template) apply(base cluster.Config, values []search.Value) (cluster.Config, []bool, error) {
	c := base
	if len(values) != len(t.Params) {
		return c, nil, fmt.Errorf("template %s: %d parameter values for %d parameters", t.Name, len(values), len(t.Params))
	}
	for _, s := range t.mechanism {
		s.setting.SetNumber(&c, s.value)
	}
	active := t.space.Active(values)
	for i := range t.Params {
		p := &t.Params[i]
		if !active[i] {
			continue
		}
		if err := p.Check(values[i]); err != nil {
			return c, nil, fmt.Errorf("template %s: %v", t.Name, err)
		}
		if !p.Switch() {
			p.setting.SetNumber(&c, p.settingValue(values[i]))
		}
	}
	if err := t.derivePools(&c); err != nil {
		return c, nil, fmt.Errorf("template %s: %v", t.Name, err)
	}
	c, err := t.validate(c)
	return c, active, err
}

// validate runs the simulator's own checks on c.
func (t *Template) validate(c cluster.Config) (cluster.Config, error) {
	if err := settings.CheckConfig(&c); err != nil {
		return c, fmt.Errorf("template %s: %v", t.Name, err)
	}
	return c, nil
}

// ParseParams reads "name=value" pairs (as given to --param) over the
// defaults. Errors are one line naming the parameter and what it accepts;
// the caller names the flag. A parameter given while its condition does
// not hold is an error: it would have no effect.
func (t *Template) ParseParams(pairs []string) ([]search.Value, error) {
	values := make([]search.Value, len(t.Params))
	for i, p := range t.Params {
		values[i] = p.Default
	}
	given := make([]bool, len(t.Params))
	gs, err := Pairs(pairs)
	if err != nil {
		return nil, err
	}
	for _, g := range gs {
		name, raw := g.Name, g.Text
		i := t.space.Index(name)
		if i < 0 {
			return nil, fmt.Errorf("%s: template %s has no such parameter (parameters: %s)", name, t.Name, t.paramNames())
		}
		if given[i] {
			return nil, fmt.Errorf("%s: given twice", name)
		}
		v, err := t.Params[i].Parse(raw)
		if err != nil {
			return nil, err
		}
		values[i], given[i] = v, true
	}
	for i, on := range t.space.Active(values) {
		if on {
			continue
		}
		if given[i] {
			return nil, t.inactiveError(i, values)
		}
		values[i] = search.Inactive()
	}
	return values, nil
}

// inactiveError says why parameter i is not active at values.
func (t *Template) inactiveError(i int, values []search.Value) error {
	p := &t.Params[i]
	w := p.When
	j := t.space.Index(w.Param)
	state := "inactive itself"
	if !values[j].Absent() {
		state = "it is " + t.Params[j].Format(values[j])
	}
	return fmt.Errorf("%s: has no effect unless parameter %s is %s (%s)", p.Name, w.Param, settings.OrList(w.Choices), state)
}

func (t *Template) paramNames() string {
	if len(t.Params) == 0 {
		return "none"
	}
	names := make([]string, len(t.Params))
	for i, p := range t.Params {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}
