// Package strategies turns strategy templates into simulator configurations.
//
// A template (templates/strategies/*.yaml) names a mechanism — setting
// values that do not vary — and a parameter space: each parameter tunes one
// setting within bounds, possibly only while a categorical parameter takes
// given values (its condition). Template.Config applies the mechanism, then
// a parameter vector, to a base cluster.Config through the typed setters of
// the settings table (settings_table.go), the one declaration of every
// simulator setting; nothing in that path looks names up. Loading (load.go,
// resolve.go) rejects anything malformed with a one-line error naming the
// file, the field and what is allowed; the Registry (registry.go) holds the
// built-in and user templates; Metric (metric.go) reads objective and
// constraint values out of a run's summary.
package strategies

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"optimize/simcore/admit"
	"optimize/simcore/cluster"
	"optimize/simcore/errtext"
)

// Kind is a parameter's (or knob's) value type.
type Kind string

// Parameter kinds. Bounds are inclusive; log-float samples log-uniformly.
const (
	Float       Kind = "float"
	Int         Kind = "int"
	LogFloat    Kind = "log-float"
	Categorical Kind = "categorical"
)

// Param is one tunable dimension. A value of it is a float64: the number
// itself, or for a categorical parameter the index into Choices; NaN while
// its condition does not hold (it is then neither sampled nor applied). The
// same spec drives sampling, validation and export columns.
type Param struct {
	Name      string
	Kind      Kind
	Low, High float64  // numeric kinds
	Choices   []string // categorical
	Default   float64  // categorical: index into Choices
	Knob      string   // the key of the setting it tunes
	// When, if set, names an earlier categorical parameter and the choices
	// of it under which this parameter is sampled.
	When *Condition

	setting *Setting
	// choiceValues are the setting's values of Choices (categorical only),
	// so that applying a choice is an index, not a parse.
	choiceValues []float64
}

// ChoiceIndices are the condition's choices as indices into its
// parameter's Choices.
func (c *Condition) ChoiceIndices() []float64 { return slices.Clone(c.values) }

// Setting is the setting the parameter tunes.
func (p *Param) Setting() *Setting { return p.setting }

// Condition makes a parameter conditional on an earlier categorical one.
type Condition struct {
	Param   string   // the categorical parameter
	Choices []string // its choices under which the conditional one is active
	Index   int      // Param's index in the template's parameters
	values  []float64
}

// Objective is one metric to optimise.
type Objective struct {
	Name, Metric string
	Minimize     bool
}

// Constraint bounds a metric, absolutely or relative to the study's
// baseline run; at least one bound is set. Ratios are > 0 when set, so 0
// means unset; Min and Max may be 0 (e.g. max 0 dropped requests), so
// HasMin and HasMax say whether they are set.
type Constraint struct {
	Metric                                 string
	MinRatioToBaseline, MaxRatioToBaseline float64
	Min, Max                               float64
	HasMin, HasMax                         bool
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
	Knob  string `json:"setting"`
	Value string `json:"value"`
	From  string `json:"from"` // the template that set it (this one or a base)
}

// fixed is one resolved mechanism value, ready to apply.
type fixed struct {
	setting *Setting
	value   float64 // number, or index into setting.Choices
	from    string
}

// Template is a loaded, validated strategy template.
type Template struct {
	Name, Description string
	Base              string // template whose mechanism is inherited, or ""
	Workload          string // default built-in workload
	File              string // where it was loaded from
	Params            []Param
	Objectives        []Objective
	Primary           int // index into Objectives
	Constraints       []Constraint
	// Regimes are the operating points `study validate --regimes` checks
	// by default (names of built-in regimes).
	Regimes []string
	// Sampler is the --sampler a study of this template gets when none is
	// given ("" for the default by objective count). Not inherited: it was
	// chosen by measurement on this template's own space.
	Sampler string

	mechanism []fixed // inherited first, one entry per setting
}

// Mechanism returns the fixed setting values, inherited ones first.
// Settings a parameter tunes are left out (an inherited value of theirs is
// applied but then overridden while the parameter is active).
func (t *Template) Mechanism() []Fixed {
	out := make([]Fixed, 0, len(t.mechanism))
	for _, s := range t.mechanism {
		if !slices.ContainsFunc(t.Params, func(p Param) bool { return p.Knob == s.setting.Key }) {
			out = append(out, Fixed{Knob: s.setting.Key, Value: s.setting.format(s.value), From: s.from})
		}
	}
	return out
}

// Active reports which parameters are active at values: those without a
// condition, and those whose condition's parameter is active and takes one
// of the condition's choices.
func (t *Template) Active(values []float64) []bool {
	active := make([]bool, len(t.Params))
	for i, p := range t.Params {
		active[i] = p.When == nil || (active[p.When.Index] && slices.Contains(p.When.values, values[p.When.Index]))
	}
	return active
}

