package strategies

import (
	"fmt"
	"strings"

	"optimize/search"
)

// Given is one parameter of an outside vector: its name and its value as
// written (a number, or a categorical's choice).
type Given struct {
	Name, Text string
}

// Pairs reads --param name=value flags (simulate, study enqueue) as
// given parameters, in order; the values are checked by the template
// (Vector, ParseParams).
func Pairs(pairs []string) ([]Given, error) {
	given := make([]Given, len(pairs))
	for i, pair := range pairs {
		name, raw, ok := strings.Cut(pair, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("%q: want name=value", pair)
		}
		given[i] = Given{Name: name, Text: raw}
	}
	return given, nil
}

// Vector reads a complete parameter vector from outside (optimize
// evaluate): unlike ParseParams, nothing takes its default. Every
// parameter active at the vector must be given and none inactive may be;
// errors are one line naming the parameter and what it accepts, the
// active parameters, or the condition that makes it inactive.
func (t *Template) Vector(given []Given) ([]search.Value, error) {
	values := make([]search.Value, len(t.Params))
	for i := range values {
		values[i] = search.Inactive()
	}
	have := make([]bool, len(t.Params))
	for _, g := range given {
		i := t.space.Index(g.Name)
		if i < 0 {
			return nil, fmt.Errorf("%s: template %s has no such parameter (parameters: %s)", g.Name, t.Name, t.paramNames())
		}
		if have[i] {
			return nil, fmt.Errorf("%s: given twice", g.Name)
		}
		v, err := t.Params[i].Parse(g.Text)
		if err != nil {
			return nil, err
		}
		values[i], have[i] = v, true
	}
	// A missing parameter first: a condition on it cannot be judged.
	active := t.space.Active(values)
	for i, on := range active {
		if on && !have[i] {
			return nil, fmt.Errorf("%s: missing (%s); give every active parameter: %s", t.Params[i].Name, t.Params[i].AllowedText(), t.activeNames(active))
		}
	}
	for i, on := range active {
		if !on && have[i] {
			return nil, t.inactiveError(i, values)
		}
	}
	return values, nil
}

// activeNames lists the parameters active marks.
func (t *Template) activeNames(active []bool) string {
	var names []string
	for i, on := range active {
		if on {
			names = append(names, t.Params[i].Name)
		}
	}
	return strings.Join(names, ", ")
}
