package production

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"optimize/search"
	"optimize/simcore/cluster"
	"optimize/simcore/errtext"
	"optimize/simcore/keys"
	"optimize/simcore/route"
	"optimize/strategies/settings"
)

// Imported is one setting a production config gave, and where.
type Imported struct {
	Setting *settings.Setting
	Where   string // e.g. "plugin probabilistic-admitter, parameter power"
}

// ImportResult is what an import set, and its notes: one line per value
// that production computes only approximately as the simulator does.
type ImportResult struct {
	Given []Imported
	Notes []string
	// PD: the config splits requests between P/D pools, whose sizes it
	// does not give (DefaultPools).
	PD bool
}

// eppDoc is an EndpointPickerConfig as llm-d's loader reads it; fields
// the simulator does not model are errors (KnownFields). flowControl is
// read loosely so that a setting of it the simulator does not model gets
// a one-line reason, not a decoder's.
type eppDoc struct {
	APIVersion         string          `yaml:"apiVersion"`
	Kind               string          `yaml:"kind"`
	FeatureGates       []string        `yaml:"featureGates"`
	Plugins            []eppDocPlugin  `yaml:"plugins"`
	DataLayer          *eppDataLayer   `yaml:"dataLayer"`
	SchedulingProfiles []eppDocProfile `yaml:"schedulingProfiles"`
	FlowControl        map[string]any  `yaml:"flowControl"`
}

// eppDataLayer wires data sources to their extractors; every reference
// must name a plugin, as llm-d's loader requires.
type eppDataLayer struct {
	Sources []struct {
		PluginRef  string `yaml:"pluginRef"`
		Extractors []struct {
			PluginRef string `yaml:"pluginRef"`
		} `yaml:"extractors"`
	} `yaml:"sources"`
}

type eppDocPlugin struct {
	Type       string         `yaml:"type"`
	Name       string         `yaml:"name"`
	Parameters map[string]any `yaml:"parameters"`
}

type eppDocProfile struct {
	Name    string `yaml:"name"`
	Plugins []struct {
		PluginRef string   `yaml:"pluginRef"`
		Weight    *float64 `yaml:"weight"`
	} `yaml:"plugins"`
}

// ApplyEPPConfig reads an llm-d EndpointPickerConfig onto c: the routing
// and admission it describes replace c's (every llm-d setting not given
// takes the standard configuration's value, as an llm-d plugin left out
// is absent). A plugin type, parameter or field the simulator does not
// model is a one-line error naming the file and it; the result lists the
// settings given and a note for each approximated one.
func ApplyEPPConfig(file string, data []byte, c *cluster.Config) (res ImportResult, err error) {
	defer func() {
		if r := recover(); r != nil { // yaml.v3 has panicked on hostile input
			err = errtext.New(file, "", "malformed YAML (%v)", r)
		}
	}()
	var doc eppDoc
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return res, errtext.New(file, "", "empty; want an %s", EPPKind)
		}
		return res, errtext.New(file, "", "%s (modelled fields: apiVersion, kind, featureGates, plugins, dataLayer, schedulingProfiles, flowControl)", oneLineYAML(err))
	}
	if !slices.Contains(EPPAPIVersions, doc.APIVersion) {
		return res, errtext.New(file, "", "apiVersion %q: want one of %s", doc.APIVersion, strings.Join(EPPAPIVersions, ", "))
	}
	if doc.Kind != EPPKind {
		return res, errtext.New(file, "", "kind %q: want %s", doc.Kind, EPPKind)
	}
	im := eppImport{file: file, c: c, byName: map[string]*eppDocPlugin{}}
	if err := im.plugins(&doc); err != nil {
		return res, err
	}
	if err := im.dataLayer(doc.DataLayer); err != nil {
		return res, err
	}
	if err := im.flowControl(&doc); err != nil {
		return res, err
	}
	h, err := im.handler()
	if err != nil {
		return res, err
	}
	refs, err := im.profile(&doc, h)
	if err != nil {
		return res, err
	}
	if err := restoreStandard(c, llmdCounterparts(), func(s *settings.Setting) bool { return s.Production.Param != settings.ParamWeight }); err != nil {
		return res, err
	}
	if err := im.routing(refs); err != nil {
		return res, err
	}
	if err := im.admitter(); err != nil {
		return res, err
	}
	if err := im.gatewayQueue(&doc); err != nil {
		return res, err
	}
	if h != nil {
		if err := im.pdDecider(h); err != nil {
			return res, err
		}
		im.res.PD = h.decider != ""
	}
	if err := im.producers(); err != nil {
		return res, err
	}
	return im.res, nil
}

