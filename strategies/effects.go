package strategies

import (
	"fmt"
	"slices"
	"strings"

	"optimize/search"
	"optimize/simcore/errtext"
	"optimize/strategies/settings"
)

// maxProbes bounds the points checkEffects evaluates: every combination of
// the categorical parameters' choices, each with the numeric parameters at
// their defaults and one at a time at either end of its range.
const maxProbes = 1 << 16

// probe is one point of a template's space that load-time checks evaluate.
type probe struct {
	values []search.Value
	// extreme is the numeric parameter moved to an end of its range, or -1.
	extreme int
}

// checkEffects rejects a template that tunes or fixes a setting where it
// has no effect. Every active parameter's setting must have an effect at
// every probe (a parameter that matters only under some choice of another
// declares that with when:), and every setting this template's own
// mechanism fixes must have an effect at one probe at least.
func checkEffects(t *Template) error {
	probes, err := t.probes()
	if err != nil {
		return errtext.New(t.File, "parameters", "%v", err)
	}
	ownUsed := make([]bool, len(t.mechanism))
	firstFail := make([]string, len(t.mechanism))
	for _, pr := range probes {
		c, active, err := t.apply(settings.CheckBase(), pr.values)
		if err != nil {
			return errtext.New(t.File, "parameters", "%v%s", err, t.probeText(pr))
		}
		for i, p := range t.Params {
			if active[i] && !p.Switch() && !p.setting.Active.Holds(&c) {
				return errtext.New(t.File, "", "%v%s", settings.InertError("parameter "+p.Name, p.setting, &c), t.probeText(pr))
			}
		}
		for j, f := range t.mechanism {
			if f.from != t.Name || t.tunes(f.setting) {
				continue
			}
			if f.setting.Active.Holds(&c) {
				ownUsed[j] = true
			} else if firstFail[j] == "" {
				firstFail[j] = settings.InertError("mechanism", f.setting, &c).Error()
			}
		}
	}
	for j, f := range t.mechanism {
		if f.from == t.Name && !t.tunes(f.setting) && !ownUsed[j] {
			return errtext.New(t.File, "", "%s", firstFail[j])
		}
	}
	return nil
}

func (t *Template) tunes(s *settings.Setting) bool {
	for _, p := range t.Params {
		if p.setting == s {
			return true
		}
	}
	return false
}

// probes lists the points checkEffects evaluates.
func (t *Template) probes() ([]probe, error) {
	combos := [][]search.Value{make([]search.Value, len(t.Params))}
	for i := range combos[0] {
		combos[0][i] = t.Params[i].Default
	}
	for i, p := range t.Params {
		if p.Kind != search.Categorical {
			continue
		}
		next := make([][]search.Value, 0, len(combos)*len(p.Choices))
		for _, c := range combos {
			for _, choice := range p.Choices {
				v := slices.Clone(c)
				v[i] = search.Value{Choice: choice}
				next = append(next, v)
			}
		}
		if len(next) > maxProbes {
			return nil, fmt.Errorf("more than %d combinations of categorical choices to check", maxProbes)
		}
		combos = next
	}
	var out []probe
	for _, c := range combos {
		for i, on := range t.space.Active(c) {
			if !on {
				c[i] = search.Inactive()
			}
		}
		out = append(out, probe{values: c, extreme: -1})
		for i, p := range t.Params {
			if p.Kind == search.Categorical || c[i].Absent() {
				continue
			}
			for _, end := range []float64{p.Low, p.High} {
				v := slices.Clone(c)
				v[i] = search.Value{Number: end}
				out = append(out, probe{values: v, extreme: i})
			}
		}
		if len(out) > maxProbes {
			return nil, fmt.Errorf("more than %d points to check", maxProbes)
		}
	}
	return out, nil
}

// probeText names what a probe changes from the defaults: " when
// priority_policy=constant, age_w=0.0001 (its low end)"; "" at the defaults.
func (t *Template) probeText(pr probe) string {
	var parts []string
	for i, p := range t.Params {
		v := pr.values[i]
		switch {
		case v.Absent():
		case i == pr.extreme:
			end := "high"
			if v.Number == p.Low {
				end = "low"
			}
			parts = append(parts, fmt.Sprintf("%s=%s (its %s end)", p.Name, p.Format(v), end))
		case p.Kind == search.Categorical && v != p.Default:
			parts = append(parts, p.Name+"="+p.Format(v))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " when " + strings.Join(parts, ", ")
}
