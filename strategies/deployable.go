package strategies

import (
	"fmt"
	"slices"
	"strings"

	"optimize/search"
	"optimize/strategies/settings"
)

// A deployable study (study create --deployable, or a template's
// deployable: true) searches only what production carries: the template
// ForProduction gives. Each of its runs is then simulated as its exported
// files carry it (production.AsDeployed), so that what it finds is what
// production gets.

// ForProduction is t restricted to the settings production carries —
// those with an exact or approximated llm-d or vLLM counterpart, or the
// world — by the settings table's production column
// (settings.Setting.Carries):
//
//   - a mechanism value production does not carry is left out: its
//     setting keeps the study's base value (the standard configuration's,
//     what production does by default);
//   - a parameter whose setting has no counterpart is left out of the
//     space, its setting likewise at the base value;
//   - a categorical parameter keeps the choices production carries (the
//     standard configuration's value, when it is one of them, as its
//     default); it is left out when none is left, and fixed to the one
//     left when one is;
//   - a parameter conditioned on a choice that is gone, or that no longer
//     has an effect once the rest is restricted, is left out.
//
// A template with nothing left to search is an error naming why.
func (t *Template) ForProduction() (*Template, error) {
	std := settings.CheckBase()
	c := *t
	c.Deployable = true
	c.mechanism = nil
	for _, f := range t.mechanism {
		if f.setting.Carries(f.setting.FormatNumber(f.value)) {
			c.mechanism = append(c.mechanism, f)
		}
	}
	var none, noChoice, one, conditioned, inert []string
	// fixedAt is the value a categorical left out of the space is at.
	fixedAt := map[string]string{}
	var params []TemplateParam
	for _, p := range t.Params {
		s := p.setting
		if p.When != nil {
			w := *p.When
			if v, gone := fixedAt[w.Param]; gone {
				if !slices.Contains(w.Choices, v) {
					conditioned = append(conditioned, p.Name)
					continue
				}
				p.When = nil
			} else {
				i := slices.IndexFunc(params, func(q TemplateParam) bool { return q.Name == w.Param })
				w.Choices = slices.DeleteFunc(slices.Clone(w.Choices), func(ch string) bool { return !slices.Contains(params[i].Choices, ch) })
				if len(w.Choices) == 0 {
					conditioned = append(conditioned, p.Name)
					continue
				}
				p.When = &w
			}
		}
		if p.Kind != search.Categorical {
			if s.Production.Fidelity == settings.NoCounterpart {
				none = append(none, p.Name)
				continue
			}
			params = append(params, p)
			continue
		}
		var choices []string
		var values []float64
		for j, ch := range p.Choices {
			if s == nil || s.Carries(ch) { // a switch's choices are the template's, not production's
				choices, values = append(choices, ch), append(values, p.choiceValues[j])
			}
		}
		switch len(choices) {
		case 0:
			noChoice = append(noChoice, p.Name)
			fixedAt[p.Name] = s.Value(&std)
			continue
		case 1:
			// Nothing to search: the one choice is fixed, as the
			// mechanism fixes a value.
			one = append(one, p.Name)
			fixedAt[p.Name] = choices[0]
			c.mechanism = put(c.mechanism, fixed{setting: s, value: values[0], from: t.Name})
			continue
		}
		p.Choices, p.choiceValues = choices, values
		if !slices.Contains(choices, p.Default.Choice) {
			p.Default = search.Value{Choice: choices[0]}
			if v := s.Value(&std); slices.Contains(choices, v) {
				p.Default = search.Value{Choice: v}
			}
		}
		params = append(params, p)
	}
	c.setParams(params)
	// What has no effect once the rest is restricted (a class's base
	// priority without a priority policy that reads it) goes too.
	for {
		dead, err := c.inertParams()
		if err != nil {
			return nil, fmt.Errorf("template %s restricted to what production carries: %v", t.Name, err)
		}
		if len(dead) == 0 {
			break
		}
		inert = append(inert, dead...)
		c.setParams(slices.DeleteFunc(slices.Clone(c.Params), func(p TemplateParam) bool { return slices.Contains(dead, p.Name) }))
	}
	// A switch no parameter left is conditioned on selects nothing: it goes
	// too.
	c.setParams(slices.DeleteFunc(slices.Clone(c.Params), func(p TemplateParam) bool {
		if p.Switch() && !slices.ContainsFunc(c.Params, func(q TemplateParam) bool { return q.When != nil && q.When.Param == p.Name }) {
			inert = append(inert, p.Name)
			return true
		}
		return false
	}))
	if len(c.Params) == 0 {
		return nil, fmt.Errorf("template %s has nothing left to search that production carries: %s", t.Name, leftOut(none, noChoice, one, conditioned, inert))
	}
	if err := c.space.Validate(); err != nil {
		return nil, fmt.Errorf("template %s restricted to what production carries: %v", t.Name, err)
	}
	if _, _, err := c.apply(settings.CheckBase(), c.Defaults()); err != nil {
		return nil, fmt.Errorf("template %s restricted to what production carries: its defaults: %v", t.Name, err)
	}
	return &c, nil
}

// setParams sets the parameters and the space that mirrors them.
func (t *Template) setParams(params []TemplateParam) {
	t.Params, t.space = params, make(search.Space, len(params))
	for i, p := range params {
		t.space[i] = p.Param
	}
}

// inertParams are the parameters whose setting has no effect at one of
// the template's probe points where they are active.
func (t *Template) inertParams() ([]string, error) {
	probes, err := t.probes()
	if err != nil {
		return nil, err
	}
	var dead []string
	for _, pr := range probes {
		c, active, err := t.apply(settings.CheckBase(), pr.values)
		if err != nil {
			return nil, fmt.Errorf("%v%s", err, t.probeText(pr))
		}
		for i, p := range t.Params {
			if active[i] && !p.Switch() && !p.setting.Active.Holds(&c) && !slices.Contains(dead, p.Name) {
				dead = append(dead, p.Name)
			}
		}
	}
	return dead, nil
}

// leftOut says why each parameter left out of a deployable space went.
func leftOut(none, noChoice, one, conditioned, inert []string) string {
	var parts []string
	add := func(names []string, why string) {
		if len(names) > 0 {
			parts = append(parts, strings.Join(names, ", ")+" "+why)
		}
	}
	add(none, "(no llm-d or vLLM counterpart)")
	add(noChoice, "(no choice with a counterpart)")
	add(one, "(one choice with a counterpart, fixed to it)")
	add(conditioned, "(conditioned on a choice production lacks)")
	add(inert, "(no effect once the settings production lacks take the standard values)")
	if len(parts) == 0 {
		return "it has no parameters"
	}
	return strings.Join(parts, "; ")
}