type eppImport struct {
	file   string
	c      *cluster.Config
	byName map[string]*eppDocPlugin
	order  []string // plugin names in file order
	res    ImportResult
}

// eppRef is one plugin of the profile and its weight.
type eppRef struct {
	plugin *eppDocPlugin
	weight float64
}

func (im *eppImport) fail(format string, args ...any) error {
	return errtext.New(im.file, "", format, args...)
}

// plugins checks every plugin's type and indexes them by name (the type
// when unnamed, as llm-d's loader does).
func (im *eppImport) plugins(doc *eppDoc) error {
	known := EPPPluginTypes()
	for i := range doc.Plugins {
		p := &doc.Plugins[i]
		if p.Type == "" {
			return im.fail("plugins[%d]: no type", i)
		}
		if why, ok := unmodelledWhy(p.Type); ok {
			return im.fail("plugin type %s: %s", p.Type, why)
		}
		if !slices.Contains(known, p.Type) {
			return im.fail("plugin type %s is not modelled (modelled: %s)", p.Type, strings.Join(known, ", "))
		}
		name := p.Name
		if name == "" {
			name = p.Type
		}
		if _, dup := im.byName[name]; dup {
			return im.fail("plugin %s is defined twice", name)
		}
		im.byName[name] = p
		im.order = append(im.order, name)
		if slices.Contains(topologyTypes, p.Type) {
			im.res.Notes = append(im.res.Notes, fmt.Sprintf("%s: plugin %s taken as changing nothing: %s", im.file, name, topologyWhy))
		}
	}
	return nil
}

// profile returns the scheduling profile's plugins with their weights (1
// when not given, as llm-d's loader does): the one profile's, or a P/D
// handler's decode profile's (pdProfiles). With no profile, every scorer
// and picker is in a default profile, as llm-d does.
func (im *eppImport) profile(doc *eppDoc, h *pdHandler) ([]eppRef, error) {
	var refs []eppRef
	if h != nil && len(doc.SchedulingProfiles) > 0 {
		return im.pdProfiles(doc, h)
	}
	switch len(doc.SchedulingProfiles) {
	case 0:
		for _, name := range im.order {
			p := im.byName[name]
			if _, ok := weightSetting(p.Type); ok || p.Type == settings.RoundRobinScorer || slices.Contains(roleTypes("picker"), p.Type) {
				refs = append(refs, eppRef{p, 1})
			}
		}
		return refs, nil
	case 1:
	default:
		return nil, im.fail("%d schedulingProfiles and no P/D profile handler (%s): one profile is modelled without it", len(doc.SchedulingProfiles), settings.PDProfileHandler)
	}
	refs, err := im.profileRefs(doc, 0)
	if err != nil {
		return nil, err
	}
	if err := im.topologyScores(0, refs); err != nil {
		return nil, err
	}
	if i := slices.IndexFunc(refs, func(r eppRef) bool { return r.plugin.Type == settings.PDPrefillFilter }); i >= 0 {
		return nil, im.fail("schedulingProfiles[0]: %s without a P/D profile handler (%s) routes every request to the prefill pods, which is not modelled", nameOf(refs[i].plugin), settings.PDProfileHandler)
	}
	return refs, nil
}

// profileRefs are profile i's plugins with their weights.
func (im *eppImport) profileRefs(doc *eppDoc, i int) ([]eppRef, error) {
	var refs []eppRef
	for _, r := range doc.SchedulingProfiles[i].Plugins {
		p, ok := im.byName[r.PluginRef]
		if !ok {
			return nil, im.fail("schedulingProfiles[%d]: pluginRef %s names no plugin of plugins", i, r.PluginRef)
		}
		w := 1.0
		if r.Weight != nil {
			w = *r.Weight
		}
		refs = append(refs, eppRef{p, w})
	}
	return refs, nil
}

