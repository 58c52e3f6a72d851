package strategies

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
)

// The systems a setting's counterpart lives in.
const (
	SystemLLMD = "llm-d" // an llm-d Router (EPP) plugin parameter or profile weight
	SystemVLLM = "vllm"  // a vLLM engine argument
)

// Counterpart is a setting's production counterpart, declared with the
// setting in the settings table: the llm-d Router plugin parameter or vLLM
// engine argument that does the same thing, and how exactly. The llm-d
// export, the --epp-config / --vllm-args import and MAPPING.md all read it.
type Counterpart struct {
	// System is SystemLLMD, SystemVLLM, or "" when there is none.
	System string
	// Name is the llm-d plugin type (e.g. "prefix-cache-scorer") or the vLLM
	// argument (e.g. "--max-num-seqs").
	Name string
	// Param is the llm-d plugin's JSON parameter, "weight" for the plugin's
	// weight in the scheduling profile; empty for a vLLM argument.
	Param string
	// Fidelity is how faithfully the value carries over.
	Fidelity Fidelity
	// Note says how an approximation differs, or what would have to be
	// built when there is no counterpart.
	Note string
}

// production sets the setting's production counterpart.
func (s *Setting) production(c Counterpart) *Setting {
	s.Production = c
	return s
}
