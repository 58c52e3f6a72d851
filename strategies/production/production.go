package production

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"optimize/search"
	"optimize/simcore/cluster"
	"optimize/strategies/settings"
)

// Carried is how one setting's value in effect carries over to production.
type Carried struct {
	Setting *settings.Setting
	Value   string // the setting's value in effect
	// Production is the value production is given ("" nothing to write).
	Production string
	// Counterpart is the setting's, with Fidelity and Note those of the
	// value.
	settings.Counterpart
	// Via is the key of the setting that carries this one's value (its
	// Inherits, while equal), "" when it carries itself.
	Via string
}

// Blocks reports whether the value keeps an export from being exact.
func (c Carried) Blocks() bool {
	return c.Fidelity == settings.NoCounterpart || c.Fidelity == settings.Approximate
}

// Carry says how s's value in c carries over to production.
func Carry(s *settings.Setting, c *cluster.Config) Carried {
	value := s.Value(c)
	out := Carried{Setting: s, Value: value, Production: value, Counterpart: s.Production}
	if p := s.Production.Inherits; p != "" {
		if from, ok := settings.Lookup(p); ok && from.Value(c) == value {
			via := Carry(from, c)
			out.Fidelity, out.Via, out.Production = via.Fidelity, p, ""
			out.Note = "the same as " + p + ", which carries it"
			return out
		}
	}
	if s.Family() == settings.Scorers && value == "0" {
		out.Fidelity, out.Production, out.Note = settings.Exact, "", "not in the profile"
		return out
	}
	if !s.Production.Described() {
		out.Note = "no production counterpart described yet"
	}
	for _, v := range s.Production.Values {
		if v.Value == value {
			out.Production, out.Fidelity = v.Production, v.Fidelity
			if v.Note != "" {
				out.Note = v.Note
			}
			return out
		}
	}
	if spell := s.Production.Spell; spell != nil && value != "" {
		if name := spell(c, value); name != "" {
			out.Production = name
		}
	}
	if s.Kind == search.Categorical || value == "" {
		return out
	}
	n, err := strconv.ParseFloat(value, 64)
	if err != nil {
		return out
	}
	if limit := s.Production.Limit; limit != nil {
		if most, what, ok := limit(c); ok && n > most {
			out.Production, out.Fidelity = "", settings.WorldFact
			out.Note = fmt.Sprintf("%s cannot fit: %s; the simulated count is this world's (a calibration figure), not one to give vLLM, so %s is not written", value, what, s.Production.Name)
			return out
		}
	}
	if scale := s.Production.Scale; scale != nil {
		f, ok := scale(c)
		if !ok {
			out.Production, out.Fidelity = "", settings.NoCounterpart
			out.Note = "cannot convert to " + s.Production.Name + " without the model's KV size per token"
			return out
		}
		n *= f
	}
	n += s.Production.Offset
	if s.Production.Integer && n != math.Round(n) {
		n = math.Round(n)
		if out.Fidelity == settings.Exact {
			out.Fidelity = settings.Approximate
			out.Note = "rounded to " + search.FormatNumber(n) + ": " + s.Production.Name + " takes a whole number"
		}
	}
	out.Production = search.FormatNumber(n)
	return out
}

// importValue is the setting's value for production's text v, the inverse
// of Carry: a listed value's setting value, else the number divided by
// Scale (rounded for a whole-number setting). ok is false when v is not a
// value production can be given for this setting.
func importValue(s *settings.Setting, c *cluster.Config, v string) (string, bool) {
	match := func(f func(settings.ValueCounterpart) bool) (string, bool) {
		for _, vc := range s.Production.Values {
			if vc.Production == v && vc.Production != "" && f(vc) {
				return vc.Value, true
			}
		}
		return "", false
	}
	if value, ok := match(func(vc settings.ValueCounterpart) bool { return vc.Fidelity == settings.Exact }); ok {
		return value, true
	}
	if value, ok := match(func(vc settings.ValueCounterpart) bool { return vc.Fidelity == settings.Approximate }); ok {
		return value, true
	}
	if s.Kind == search.Categorical {
		// Production may spell a choice otherwise (a Hugging Face id's
		// capitals): the choice it names, whatever its case.
		if i := slices.IndexFunc(s.Choices, func(ch string) bool { return strings.EqualFold(ch, v) }); i >= 0 {
			return s.Choices[i], true
		}
		return v, true
	}
	if s.Production.Scale == nil && s.Production.Offset == 0 {
		return v, true
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return v, true // the setting's own parse reports it
	}
	n -= s.Production.Offset
	if s.Production.Scale != nil {
		f, ok := s.Production.Scale(c)
		if !ok || f == 0 {
			return "", false
		}
		n /= f
	}
	if s.Kind == search.Int {
		n = math.Round(n)
	}
	return search.FormatNumber(n), true
}

