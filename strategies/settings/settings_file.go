package settings

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"optimize/search"
	"optimize/simcore/cluster"
	"optimize/simcore/errtext"
	"optimize/simcore/route"
)

// A configuration as data: every setting of the table as one `key: value`
// line of YAML (WriteFile), read back onto a configuration by
// ApplyFile (`simulate --settings FILE`). Values are in the setting's
// own text form (Setting.Value: the choice, or the number in the shortest
// form that reads back as the same float64), so reading a file back gives
// the configuration it was written from.
//
// Only the settings that have an effect in the configuration are lines;
// every other one is a comment saying why it has none, and a per-class
// setting left unset is a comment saying what unset means. That keeps the
// inert-setting rule as it is everywhere else (a setting given where it
// has no effect is an error, in a file as for a flag): a setting without
// effect may hold any value in the configuration it was written from (an
// inherited mechanism value, a parameter left without effect by others at
// their ends), so listing it would make the file fail to load, and
// leaving it out changes nothing the simulator computes. The routing.weight.*
// lines are the weighted profile in its order, as `--routing-scorers`
// gives it: the order fixes the float sums and so the ties.

// Line is one setting of a configuration as WriteFile writes it.
type Line struct {
	Setting *Setting
	// Value is the value in effect (Setting.Value), "" when unset.
	Value string
	// Inert says why the setting has no effect in the configuration, ""
	// when it has one.
	Inert string
}

// Given reports whether the line is a `key: value` line (not a comment).
func (l Line) Given() bool { return l.Inert == "" && l.Value != "" }

// Text is the line as the file holds it.
func (l Line) Text() string {
	key := l.Setting.Key
	switch {
	case l.Inert != "":
		return fmt.Sprintf("# %s: %s  (%s)", key, orUnset(l.Value), l.Inert)
	case l.Value == "":
		unset := "unset"
		if l.Setting.Unset != "" {
			unset += " (" + l.Setting.Unset + ")"
		}
		return fmt.Sprintf("# %s: %s", key, unset)
	}
	return key + ": " + yamlScalar(l.Setting, l.Value)
}

// Lines lists every setting of the table with its value in c, a
// resolved configuration (Template.Config and CheckConfig resolve), in
// key order except that the routing.weight.* family stands together in
// the weighted profile's order, the scorers outside it after in key order.
func Lines(c *cluster.Config) []Line {
	var out []Line
	weights := false
	for _, s := range All() {
		if s.family == Scorers {
			if !weights {
				weights = true
				for _, w := range profileOrder(c) {
					out = append(out, settingLine(w, c))
				}
			}
			continue
		}
		out = append(out, settingLine(s, c))
	}
	return out
}

// Map is the settings that have an effect in c with their value,
// by key: the `key: value` lines of WriteFile.
func Map(c *cluster.Config) map[string]string {
	out := map[string]string{}
	for _, l := range Lines(c) {
		if l.Given() {
			out[l.Setting.Key] = l.Value
		}
	}
	return out
}