// Defaults returns the parameters' default values, NaN for a parameter
// whose condition the defaults do not meet.
func (t *Template) Defaults() []float64 {
	v := make([]float64, len(t.Params))
	for i, p := range t.Params {
		v[i] = p.Default
	}
	for i, on := range t.Active(v) {
		if !on {
			v[i] = math.NaN()
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
func (t *Template) Config(base cluster.Config, values []float64) (cluster.Config, error) {
	c, _, err := t.apply(base, values)
	return c, err
}

// apply builds and validates the configuration of values without checking
// that every active parameter has an effect.
func (t *Template) apply(base cluster.Config, values []float64) (cluster.Config, []bool, error) {
	c := base
	if len(values) != len(t.Params) {
		return c, nil, fmt.Errorf("template %s: %d parameter values for %d parameters", t.Name, len(values), len(t.Params))
	}
	for _, s := range t.mechanism {
		s.setting.set(&c, s.value)
	}
	active := t.Active(values)
	for i := range t.Params {
		p := &t.Params[i]
		if !active[i] {
			continue
		}
		if err := p.Check(values[i]); err != nil {
			return c, nil, fmt.Errorf("template %s: %v", t.Name, err)
		}
		v := values[i]
		if p.Kind == Categorical {
			v = p.choiceValues[int(v)]
		}
		p.setting.set(&c, v)
	}
	c, err := t.validate(c)
	return c, active, err
}

// validate runs the simulator's own checks on c.
func (t *Template) validate(c cluster.Config) (cluster.Config, error) {
	if err := CheckConfig(&c); err != nil {
		return c, fmt.Errorf("template %s: %v", t.Name, err)
	}
	return c, nil
}

// CheckConfig runs every check the simulator would make when building c,
// so that a bad configuration is reported before anything runs. A value
// the simulator rejects is an *errtext.Setting naming the setting's key;
// the caller that knows where the value came from (a flag, --set, a
// template parameter) says so in front of it.
func CheckConfig(c *cluster.Config) error {
	if c.Routing.Policy == "weighted" && c.Routing.Scorers != nil && len(c.Routing.Scorers) == 0 {
		return fmt.Errorf("every routing.weight.* is 0; the weighted policy needs a scorer with weight > 0")
	}
	if err := c.Validate(); err != nil {
		return err
	}
	if err := c.Routing.Validate(); err != nil {
		return inPart("routing", err)
	}
	if err := c.Priority.Validate(); err != nil {
		return err
	}
	if err := admit.Validate(c.Admission); err != nil {
		return inPart("admission", err)
	}
	return nil
}

// inPart prefixes an error that names no setting (an errtext.Setting
// names its own) with the part of the configuration it is about.
func inPart(part string, err error) error {
	var named *errtext.Setting
	if errors.As(err, &named) {
		return err
	}
	return fmt.Errorf("%s: %w", part, err)
}

// ParseParams reads "name=value" pairs (as given to --param) over the
// defaults. Errors are one line naming the parameter and what it accepts;
// the caller names the flag. A parameter given while its condition does
// not hold is an error: it would have no effect.
func (t *Template) ParseParams(pairs []string) ([]float64, error) {
	values := make([]float64, len(t.Params))
	for i, p := range t.Params {
		values[i] = p.Default
	}
	given := make([]bool, len(t.Params))
	for _, pair := range pairs {
		name, raw, ok := strings.Cut(pair, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("%q: want name=value", pair)
		}
		i := slices.IndexFunc(t.Params, func(p Param) bool { return p.Name == name })
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
	for i, on := range t.Active(values) {
		if on {
			continue
		}
		if given[i] {
			return nil, t.Params[i].inactiveError(t, values)
		}
		values[i] = math.NaN()
	}
	return values, nil
}

// inactiveError says why p is not active at values.
func (p *Param) inactiveError(t *Template, values []float64) error {
	w := p.When
	cond := &t.Params[w.Index]
	state := "inactive itself"
	if !math.IsNaN(values[w.Index]) {
		state = "it is " + cond.Format(values[w.Index])
	}
	return fmt.Errorf("%s: has no effect unless parameter %s is %s (%s)", p.Name, w.Param, orList(w.Choices), state)
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

// Check reports a value outside the parameter's space, naming the
// parameter and its range. NaN (inactive) is outside every space.
func (p *Param) Check(v float64) error {
	if p.Kind == Categorical {
		if !(v >= 0 && v < float64(len(p.Choices))) || v != math.Trunc(v) {
			return fmt.Errorf("%s: choice index %s out of range (choices: %s)", p.Name, formatNumber(v), strings.Join(p.Choices, ", "))
		}
		return nil
	}
	if math.IsNaN(v) || v < p.Low || v > p.High {
		return fmt.Errorf("%s=%s out of range %s", p.Name, formatNumber(v), p.RangeText())
	}
	if p.Kind == Int && v != math.Trunc(v) {
		return fmt.Errorf("%s=%s is not a whole number (range %s)", p.Name, formatNumber(v), p.RangeText())
	}
	return nil
}

// Parse reads a value as written on the command line: a number, or one of
// the choices.
func (p *Param) Parse(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if p.Kind == Categorical {
		if i := slices.Index(p.Choices, s); i >= 0 {
			return float64(i), nil
		}
		return 0, fmt.Errorf("%s=%s: not one of the choices %s", p.Name, s, p.RangeText())
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%s=%s: not a number (range %s)", p.Name, s, p.RangeText())
	}
	return v, p.Check(v)
}

// Format renders a value: the choice, a whole number, or a float; "" for
// NaN, an inactive parameter's value.
func (p *Param) Format(v float64) string {
	switch {
	case math.IsNaN(v):
		return ""
	case p.Kind == Categorical && v >= 0 && int(v) < len(p.Choices):
		return p.Choices[int(v)]
	case p.Kind == Int:
		return strconv.FormatInt(int64(v), 10)
	}
	return formatNumber(v)
}

// RangeText describes the space: "[low, high]" or "{a, b, c}".
func (p *Param) RangeText() string {
	if p.Kind == Categorical {
		return "{" + strings.Join(p.Choices, ", ") + "}"
	}
	return fmt.Sprintf("[%s, %s]", formatNumber(p.Low), formatNumber(p.High))
}