// routing sets the routing the profile describes: a profile of one
// scorer that routing.policy maps exactly (round-robin's) is that
// policy; any other is the weighted policy with the profile's scorers.
func (im *eppImport) routing(refs []eppRef) error {
	var scorers []eppRef
	picker := settings.DefaultPicker
	pickers := 0
	for _, r := range refs {
		switch {
		case slices.Contains(roleTypes("picker"), r.plugin.Type):
			picker = r.plugin.Type
			pickers++
		case r.plugin.Type == settings.RoundRobinScorer:
			scorers = append(scorers, r)
		default:
			if _, ok := weightSetting(im.scorerType(r.plugin)); ok {
				scorers = append(scorers, r)
			} else if !slices.ContainsFunc(eppNoOps, func(n struct{ typ, why string }) bool { return n.typ == r.plugin.Type }) {
				return im.fail("schedulingProfiles[0]: plugin %s (%s) is not a modelled scorer or picker", r.plugin.Name, r.plugin.Type)
			}
		}
	}
	if pickers > 1 {
		return im.fail("schedulingProfiles[0]: %d pickers; a profile has one", pickers)
	}
	if pickers == 0 {
		// llm-d's loader gives a profile without a picker the first
		// picker among the plugins — the first of a Go map, so any of
		// them when there are several — else a max-score-picker.
		var defined []string
		for _, name := range im.order {
			if slices.Contains(roleTypes("picker"), im.byName[name].Type) {
				defined = append(defined, name)
			}
		}
		switch len(defined) {
		case 0:
		case 1:
			picker = im.byName[defined[0]].Type
		default:
			return im.fail("schedulingProfiles[0] names no picker and plugins define %d (%s): llm-d's loader adds any one of them; name one in the profile", len(defined), strings.Join(defined, ", "))
		}
	}
	policy, _ := settings.Lookup(keys.RoutingPolicy)
	if len(scorers) == 1 && picker == settings.DefaultPicker && im.roundRobin(scorers[0]) {
		return im.set(policy, "round-robin", "scheduling profile of "+settings.RoundRobinScorer+" alone, its prefix producer hashing nothing")
	}
	if err := im.set(policy, "weighted", "scheduling profile"); err != nil {
		return err
	}
	// A profile of no scorer is llm-d's too: every endpoint scores 0 and
	// the picker chooses among all of them (empty, not nil: nil would mean
	// the default scorers).
	profile := []route.ScorerWeight{}
	for _, r := range scorers {
		s, ok := weightSetting(im.scorerType(r.plugin))
		if !ok {
			return im.fail("plugin %s (%s): weighted with other scorers, it is not modelled (modelled scorers: %s)", r.plugin.Name, r.plugin.Type, strings.Join(scorerTypes(), ", "))
		}
		if err := s.CheckNumber(r.weight); err != nil || r.weight == 0 {
			return im.fail("plugin %s: weight %v: %s", r.plugin.Name, r.weight, s.ValuesText())
		}
		profile = append(profile, route.ScorerWeight{Name: s.Item, Weight: r.weight})
		im.res.Given = append(im.res.Given, Imported{s, "plugin " + r.plugin.Name + ", weight"})
		if err := im.params(r.plugin); err != nil {
			return err
		}
	}
	im.c.Routing.Scorers = profile
	if s, ok := roleSetting("picker"); ok {
		return im.set(s, picker, "picker "+picker)
	}
	return nil
}

// scorerType is the scorer plugin p computes: a prefix-cache-scorer
// reading a precise-prefix-cache-producer is precise-prefix-cache-scorer
// (the form that replaced it), any other its own type.
func (im *eppImport) scorerType(p *eppDocPlugin) string {
	if p.Type != prefixScorerType {
		return p.Type
	}
	if ref, _ := p.Parameters[producerNameParam].(string); ref != "" {
		if pr, ok := im.byName[ref]; ok && pr.Type == preciseProducer {
			return preciseScorerName
		}
	}
	return p.Type
}

// roundRobin reports whether r, alone in the profile, routes round-robin:
// no-hit-lru-scorer with no parameters, and the one prefix producer (the
// one llm-d's loader would add otherwise) hashing no block
// (maxPrefixTokensToMatch below the 64-token block floor), so that every
// request is cold.
func (im *eppImport) roundRobin(r eppRef) bool {
	if r.plugin.Type != settings.RoundRobinScorer || len(r.plugin.Parameters) != 0 {
		return false
	}
	var producers []*eppDocPlugin
	for _, name := range im.order {
		if p := im.byName[name]; strings.HasSuffix(p.Type, "-producer") {
			producers = append(producers, p)
		}
	}
	if len(producers) != 1 || producers[0].Type != settings.ApproxPrefixProducer || len(producers[0].Parameters) != 1 {
		return false
	}
	n, ok := numberParam(producers[0].Parameters["maxPrefixTokensToMatch"])
	return ok && n >= 1 && n < route.MinLLMDPrefixBlockSizeTokens && n == float64(int(n))
}

