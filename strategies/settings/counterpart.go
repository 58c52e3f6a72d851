package settings

import (
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
	// Offset is added after Scale: production = value × Scale + Offset
	// (a strict threshold given to a plugin that compares with ≥ is the
	// value + 1); import subtracts it first.
	Offset float64
	// Integer: production takes a whole number; a fractional value is
	// written rounded and counts as approximated.
	Integer bool
	// Inherits is the key of the setting whose value this one takes when
	// unset; while the two are equal, this one carries over as that one.
	Inherits string
	// Spell is how production names value in c, when not as the
	// simulator does (a model by its Hugging Face id); "" keeps the value.
	Spell func(c *cluster.Config, value string) string
	// Limit is the most production can be given in c (ok false: no
	// limit known) and what it is; a value above it is not written, and
	// carries over as the world, with the limit said.
	Limit func(c *cluster.Config) (max float64, what string, ok bool)
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

// LLMDObjective is the llm-d resource that gives requests a priority
// (InferenceObjective, spec.priority): priority.base.*'s counterpart.
const LLMDObjective = "InferenceObjective"