// CarriedSettings lists how every setting in effect in c (a resolved
// configuration) carries over, in SettingLines order.
func CarriedSettings(c *cluster.Config) []Carried {
	var out []Carried
	for _, l := range settings.Lines(c) {
		if l.Given() {
			out = append(out, Carry(l.Setting, c))
		}
	}
	return out
}

// ReproduceSets are the `KEY=VALUE` settings simulate needs with --set,
// beside the exported EndpointPickerConfig and vLLM arguments, to run c
// again: every setting in effect that the two files do not carry exactly
// (the world, what has no counterpart, what is approximated). An exact
// value with nothing to write is production's default, which is the
// standard configuration's, where simulate starts.
//
// The weighted profile is restated when the file does not carry it under
// its own names — a scorer approximated by an llm-d plugin, or one
// computing what a plugin of another name computes, imports as that
// plugin's scorer: each imported scorer the trial lacks at 0, then the
// trial's weights. A scorer already in the profile keeps its place and a
// new one goes last, so inOrder says whether the profile comes out in the
// trial's order, which fixes the float sums and so the exact ties; when
// it does not, the run equals the trial's up to the float rounding of the
// weighted sum.
func ReproduceSets(c *cluster.Config) (sets []string, inOrder bool) {
	sets, inOrder = reproduceSets(c)
	return append(sets, flowSets(c)...), inOrder
}

func reproduceSets(c *cluster.Config) (sets []string, inOrder bool) {
	var weights []*settings.Setting
	var values []string
	restate := false
	for _, cr := range CarriedSettings(c) {
		if cr.Via != "" {
			continue
		}
		if cr.Setting.Family() == settings.Scorers {
			if cr.Value != "0" {
				weights, values = append(weights, cr.Setting), append(values, cr.Value)
				restate = restate || cr.Fidelity != settings.Exact || cr.Name != cr.Setting.Item
			}
			continue
		}
		if cr.Fidelity != settings.Exact {
			sets = append(sets, cr.Setting.Key+"="+cr.Value)
		}
	}
	if !restate {
		return sets, true
	}
	// The profile the file imports: each weight's plugin as weightSetting
	// reads it back, in the trial's order, once.
	var profile []*settings.Setting
	for _, w := range weights {
		cr := Carry(w, c)
		if cr.System != settings.SystemLLMD || cr.Fidelity == settings.NoCounterpart {
			continue
		}
		if s, ok := weightSetting(cr.Name); ok && !slices.Contains(profile, s) {
			profile = append(profile, s)
		}
	}
	for _, s := range profile {
		if !slices.Contains(weights, s) {
			sets = append(sets, s.Key+"=0")
		}
	}
	var final []*settings.Setting
	for _, s := range profile {
		if slices.Contains(weights, s) {
			final = append(final, s)
		}
	}
	for i, w := range weights {
		sets = append(sets, w.Key+"="+values[i])
		if !slices.Contains(final, w) {
			final = append(final, w)
		}
	}
	return sets, slices.Equal(final, weights)
}

// restoreStandard gives every setting of ss that reset says to reset the
// standard configuration's value in c: what an imported production file
// leaves out is production's default, not what c held before.
func restoreStandard(c *cluster.Config, ss []*settings.Setting, reset func(*settings.Setting) bool) error {
	base, err := settings.StandardConfig()
	if err != nil {
		return err
	}
	for _, s := range ss {
		if reset(s) {
			s.Restore(c, &base)
		}
	}
	return nil
}
