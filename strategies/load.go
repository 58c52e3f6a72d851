package strategies

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"optimize/simcore/errtext"
	"optimize/strategies/settings"
)

// The YAML layer: a template file becomes a rawTemplate, every key checked
// against the allowed ones and every value against its type, so that each
// mistake is reported with its field path. Meaning (settings, bounds, bases,
// metrics) is checked in resolve.go.

// Allowed keys, in the order the errors list them.
var (
	templateKeys = []string{"name", "description", "base", "workload", "mechanism", "parameters", "objectives", "primary", "constraints", "regimes", "sampler", "robust_regimes", "robust_worlds", "robust_aggregate", "robust_prune", "base_parameters", "deployable", "gpus"}
	// baseParameterModes are the values of base_parameters: what becomes of
	// the base template's parameters in a child. "freeze" (the default)
	// fixes each at its default; "search" keeps searching them, before the
	// child's own, so a child can reuse a whole search space and change
	// only the objectives and constraints.
	baseParameterModes = []string{"freeze", "search"}
	paramKeys          = []string{"name", "type", "low", "high", "choices", "default", "setting", "knob", "when"}
	objectiveKeys      = []string{"name", "metric", "direction"}
	constraintKeys     = []string{"metric", "min_ratio_to_baseline", "max_ratio_to_baseline", "min_delta_to_baseline", "min", "max"}
)

// rawTemplate is a template file as written. Optional numbers are pointers
// so that "absent" and "0" differ.
type rawTemplate struct {
	file                                       string
	name, description, base, workload, primary string
	sampler                                    string
	searchBase                                 bool
	mechanism                                  []rawSetting
	params                                     []rawParam
	objectives                                 []Objective
	constraints                                []rawConstraint
	regimes                                    []string
	robust                                     Robust
	// deployable: its studies search only what production carries
	// (Template.Deployable).
	deployable bool
	// gpus is the fixed GPU total (Template.GPUs), nil when not given.
	gpus *float64
	// Which inheritable sections the file sets itself.
	hasObjectives, hasConstraints, hasRegimes bool
}

type rawSetting struct {
	key, value string
	line       int
}

type rawParam struct {
	name, kind, setting string
	// settingField is the field that named the setting: setting, or knob
	// (its older spelling, still read).
	settingField string
	low, high    *float64
	choices      []string
	hasChoices   bool
	defaultValue *yaml.Node
	when         *rawWhen
	line         int
}

// rawWhen is a parameter's condition: {param: choice} or {param: [choices]}.
type rawWhen struct {
	param  string
	values []string
}

type rawConstraint struct {
	metric             string
	minRatio, maxRatio *float64
	minDelta           *float64
	minValue, maxValue *float64
	line               int
}

// parseTemplate reads one template file. It never panics: yaml.v3 has
// panicked on hostile input before, so a panic becomes an error.
func parseTemplate(file string, data []byte) (raw *rawTemplate, err error) {
	defer func() {
		if r := recover(); r != nil {
			raw, err = nil, errtext.New(file, "", "malformed YAML (%v)", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errtext.New(file, "", "empty file")
		}
		return nil, errtext.New(file, "", "%s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errtext.New(file, "", "only one YAML document is allowed")
	}
	if len(doc.Content) == 0 {
		return nil, errtext.New(file, "", "empty file")
	}
	p := parser{file: file}
	return p.template(doc.Content[0])
}

type parser struct{ file string }

func (p *parser) errorf(path string, n *yaml.Node, format string, args ...any) error {
	return errtext.New(p.file, path, "line %d: %s", n.Line, fmt.Sprintf(format, args...))
}

// mapping calls each for every key of mapping n in document order,
// rejecting keys outside allowed (when given) and repeated keys.
func (p *parser) mapping(n *yaml.Node, path string, allowed []string, each func(key string, v *yaml.Node, path string) error) error {
	n = settings.FollowAlias(n)
	if n.Kind != yaml.MappingNode {
		return p.errorf(path, n, "expected a mapping, got %s", errtext.Describe(n))
	}
	var seen []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := settings.FollowAlias(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return p.errorf(path, k, "keys must be plain names")
		}
		keyPath := errtext.Join(path, k.Value)
		if allowed != nil && !slices.Contains(allowed, k.Value) {
			return p.errorf(keyPath, k, "unknown key (allowed: %s)", strings.Join(allowed, ", "))
		}
		if slices.Contains(seen, k.Value) {
			return p.errorf(keyPath, k, "key given twice")
		}
		seen = append(seen, k.Value)
		if err := each(k.Value, settings.FollowAlias(v), keyPath); err != nil {
			return err
		}
	}
	return nil
}

// list calls each for every item of sequence n.
func (p *parser) list(n *yaml.Node, path string, each func(i int, item *yaml.Node, path string) error) error {
	n = settings.FollowAlias(n)
	if n.Kind != yaml.SequenceNode {
		return p.errorf(path, n, "expected a list, got %s", errtext.Describe(n))
	}
	for i, item := range n.Content {
		if err := each(i, settings.FollowAlias(item), fmt.Sprintf("%s[%d]", path, i)); err != nil {
			return err
		}
	}
	return nil
}

func (p *parser) scalar(n *yaml.Node, path string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", p.errorf(path, n, "expected a single value, got %s", errtext.Describe(n))
	}
	return n.Value, nil
}