// WriteFile writes Lines(c), one per line.
func WriteFile(w io.Writer, c *cluster.Config) error {
	var b strings.Builder
	for _, l := range Lines(c) {
		b.WriteString(l.Text())
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// SettingsFileNote says what a settings file holds, for its header.
const SettingsFileNote = "Every setting of the settings table: a `key: value` line for each that has an effect; a comment for each that has none (and why) or that is left unset (and what that means). The routing.weight.* lines are the weighted profile in its order."

// WeightPrefix starts the key of every scorer's weight (the Scorers
// family): routing.weight.<scorer>.
const WeightPrefix = "routing.weight."

func settingLine(s *Setting, c *cluster.Config) Line {
	l := Line{Setting: s, Value: s.Value(c)}
	if !s.Active.Holds(c) {
		l.Inert = "no effect unless " + s.Active.Text
		if s.Active.never {
			l.Inert = "no effect: " + s.Active.Text
		}
	}
	return l
}

// profileOrder is the routing.weight.* settings: the weighted profile's
// scorers in its order, then the others in key order.
func profileOrder(c *cluster.Config) []*Setting {
	list := c.Routing.Scorers
	if list == nil {
		list = c.DefaultScorers()
	}
	var out []*Setting
	for _, sw := range list {
		if s, ok := Lookup(WeightPrefix + sw.Name); ok && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, s := range All() {
		if s.family == Scorers && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// yamlScalar writes value so that YAML reads it back as the same text: a
// number or a boolean plainly, a choice quoted where YAML would read it
// as something else.
func yamlScalar(s *Setting, value string) string {
	if s.Kind != search.Categorical || slices.Equal(s.Choices, []string{"false", "true"}) {
		return value
	}
	out, err := yaml.Marshal(value)
	if err != nil {
		return value
	}
	return strings.TrimSuffix(string(out), "\n")
}

// Given is one setting a settings file gives, and its line.
type Given struct {
	Setting *Setting
	Line    int
}

// ApplyFile reads a settings file (as WriteFile writes it, or by
// hand: any `key: value` lines of the table's keys) onto c, in the order
// of its lines, and checks the result: c resolved in cat (the built-in
// world data, plus a user's model or GPU files) must be valid, and every
// setting the file gives must have an effect in it or restate the value it
// has anyway (CheckGiven: the rule flags follow). The routing.weight.*
// lines, if any, are the whole weighted profile in their order, as
// `--routing-scorers` gives it: a scorer not listed has weight 0. Errors
// are one line naming the file, the line and the key, with the words
// --set and templates use; c is left as far as the file got.
func ApplyFile(file string, data []byte, c *cluster.Config) ([]Given, error) {
	before := *c
	given, err := readSettings(file, data, c)
	if err != nil {
		return nil, err
	}
	return given, checkApplied(file, given, c, before)
}

// checkApplied checks settings a file gave (c after, before the file):
// each has an effect or restates its default, and c is valid.
func checkApplied(file string, given []Given, c *cluster.Config, before cluster.Config) error {
	check := *c
	// Each setting's effect is read before the configuration is checked
	// (reading one never fails), but a bad value is the error reported
	// first: it is what the user must mend.
	var inert error
	for _, g := range given {
		if inert = CheckGiven(fmt.Sprintf("line %d", g.Line), g.Setting, &check, &before); inert != nil {
			break
		}
	}
	if err := CheckConfig(&check); err != nil {
		var bad *errtext.Setting
		if errors.As(err, &bad) {
			for _, g := range given {
				if g.Setting.Key == bad.Key {
					return errtext.New(file, "", "line %d: %v", g.Line, err)
				}
			}
		}
		return errtext.New(file, "", "%v", err)
	}
	if inert != nil {
		return errtext.New(file, "", "%v", inert)
	}
	return nil
}

// readSettings parses the file and sets its values into c.
func readSettings(file string, data []byte, c *cluster.Config) (given []Given, err error) {
	root, err := oneDocument(file, data, "no settings (want key: value lines, e.g. scheduler: priority-fcfs)")
	if err != nil {
		return nil, err
	}
	return readSettingsNode(file, root, c)
}

// oneDocument parses data, which must be one YAML document, and returns
// its root (aliases followed); empty is the error for a document with
// nothing in it.
func oneDocument(file string, data []byte, empty string) (root *yaml.Node, err error) {
	defer func() {
		if r := recover(); r != nil { // yaml.v3 has panicked on hostile input
			root, err = nil, errtext.New(file, "", "malformed YAML (%v)", r)
		}
	}()
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errtext.New(file, "", "%s", empty)
		}
		return nil, errtext.New(file, "", "%s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errtext.New(file, "", "only one YAML document is allowed")
	}
	if len(doc.Content) == 0 {
		return nil, errtext.New(file, "", "%s", empty)
	}
	return FollowAlias(doc.Content[0]), nil
}

// readSettingsNode sets the values of a mapping of setting keys into c.
func readSettingsNode(file string, root *yaml.Node, c *cluster.Config) (given []Given, err error) {
	if root.Kind != yaml.MappingNode {
		return nil, errtext.New(file, "", "line %d: expected key: value lines, got %s", root.Line, errtext.Describe(root))
	}
	var profile []route.ScorerWeight
	weighted := false
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := FollowAlias(root.Content[i]), FollowAlias(root.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			return nil, errtext.New(file, "", "line %d: keys must be setting keys", k.Line)
		}
		s, ok := Lookup(k.Value)
		if !ok {
			return nil, errtext.New(file, "", "line %d: %v", k.Line, Unknown(k.Value))
		}
		if i := slices.IndexFunc(given, func(g Given) bool { return g.Setting == s }); i >= 0 {
			return nil, errtext.New(file, "", "line %d: %s is also given on line %d; give it once", k.Line, s.Key, given[i].Line)
		}
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			return nil, errtext.New(file, "", "line %d: %s: expected a single value (%s), got %s", v.Line, s.Key, s.ValuesText(), errtext.Describe(v))
		}
		value, err := s.ParseNumber(v.Value)
		if err != nil {
			return nil, errtext.New(file, "", "line %d: %v", v.Line, err)
		}
		s.set(c, value)
		given = append(given, Given{Setting: s, Line: k.Line})
		if s.family == Scorers {
			weighted = true
			if value > 0 {
				profile = append(profile, route.ScorerWeight{Name: s.Item, Weight: value})
			}
		}
	}
	if weighted {
		if profile == nil {
			profile = []route.ScorerWeight{} // every weight 0: CheckConfig says so
		}
		c.Routing.Scorers = profile
	}
	return given, nil
}

// FollowAlias follows an alias to the node it names.
func FollowAlias(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}
