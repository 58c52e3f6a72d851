// Package strategies turns strategy templates into simulator configurations.
//
// A template (templates/strategies/*.yaml) names a mechanism — knob values
// that do not vary — and a parameter space: each parameter tunes one knob
// within bounds. Template.Config applies the mechanism, then a parameter
// vector, to a base cluster.Config through the typed setters of the knob
// table (knobs.go); nothing in that path looks names up. Loading (load.go,
// resolve.go) rejects anything malformed with a one-line error naming the
// file, the field and what is allowed; the Registry (registry.go) holds the
// built-in and user templates; Metric (metric.go) reads objective and
// constraint values out of a run's summary.
package strategies

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"optimize/simcore/admit"
	"optimize/simcore/cluster"
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
// itself, or for a categorical parameter the index into Choices. The same
// spec drives sampling, validation and export columns.
type Param struct {
	Name      string
	Kind      Kind
	Low, High float64  // numeric kinds
	Choices   []string // categorical
	Default   float64  // categorical: index into Choices
	Knob      string

	knob *Knob
	// choiceValues are the knob values of Choices (categorical only), so
	// that applying a choice is an index, not a parse.
	choiceValues []float64
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

// Setting is one resolved mechanism value, for display.
type Setting struct {
	Knob, Value string
	From        string // the template that set it (this one or a base)
}

// setting is one resolved mechanism value, ready to apply.
type setting struct {
	knob  *Knob
	value float64 // number, or index into knob.Choices
	from  string
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

	mechanism []setting // inherited first, one entry per knob
}

// Mechanism returns the fixed knob values, inherited ones first. Knobs a
// parameter tunes are left out (an inherited value of theirs is applied
// but then always overridden).
func (t *Template) Mechanism() []Setting {
	out := make([]Setting, 0, len(t.mechanism))
	for _, s := range t.mechanism {
		if !slices.ContainsFunc(t.Params, func(p Param) bool { return p.Knob == s.knob.Name }) {
			out = append(out, Setting{Knob: s.knob.Name, Value: s.knob.format(s.value), From: s.from})
		}
	}
	return out
}

// Defaults returns the parameters' default values.
func (t *Template) Defaults() []float64 {
	v := make([]float64, len(t.Params))
	for i, p := range t.Params {
		v[i] = p.Default
	}
	return v
}

// Config applies the mechanism, then values (aligned with Params), to base
// and validates the result. base is not modified. Errors name the
// parameter and its allowed range.
func (t *Template) Config(base cluster.Config, values []float64) (cluster.Config, error) {
	c := base
	if len(values) != len(t.Params) {
		return c, fmt.Errorf("template %s: %d parameter values for %d parameters", t.Name, len(values), len(t.Params))
	}
	for _, s := range t.mechanism {
		s.knob.set(&c, s.value)
	}
	for i := range t.Params {
		p := &t.Params[i]
		if err := p.Check(values[i]); err != nil {
			return c, fmt.Errorf("template %s: %v", t.Name, err)
		}
		v := values[i]
		if p.Kind == Categorical {
			v = p.choiceValues[int(v)]
		}
		p.knob.set(&c, v)
	}
	if c.Routing.Policy == "weighted" && c.Routing.Scorers != nil && len(c.Routing.Scorers) == 0 {
		return c, fmt.Errorf("template %s: every routing.weight.* is 0; the weighted policy needs a scorer with weight > 0", t.Name)
	}
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("template %s: %v", t.Name, err)
	}
	if err := c.Routing.Validate(); err != nil {
		return c, fmt.Errorf("template %s: routing: %v", t.Name, err)
	}
	if err := c.Priority.Validate(); err != nil {
		return c, fmt.Errorf("template %s: %v", t.Name, err)
	}
	if _, err := admit.New(c.Admission); err != nil {
		return c, fmt.Errorf("template %s: admission: %v", t.Name, err)
	}
	return c, nil
}

// ParseParams reads "name=value" pairs (as given to --param) over the
// defaults. Errors are one line naming the parameter and what it accepts;
// the caller names the flag.
func (t *Template) ParseParams(pairs []string) ([]float64, error) {
	values := t.Defaults()
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
	return values, nil
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
// parameter and its range.
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

// Format renders a value: the choice, a whole number, or a float.
func (p *Param) Format(v float64) string {
	switch {
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