func (p *parser) number(n *yaml.Node, path string) (*float64, error) {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
		return nil, p.errorf(path, n, "expected a number, got %s", errtext.Describe(n))
	}
	var v float64
	if err := n.Decode(&v); err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, p.errorf(path, n, "expected a finite number, got %s", errtext.Describe(n))
	}
	return &v, nil
}

func (p *parser) template(root *yaml.Node) (*rawTemplate, error) {
	t := &rawTemplate{file: p.file}
	err := p.mapping(root, "", templateKeys, func(key string, v *yaml.Node, path string) error {
		var err error
		switch key {
		case "name":
			t.name, err = p.scalar(v, path)
		case "description":
			t.description, err = p.scalar(v, path)
		case "base":
			t.base, err = p.scalar(v, path)
		case "workload":
			t.workload, err = p.scalar(v, path)
		case "primary":
			t.primary, err = p.scalar(v, path)
		case "sampler":
			t.sampler, err = p.scalar(v, path)
		case "base_parameters":
			var mode string
			if mode, err = p.scalar(v, path); err == nil && !slices.Contains(baseParameterModes, mode) {
				err = p.errorf(path, v, "%q is not a mode (allowed: %s)", mode, strings.Join(baseParameterModes, ", "))
			}
			t.searchBase = mode == "search"
		case "mechanism":
			err = p.mapping(v, path, nil, func(key string, v *yaml.Node, path string) error {
				value, err := p.scalar(v, path)
				t.mechanism = append(t.mechanism, rawSetting{key: key, value: value, line: v.Line})
				return err
			})
		case "parameters":
			err = p.list(v, path, func(_ int, item *yaml.Node, path string) error {
				param, err := p.param(item, path)
				t.params = append(t.params, param)
				return err
			})
		case "objectives":
			t.hasObjectives = true
			err = p.list(v, path, func(_ int, item *yaml.Node, path string) error {
				o, err := p.objective(item, path)
				t.objectives = append(t.objectives, o)
				return err
			})
		case "regimes":
			t.hasRegimes = true
			err = p.list(v, path, func(_ int, item *yaml.Node, path string) error {
				s, err := p.scalar(item, path)
				t.regimes = append(t.regimes, s)
				return err
			})
		case "robust_regimes", "robust_worlds":
			list := &t.robust.Regimes
			if key == "robust_worlds" {
				list = &t.robust.Worlds
			}
			err = p.list(v, path, func(_ int, item *yaml.Node, path string) error {
				s, err := p.scalar(item, path)
				*list = append(*list, s)
				return err
			})
		case "robust_aggregate":
			t.robust.Aggregate, err = p.scalar(v, path)
		case "robust_prune":
			var b string
			if b, err = p.scalar(v, path); err == nil {
				if t.robust.Prune, err = strconv.ParseBool(b); err != nil {
					err = p.errorf(path, v, "%q is not true or false", b)
				}
			}
		case "gpus":
			if t.gpus, err = p.number(v, path); err == nil && (*t.gpus < 1 || *t.gpus != math.Trunc(*t.gpus) || *t.gpus > 4096) {
				err = p.errorf(path, v, "the GPU total must be a whole number in [1, 4096], got %s", v.Value)
			}
		case "deployable":
			var b string
			if b, err = p.scalar(v, path); err == nil {
				if t.deployable, err = strconv.ParseBool(b); err != nil {
					err = p.errorf(path, v, "%q is not true or false", b)
				}
			}
		case "constraints":
			t.hasConstraints = true
			err = p.list(v, path, func(_ int, item *yaml.Node, path string) error {
				c, err := p.constraint(item, path)
				t.constraints = append(t.constraints, c)
				return err
			})
		}
		return err
	})
	return t, err
}

