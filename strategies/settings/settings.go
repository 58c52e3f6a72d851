package settings

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"optimize/search"
	"optimize/simcore/cluster"
)

// Setting is one simulator setting, declared once in the table of
// settings_table.go. Everything else reads it: the simulate flags and their
// help, template validation, `simulate --set`, `template settings`, ablation
// (by Component) and the inert-setting checks (by Active).
type Setting struct {
	// Key is the setting's name in templates and in `--set KEY=VALUE`.
	Key string
	// Flag is the simulate flag that sets it, BLIS's name where BLIS has
	// one. All of a family share one list-valued flag (per class:
	// `--slo-base critical=10,...`; per scorer: `--routing-scorers
	// prefix-affinity:3,...`; per coefficient: `--alpha-coeffs a,b,c`) and
	// Item names their element of it; family says which way (family.go).
	Flag, Item string
	family     Family
	// Kind is Float, Int or Categorical (a boolean is categorical false,
	// true); never log-float: the scale is a parameter's business.
	Kind      search.Kind
	Low, High float64  // numeric: the inclusive range the simulator accepts
	Choices   []string // categorical
	Unit      string
	Doc       string
	// Component is the mechanism group an ablation reverts as a whole.
	Component string
	// Active says when the setting has an effect given the others.
	Active Rule
	// Unset says what the setting means when no value is given, for
	// settings whose default is not a number (a per-class gate: no gate).
	Unset string
	// Production is the setting's counterpart in llm-d or vLLM
	// (production.go); the zero value is "none, not yet described".
	Production Counterpart
	// World is the setting's place among those that name the world a
	// configuration runs in (1 model, 2 GPU, 3 TP, 4 latency model), 0 for
	// the others: validate takes each as a flag to validate in another
	// world, in that order; robust studies vary the latency model.
	World int

	get  func(c *cluster.Config) (float64, bool) // the value in effect; false: unset
	set  func(c *cluster.Config, v float64)      // v: the number, or the index into Choices
	copy func(dst, src *cluster.Config)          // restore src's value, set or unset
}

// Components lists the components in table order.
func Components() []string {
	var out []string
	for _, s := range All() {
		if !slices.Contains(out, s.Component) {
			out = append(out, s.Component)
		}
	}
	return out
}

var (
	tableOnce sync.Once
	table     []*Setting
	standard  cluster.Config
	tableErr  error
)

// All is the table, sorted by key. The slice is shared: do not modify.
func All() []*Setting {
	tableOnce.Do(func() {
		table = settingsTable()
		slices.SortFunc(table, func(a, b *Setting) int { return strings.Compare(a.Key, b.Key) })
		standard, tableErr = Standard()
	})
	return table
}

// WorldSettings are the settings that name the world, in their World
// order.
func WorldSettings() []*Setting {
	var out []*Setting
	for _, s := range All() {
		if s.World > 0 {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b *Setting) int { return a.World - b.World })
	return out
}

// Lookup finds a setting by key.
func Lookup(key string) (*Setting, bool) {
	ks := All()
	i, ok := slices.BinarySearchFunc(ks, key, func(s *Setting, k string) int { return strings.Compare(s.Key, k) })
	if !ok {
		return nil, false
	}
	return ks[i], true
}

// Value reads the setting's value in effect in c, formatted; "" when unset.
func (s *Setting) Value(c *cluster.Config) string {
	v, ok := s.get(c)
	if !ok {
		return ""
	}
	return s.FormatNumber(v)
}

// Default is the setting's value in the standard configuration (the
// simulator's defaults with the default latency profile), or its Unset text.
func (s *Setting) Default() string {
	All()
	if tableErr != nil {
		return "?"
	}
	if v := s.Value(&standard); v != "" {
		return v
	}
	return s.Unset
}

// Set writes a value given as text (a number, or one of the choices) into c.
func (s *Setting) Set(c *cluster.Config, text string) error {
	v, err := s.ParseNumber(text)
	if err != nil {
		return err
	}
	s.set(c, v)
	return nil
}

// SetNumber writes a value in the setting's own numbers (a categorical's
// choice by its index) into c; CheckNumber checks it first.
func (s *Setting) SetNumber(c *cluster.Config, v float64) { s.set(c, v) }

// Restore copies the setting's value (or its absence) from src into dst.
func (s *Setting) Restore(dst, src *cluster.Config) { s.copy(dst, src) }

// Same reports whether a and b hold the same value of the setting.
func (s *Setting) Same(a, b *cluster.Config) bool {
	va, oka := s.get(a)
	vb, okb := s.get(b)
	return oka == okb && (!oka || va == vb)
}

// FlagText renders how the setting is given on the command line, e.g.
// "--scheduler", "--slo-base critical=V", "--routing-scorers queue-depth:W".
func (s *Setting) FlagText() string {
	switch {
	case s.Flag == "":
		return ""
	case s.family == Single:
		return "--" + s.Flag
	}
	return "--" + s.Flag + " " + s.family.element(s.Item)
}

// domain is the setting's accepted values as a search.Param, so that a
// setting's value is read and range-checked as a parameter's is.
func (s *Setting) domain() search.Param {
	return search.Param{Name: s.Key, Kind: s.Kind, Low: s.Low, High: s.High, Choices: s.Choices}
}

// parse reads one value as written in a template, a flag or --set: a
// number in range, or one of the choices (returned as its index, the
// setting's own encoding). The message is the same whichever of them it
// came from; callers prefix it with where it came from.
func (s *Setting) ParseNumber(text string) (float64, error) {
	v, err := s.domain().Parse(text)
	if err != nil {
		return 0, err
	}
	if s.Kind == search.Categorical {
		return float64(slices.Index(s.Choices, v.Choice)), nil
	}
	return v.Number, nil
}

// check reports a numeric value the setting does not accept.
// CheckNumber checks a value in the setting's own numbers (a categorical's
// choice by its index) against its range or choices.
func (s *Setting) CheckNumber(v float64) error { return s.domain().Check(search.Value{Number: v}) }

// ValuesText describes the accepted values, e.g. "whole numbers in [0, 512]".
func (s *Setting) ValuesText() string { return s.domain().AllowedText() }

// format renders a value: the choice, or the number.
func (s *Setting) FormatNumber(v float64) string {
	if s.Kind == search.Categorical {
		return s.Choices[int(v)]
	}
	return formatNumber(v)
}

// formatNumber is search.FormatNumber: whole numbers in full, anything
// else in the shortest form.
func formatNumber(v float64) string { return search.FormatNumber(v) }

// settingKeysHint lists the setting families compactly for an
// unknown-key error: per-class and per-scorer keys collapse to <class>
// and <scorer>.
func settingKeysHint() string {
	var names []string
	for _, s := range All() {
		n := s.Key
		if s.Item != "" {
			n = strings.TrimSuffix(n, s.Item) + "<" + s.family.Word() + ">"
		}
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	_, gpus := worldNames()
	return fmt.Sprintf("%s; <class>: %s; <scorer>: %s; <GPU>: %s",
		strings.Join(names, ", "), strings.Join(ClassNames, ", "), strings.Join(scorerNames(), ", "), strings.Join(gpus, ", "))
}

// Unknown is the one error for a key that is not in the table.
func Unknown(key string) error {
	return fmt.Errorf("unknown setting %q (settings: %s)", key, settingKeysHint())
}