// admitter sets admission.policy from an admitter plugin, and its
// parameters.
func (im *eppImport) admitter() error {
	types := roleTypes("admitter")
	for _, name := range im.order {
		p := im.byName[name]
		if !slices.Contains(types, p.Type) {
			continue
		}
		s, _ := roleSetting("admitter")
		if err := im.set(s, p.Type, "plugin "+name); err != nil {
			return err
		}
		return im.params(p)
	}
	return nil
}

// params sets a plugin's parameters through the settings that model them.
func (im *eppImport) params(p *eppDocPlugin) error {
	modelled := paramSettings(p.Type)
	keys := make([]string, 0, len(p.Parameters))
	for k := range p.Parameters {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if k == producerNameParam {
			continue // read by scorerType
		}
		i := slices.IndexFunc(modelled, func(s *settings.Setting) bool { return s.Production.Param == k })
		if i < 0 {
			names := make([]string, len(modelled))
			for j, s := range modelled {
				names[j] = s.Production.Param
			}
			return im.fail("plugin %s: parameter %s is not modelled (modelled: %s)", nameOf(p), k, orNone(names))
		}
		s := modelled[i]
		text, ok := scalarParam(p.Parameters[k])
		if !ok {
			return im.fail("plugin %s: parameter %s: want a single value (%s), got %v", nameOf(p), k, s.ValuesText(), p.Parameters[k])
		}
		if err := im.set(s, text, "plugin "+nameOf(p)+", parameter "+k); err != nil {
			return err
		}
	}
	return nil
}

// set gives s production's value text, read back through the column.
func (im *eppImport) set(s *settings.Setting, text, where string) error {
	return setImported(&im.res, im.file, im.c, s, text, where)
}

// setImported sets s from production's value text, records it, and notes
// an approximation.
func setImported(res *ImportResult, file string, c *cluster.Config, s *settings.Setting, text, where string) error {
	value, ok := importValue(s, c, text)
	if !ok {
		return errtext.New(file, "", "%s: %s cannot be converted to %s", where, text, s.Key)
	}
	if err := s.Set(c, value); err != nil {
		return errtext.New(file, "", "%s: %v", where, err)
	}
	res.Given = append(res.Given, Imported{s, where})
	if got := Carry(s, c); got.Fidelity == settings.Approximate {
		res.Notes = append(res.Notes, fmt.Sprintf("%s: %s → %s=%s, approximated: %s", file, where, s.Key, s.Value(c), got.Note))
	}
	return nil
}

func scorerTypes() []string {
	var types []string
	for _, s := range llmdCounterparts() {
		if s.Production.Param == settings.ParamWeight && !slices.Contains(types, s.Production.Name) {
			types = append(types, s.Production.Name)
		}
	}
	slices.Sort(types)
	for i, t := range types {
		if t == settings.RoundRobinScorer {
			types[i] += " (alone: round-robin)"
		}
	}
	return types
}

func nameOf(p *eppDocPlugin) string {
	if p.Name != "" {
		return p.Name
	}
	return p.Type
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// scalarParam renders a parameter's YAML value as setting text.
func scalarParam(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case int:
		return strconv.Itoa(x), true
	case float64:
		return search.FormatNumber(x), true
	}
	return "", false
}

func numberParam(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// oneLineYAML is a yaml.v3 error on one line, without its "yaml: " prefix.
// A decoding error's Go type names are left out: the user wrote YAML.
func oneLineYAML(err error) string {
	text := strings.TrimPrefix(strings.TrimPrefix(err.Error(), "yaml: "), "unmarshal errors:")
	text = goTypeName.ReplaceAllString(text, "")
	return errtext.OneLine(strings.TrimSpace(text))
}

var goTypeName = regexp.MustCompile(` (in|into) (type )?[\[\]*\w.]*strategies\.\w+`)