// settingFieldName is the field that named the parameter's setting, for
// errors about it.
func (r rawParam) settingFieldName() string {
	if r.settingField == "" {
		return "setting"
	}
	return r.settingField
}

func (p *parser) param(n *yaml.Node, path string) (rawParam, error) {
	r := rawParam{line: n.Line}
	err := p.mapping(n, path, paramKeys, func(key string, v *yaml.Node, path string) error {
		var err error
		switch key {
		case "name":
			r.name, err = p.scalar(v, path)
		case "type":
			r.kind, err = p.scalar(v, path)
		case "setting", "knob":
			if r.settingField != "" {
				return p.errorf(path, v, "the setting is given as %s too; give it once, as setting", r.settingField)
			}
			r.settingField = key
			r.setting, err = p.scalar(v, path)
		case "low":
			r.low, err = p.number(v, path)
		case "high":
			r.high, err = p.number(v, path)
		case "default":
			if _, err = p.scalar(v, path); err == nil {
				r.defaultValue = v
			}
		case "when":
			r.when, err = p.when(v, path)
		case "choices":
			r.hasChoices = true
			err = p.list(v, path, func(_ int, item *yaml.Node, path string) error {
				s, err := p.scalar(item, path)
				r.choices = append(r.choices, s)
				return err
			})
		}
		return err
	})
	return r, err
}

// when reads {param: choice} or {param: [choice, ...]}: exactly one key.
func (p *parser) when(n *yaml.Node, path string) (*rawWhen, error) {
	var w *rawWhen
	err := p.mapping(n, path, nil, func(key string, v *yaml.Node, path string) error {
		if w != nil {
			return p.errorf(path, v, "a condition names one parameter")
		}
		w = &rawWhen{param: key}
		if v.Kind == yaml.SequenceNode {
			return p.list(v, path, func(_ int, item *yaml.Node, path string) error {
				s, err := p.scalar(item, path)
				w.values = append(w.values, s)
				return err
			})
		}
		s, err := p.scalar(v, path)
		w.values = []string{s}
		return err
	})
	if err == nil && w == nil {
		return nil, p.errorf(path, n, "give one parameter and its choices, e.g. {priority_policy: slo-tiered}")
	}
	return w, err
}

func (p *parser) objective(n *yaml.Node, path string) (Objective, error) {
	var o Objective
	direction, directionPath, directionNode := "", errtext.Join(path, "direction"), n
	err := p.mapping(n, path, objectiveKeys, func(key string, v *yaml.Node, path string) error {
		var err error
		switch key {
		case "name":
			o.Name, err = p.scalar(v, path)
		case "metric":
			o.Metric, err = p.scalar(v, path)
		case "direction":
			directionNode = v
			direction, err = p.scalar(v, path)
		}
		return err
	})
	if err != nil {
		return o, err
	}
	switch direction {
	case "minimize":
		o.Minimize = true
	case "maximize":
	case "":
		return o, p.errorf(directionPath, directionNode, "required (allowed: minimize, maximize)")
	default:
		return o, p.errorf(directionPath, directionNode, "%q is not a direction (allowed: minimize, maximize)", direction)
	}
	return o, nil
}

func (p *parser) constraint(n *yaml.Node, path string) (rawConstraint, error) {
	c := rawConstraint{line: n.Line}
	err := p.mapping(n, path, constraintKeys, func(key string, v *yaml.Node, path string) error {
		var err error
		switch key {
		case "metric":
			c.metric, err = p.scalar(v, path)
		case "min_ratio_to_baseline":
			c.minRatio, err = p.number(v, path)
		case "max_ratio_to_baseline":
			c.maxRatio, err = p.number(v, path)
		case "min_delta_to_baseline":
			c.minDelta, err = p.number(v, path)
		case "min":
			c.minValue, err = p.number(v, path)
		case "max":
			c.maxValue, err = p.number(v, path)
		}
		return err
	})
	return c, err
}
