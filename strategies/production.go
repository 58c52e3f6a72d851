package strategies

import (
	"math"
	"slices"
	"strconv"

	"optimize/search"
	"optimize/simcore/cluster"
)

// Fidelity says how faithfully a setting's value carries over to its
// production counterpart.
type Fidelity int

const (
	// NoCounterpart: nothing in llm-d or vLLM does this; Counterpart.Note
	// says what would have to be built.
	NoCounterpart Fidelity = iota
	// Exact: the counterpart computes what the simulator computes, so the
	// value exports and imports without change.
	Exact
	// Approximate: the counterpart does something close; Counterpart.Note
	// says how it differs.
	Approximate
	// WorldFact: not strategy but the world the strategy runs in — the GPU,
	// the replica count, measured step times, a price, the run's horizon
	// and latency targets. Production has it as hardware or measurement,
	// so nothing is exported and it never blocks exactness; simulate takes
	// it with --set to reproduce a trial.
	WorldFact
)

// String is the word MAPPING.md uses.
func (f Fidelity) String() string {
	switch f {
	case Exact:
		return "exact"
	case Approximate:
		return "approximated"
	case WorldFact:
		return "world"
	}
	return "no counterpart"
}

// The systems a setting's counterpart lives in.
const (
	SystemLLMD = "llm-d" // an llm-d Router (EPP) plugin parameter or profile weight
	SystemVLLM = "vllm"  // a vLLM engine argument
)

// What Counterpart.Param names for an llm-d counterpart, besides a
// plugin's JSON parameter.
const (
	// ParamWeight: the setting is the weight of plugin Name in the
	// scheduling profile.
	ParamWeight = "weight"
	// ParamType: the setting's value (through Values) is the type of the
	// plugin playing role Name ("picker", "admitter"); "" is none.
	ParamType = "type"
	// ParamProfile: the setting's value (through Values) is a scheduling
	// profile of that one scorer plugin with weight 1 and the default
	// picker; "" is the profile the ParamWeight settings make.
	ParamProfile = "profile"
)

// Counterpart is a setting's production counterpart, declared with the
// setting in the settings table: the llm-d Router plugin parameter or vLLM
// engine argument that does the same thing, and how exactly. The llm-d
// export, the --epp-config / --vllm-args import and MAPPING.md all read it.
type Counterpart struct {
	// System is SystemLLMD, SystemVLLM, or "" when there is none.
	System string
	// Name is the llm-d plugin type (e.g. "prefix-cache-scorer"), the role
	// of a ParamType setting, or the vLLM argument (e.g. "--max-num-seqs").
	Name string
	// Param is the llm-d plugin's JSON parameter, or ParamWeight,
	// ParamType or ParamProfile; empty for a vLLM argument.
	Param string
	// Fidelity is how faithfully the value carries over.
	Fidelity Fidelity
	// Note says how an approximation differs, or what would have to be
	// built when there is no counterpart.
	Note string
	// Values are the counterparts of particular values (a categorical
	// setting's choices, or a number such as 0 that production spells by
	// leaving the argument out); a value not listed takes the fields
	// above and is written as it is.
	Values []ValueCounterpart
	// Scale converts the setting's value to production's unit (value ×
	// Scale); nil is 1. Import divides and, for a whole-number setting,
	// rounds.
	Scale func(c *cluster.Config) (float64, bool)
	// Integer: production takes a whole number; a fractional value is
	// written rounded and counts as approximated.
	Integer bool
	// Inherits is the key of the setting whose value this one takes when
	// unset; while the two are equal, this one carries over as that one.
	Inherits string
}

// ValueCounterpart is the counterpart of one value of a setting.
type ValueCounterpart struct {
	Value string // the setting's value, as Setting.Value writes it
	// Production is what production is given: a vLLM argument's value, a
	// plugin type; "" is nothing to write (production's own default).
	Production string
	Fidelity   Fidelity
	Note       string
}

// production sets the setting's production counterpart.
func (s *Setting) production(c Counterpart) *Setting {
	s.Production = c
	return s
}

// productionAll sets the counterpart of a family.
func productionAll(c Counterpart, ss []*Setting) []*Setting {
	for _, s := range ss {
		s.Production = c
	}
	return ss
}

// simulationOnly is the counterpart of a setting that describes the world
// or the run, not the strategy.
func simulationOnly(note string) Counterpart { return Counterpart{Fidelity: WorldFact, Note: note} }

// none is the counterpart of a strategy setting nothing in production
// does; note says what would have to be built.
func none(note string) Counterpart { return Counterpart{Fidelity: NoCounterpart, Note: note} }

