package settings

import (
	"fmt"
	"slices"
	"strings"

	"optimize/simcore/cluster"
)

// Rule says when a setting has an effect given the other settings. The
// zero Rule always holds. Rules are built from the settings they read, so
// their text names those settings by key and their state reports the
// values that fail them.
type Rule struct {
	// Text completes "has no effect unless …", e.g. "priority.policy is
	// slo-tiered or slo-adaptive"; for a rule that never holds it is the
	// reason instead.
	Text  string
	never bool
	// subject is the one setting a primitive rule reads; its state then
	// reads "it is …" in messages.
	subject string
	// either marks an anyOf, whose text needs brackets inside an allOf.
	either bool
	holds  func(c *cluster.Config) bool
	// state describes what fails the rule in c, e.g. "it is constant".
	state func(c *cluster.Config) string
}

// Holds reports whether a setting under this rule has an effect in c.
func (r Rule) Holds(c *cluster.Config) bool {
	return !r.never && (r.holds == nil || r.holds(c))
}

// Always reports whether the rule holds whatever the other settings are.
func (r Rule) Always() bool { return !r.never && r.holds == nil }

// Describe renders the rule for listings: "always", "never: …", or the
// condition.
func (r Rule) Describe() string {
	switch {
	case r.never:
		return "never: " + r.Text
	case r.holds == nil:
		return "always"
	}
	return r.Text
}

// InertError is the one message for a setting given where it has no
// effect, whichever way it was given: source is "slo-x.yaml: parameter
// age_w", "--slo-age-weight", "--set priority.age_weight_per_ms=0.05".
func InertError(source string, s *Setting, c *cluster.Config) error {
	if s.Active.never {
		return fmt.Errorf("%s sets %s, which has no effect: %s", source, s.Key, s.Active.Text)
	}
	state := s.Active.state(c)
	if subj := s.Active.subject; subj != "" {
		state = strings.Replace(state, subj+" is ", "it is ", 1)
	}
	return fmt.Errorf("%s sets %s, which has no effect unless %s (%s)", source, s.Key, s.Active.Text, state)
}

// CheckGiven is the one check of a setting a user gave (source says how,
// as for InertError) in c: it must have an effect there, unless it
// restates its default — the value in effect in c had it not been given,
// which is before's value read with c's other settings (so a default that
// follows others, as latency.model's or kv.total_blocks' does, is read in
// the world c runs in). Restating a default changes nothing, so it is never
// an error (BLIS users write defaults out: --priority-policy constant beside
// --scheduler fcfs); an inert value that is not the default is.
//
// A setting of a family that shares one flag is read with its family: the
// flag restates its default only if every member keeps the value it would
// have without the flag (--routing-scorers queue-depth:2 drops the other
// default scorers, so it does not restate the default profile).
func CheckGiven(source string, s *Setting, c, before *cluster.Config) error {
	if s.Active.Holds(c) {
		return nil
	}
	family := []*Setting{s}
	if s.Item != "" {
		family = slices.DeleteFunc(slices.Clone(All()), func(m *Setting) bool { return m.Flag != s.Flag })
	}
	without := *c
	for _, m := range family {
		m.Restore(&without, before)
	}
	if _, err := without.Resolve(); err == nil && !slices.ContainsFunc(family, func(m *Setting) bool { return !m.Same(&without, c) }) {
		return nil
	}
	return InertError(source, s, c)
}

// oneOf holds while setting s (categorical) takes one of values.
func oneOf(s *Setting, values ...string) Rule {
	for _, v := range values {
		if !slices.Contains(s.Choices, v) {
			panic(fmt.Sprintf("settings table: rule on %s names %q, not one of its choices", s.Key, v))
		}
	}
	return Rule{
		Text:    s.Key + " is " + OrList(values),
		subject: s.Key,
		holds:   func(c *cluster.Config) bool { return slices.Contains(values, s.Value(c)) },
		state:   func(c *cluster.Config) string { return s.Key + " is " + s.Value(c) },
	}
}

// positive holds while numeric setting s is above 0.
func positive(s *Setting) Rule {
	return Rule{
		Text:    s.Key + " > 0",
		subject: s.Key,
		holds: func(c *cluster.Config) bool {
			v, ok := s.get(c)
			return ok && v > 0
		},
		state: func(c *cluster.Config) string { return s.Key + " is " + orUnset(s.Value(c)) },
	}
}

// anyPositive holds while at least one of ss is above 0 (scorer weights:
// a scorer is in the profile exactly when its weight is).
func anyPositive(ss ...*Setting) Rule {
	keys := make([]string, len(ss))
	for i, s := range ss {
		keys[i] = s.Key
	}
	if len(ss) == 1 {
		return positive(ss[0])
	}
	r := Rule{Text: OrList(keys) + " > 0", state: func(*cluster.Config) string {
		return strings.Join(keys, " and ") + " are 0"
	}}
	r.holds = func(c *cluster.Config) bool {
		return slices.ContainsFunc(ss, func(s *Setting) bool { return positive(s).Holds(c) })
	}
	return r
}

// allOf holds while every rule does; its state is the first failing one's.
func allOf(rules ...Rule) Rule {
	texts := make([]string, len(rules))
	for i, r := range rules {
		texts[i] = r.Text
		if r.either {
			texts[i] = "(" + r.Text + ")"
		}
	}
	return Rule{
		Text: strings.Join(texts, " and "),
		holds: func(c *cluster.Config) bool {
			return !slices.ContainsFunc(rules, func(r Rule) bool { return !r.Holds(c) })
		},
		state: func(c *cluster.Config) string {
			for _, r := range rules {
				if !r.Holds(c) {
					return r.state(c)
				}
			}
			return ""
		},
	}
}

// anyOf holds while at least one rule does.
func anyOf(rules ...Rule) Rule {
	texts := make([]string, len(rules))
	for i, r := range rules {
		texts[i] = r.Text
	}
	return Rule{
		Text:   strings.Join(texts, " or "),
		either: true,
		holds: func(c *cluster.Config) bool {
			return slices.ContainsFunc(rules, func(r Rule) bool { return r.Holds(c) })
		},
		state: func(c *cluster.Config) string {
			states := make([]string, len(rules))
			for i, r := range rules {
				states[i] = r.state(c)
			}
			return strings.Join(states, "; ")
		},
	}
}

// never is the rule of a setting that has no effect in this simulator.
func never(reason string) Rule { return Rule{Text: reason, never: true} }

// OrList joins "a", "a or b", "a, b or c".
func OrList(items []string) string {
	if len(items) <= 1 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

func orUnset(v string) string {
	if v == "" {
		return "unset"
	}
	return v
}