func vllm(arg string, f Fidelity, note string) Counterpart {
	return Counterpart{System: SystemVLLM, Name: arg, Fidelity: f, Note: note}
}

// Carried is how one setting's value in effect carries over to production.
type Carried struct {
	Setting *Setting
	Value   string // the setting's value in effect
	// Production is the value production is given ("" nothing to write).
	Production string
	// Counterpart is the setting's, with Fidelity and Note those of the
	// value.
	Counterpart
	// Via is the key of the setting that carries this one's value (its
	// Inherits, while equal), "" when it carries itself.
	Via string
}

// Blocks reports whether the value keeps an export from being exact.
func (c Carried) Blocks() bool { return c.Fidelity == NoCounterpart || c.Fidelity == Approximate }

// Carry says how s's value in c carries over to production.
func (s *Setting) Carry(c *cluster.Config) Carried {
	value := s.Value(c)
	out := Carried{Setting: s, Value: value, Production: value, Counterpart: s.Production}
	if p := s.Production.Inherits; p != "" {
		if from, ok := LookupSetting(p); ok && from.Value(c) == value {
			via := from.Carry(c)
			out.Fidelity, out.Via, out.Production = via.Fidelity, p, ""
			out.Note = "the same as " + p + ", which carries it"
			return out
		}
	}
	if s.family == Scorers && value == "0" {
		out.Fidelity, out.Production, out.Note = Exact, "", "not in the profile"
		return out
	}
	if !described(s.Production) {
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
	if s.Kind == search.Categorical || value == "" {
		return out
	}
	n, err := strconv.ParseFloat(value, 64)
	if err != nil {
		return out
	}
	if scale := s.Production.Scale; scale != nil {
		f, ok := scale(c)
		if !ok {
			out.Production, out.Fidelity = "", NoCounterpart
			out.Note = "cannot convert to " + s.Production.Name + " without the model's KV size per token"
			return out
		}
		n *= f
	}
	if s.Production.Integer && n != math.Round(n) {
		n = math.Round(n)
		if out.Fidelity == Exact {
			out.Fidelity = Approximate
			out.Note = "rounded to " + formatNumber(n) + ": " + s.Production.Name + " takes a whole number"
		}
	}
	out.Production = formatNumber(n)
	return out
}

// importValue is the setting's value for production's text v, the inverse
// of Carry: a listed value's setting value, else the number divided by
// Scale (rounded for a whole-number setting). ok is false when v is not a
// value production can be given for this setting.
func (s *Setting) importValue(c *cluster.Config, v string) (string, bool) {
	match := func(f func(ValueCounterpart) bool) (string, bool) {
		for _, vc := range s.Production.Values {
			if vc.Production == v && vc.Production != "" && f(vc) {
				return vc.Value, true
			}
		}
		return "", false
	}
	if value, ok := match(func(vc ValueCounterpart) bool { return vc.Fidelity == Exact }); ok {
		return value, true
	}
	if value, ok := match(func(vc ValueCounterpart) bool { return vc.Fidelity == Approximate }); ok {
		return value, true
	}
	if s.Kind == search.Categorical || s.Production.Scale == nil {
		return v, true
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return v, true // the setting's own parse reports it
	}
	f, ok := s.Production.Scale(c)
	if !ok || f == 0 {
		return "", false
	}
	n /= f
	if s.Kind == search.Int {
		n = math.Round(n)
	}
	return formatNumber(n), true
}

// CarriedSettings lists how every setting in effect in c (a resolved
// configuration) carries over, in SettingLines order.
func CarriedSettings(c *cluster.Config) []Carried {
	var out []Carried
	for _, l := range SettingLines(c) {
		if l.Given() {
			out = append(out, l.Setting.Carry(c))
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
	var weights []*Setting
	var values []string
	restate := false
	for _, cr := range CarriedSettings(c) {
		if cr.Via != "" {
			continue
		}
		if cr.Setting.family == Scorers {
			if cr.Value != "0" {
				weights, values = append(weights, cr.Setting), append(values, cr.Value)
				restate = restate || cr.Fidelity != Exact || cr.Name != cr.Setting.Item
			}
			continue
		}
		if cr.Fidelity != Exact {
			sets = append(sets, cr.Setting.Key+"="+cr.Value)
		}
	}
	if !restate {
		return sets, true
	}
	// The profile the file imports: each weight's plugin as weightSetting
	// reads it back, in the trial's order, once.
	var profile []*Setting
	for _, w := range weights {
		cr := w.Carry(c)
		if cr.System != SystemLLMD || cr.Fidelity == NoCounterpart {
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
	var final []*Setting
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
