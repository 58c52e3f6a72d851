package cli

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"optimize/search"
	"optimize/simcore"
	"optimize/simcore/cluster"
	"optimize/simcore/errtext"
	"optimize/simcore/route"
	"optimize/strategies/settings"
)

// simFlags are the simulator-setting flags, one per setting or family of
// the settings table (BLIS's names), plus the latency-profile choice and
// --set KEY=VALUE. Only flags the user set override the base
// configuration; every setting the user gives must have an effect or
// restate its default.
type simFlags struct {
	modelConfig, hardwareConfig string         // a user's model or GPU file
	flags                       []*settingFlag // in flag-name order
	sets                        []string
	file                        settingsFile // --settings FILE
	worldFile                   string       // --world-file FILE
	policyConfig                string       // --policy-config FILE: BLIS's policy bundle (blispolicy.go)
	policySet                   []string     // the setting keys it set
	production                  productionFiles
	// user are the settings the user gave, and how, once apply has run:
	// a simulator error about one of them names the flag (blame).
	user []given
}

// settingFlag is the flag of one setting, or of a family of settings that
// share a list-valued flag (per class, per scorer, per coefficient). It
// keeps the text; apply parses it through the table, so a flag, a
// template and --set report a bad value with the same words.
type settingFlag struct {
	name    string
	members []*settings.Setting // one, or the family in table order
	raw     string
	given   bool
}

func (f *settingFlag) String() string { return f.raw }
func (f *settingFlag) Type() string {
	switch {
	case len(f.members) > 1:
		return "list"
	case f.members[0].Kind == search.Categorical:
		return "string"
	}
	return "number"
}

func (f *settingFlag) Set(s string) error {
	f.raw, f.given = s, true
	return nil
}

func (f *simFlags) bind(fs *pflag.FlagSet) {
	fs.StringVar(&f.modelConfig, "model-config", "", "a model of your own: a Hugging Face config.json or a YAML file like data/models/*.yaml; runs it (instead of --model)")
	fs.StringVar(&f.worldFile, "world-file", "", "a deployment's world — a file (optimize calibrate --fit writes one) or a built-in world ("+strings.Join(settings.BuiltinWorlds(), ", ")+"): model, GPU, TP, KV blocks and the latency model's coefficients, applied before --settings and the flags, which override them")
	fs.StringVar(&f.hardwareConfig, "hardware-config", "", "a GPU of your own: a YAML file like data/hardware/gpus.yaml holding one GPU; runs on it (instead of --hardware)")
	byFlag := map[string]*settingFlag{}
	for _, s := range settings.All() {
		sf := byFlag[s.Flag]
		if sf == nil {
			sf = &settingFlag{name: s.Flag}
			byFlag[s.Flag] = sf
			f.flags = append(f.flags, sf)
		}
		sf.members = append(sf.members, s)
	}
	slices.SortFunc(f.flags, func(a, b *settingFlag) int { return strings.Compare(a.name, b.name) })
	for _, sf := range f.flags {
		fl := fs.VarPF(sf, sf.name, "", sf.usage())
		s := sf.members[0]
		if len(sf.members) == 1 {
			fl.DefValue = s.Default()
			if s.Kind == search.Categorical && slices.Equal(s.Choices, []string{"false", "true"}) {
				fl.NoOptDefVal = "true"
			}
		}
	}
	f.file.bind(fs)
	f.production.bind(fs)
	fs.StringVar(&f.policyConfig, "policy-config", "", "BLIS's policy bundle (YAML): its routing policy, node pools, instance lifecycle and autoscaler, which the flags override")
	fs.StringArrayVar(&f.sets, "set", nil, "any setting by its key, KEY=VALUE (repeatable; `optimize template settings` lists them)")
}

// usage is the flag's help: the setting's doc, what it accepts and its key.
func (f *settingFlag) usage() string {
	s := f.members[0]
	if len(f.members) == 1 {
		return fmt.Sprintf("%s; %s (setting %s)", s.Doc, s.ValuesText(), s.Key)
	}
	items := make([]string, len(f.members))
	for i, m := range f.members {
		items[i] = m.Item
	}
	prefix := strings.TrimSuffix(s.Key, s.Item)
	switch s.Family() {
	case settings.Scorers:
		return fmt.Sprintf("weighted scorers in order, name:weight,... with name one of %s; %s (settings %s<scorer>)",
			strings.Join(items, ", "), s.ValuesText(), prefix)
	case settings.Vector:
		return fmt.Sprintf("%s: %d values in order %s (settings %s<%s>)", s.Doc, len(items), strings.Join(items, ","), prefix, strings.Join(items, "|"))
	case settings.Named:
		return fmt.Sprintf("price of a GPU per hour in USD, per GPU: gpu=price,... with gpu one of %s (defaults: the hardware file's on-demand list prices, which optimize template settings shows; a --hardware-config GPU takes its file's price_per_gpu_hour); cost has no vLLM or llm-d counterpart; %s (settings %s<GPU>)",
			strings.Join(items, ", "), s.ValuesText(), prefix)
	}
	unit := ""
	if s.Unit == "ms" {
		unit = " (ms, or a duration such as 100ms, 1.5s, 2m, as BLIS reads it)"
	}
	return fmt.Sprintf("%s, per class: class=value,... with class one of %s; %s%s (settings %s<class>)",
		s.Doc, strings.Join(items, ", "), s.ValuesText(), unit, prefix)
}

// given is one setting the user gave, and how.
type given struct {
	source  string
	setting *settings.Setting
}

// apply overlays a user's model or GPU file, lets workload move base to
// its operating point (a regime's instances or GPU KV), then overlays a
// settings file (--settings), the flags the user set, then --set;
// resolves the world and validates; and
// rejects any setting the user gave that the resulting configuration does
// not use, unless it restates its default (settings.CheckGiven).
func (f *simFlags) apply(fs *pflag.FlagSet, base cluster.Config, workload func(*cluster.Config)) (cluster.Config, error) {
	c := base
	if err := f.world(fs, &c); err != nil {
		return c, err
	}
	workload(&c)
	if err := f.applySettingsFile(&c); err != nil {
		return c, err
	}
	if err := f.production.apply(&c); err != nil {
		return c, err
	}
	if f.policyConfig != "" {
		notes, set, err := readBLISPolicy(f.policyConfig, &c)
		if err != nil {
			return c, err
		}
		f.policySet = set
		f.production.notes = append(f.production.notes, notes...)
	}
	before := c // what each flag would be without it (CheckGiven)
	var user []given
	for _, sf := range f.flags {
		if !sf.given {
			continue
		}
		set, err := sf.apply(&c)
		if err != nil {
			return c, fmt.Errorf("--%s: %v", sf.name, err)
		}
		for _, s := range set {
			if err := f.production.contradiction("--"+sf.name, s); err != nil {
				return c, err
			}
			user = append(user, given{"--" + sf.name, s})
		}
	}
	for _, pair := range f.sets {
		key, value, ok := strings.Cut(pair, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			return c, fmt.Errorf("--set %s: want KEY=VALUE, e.g. scheduler=fcfs", pair)
		}
		s, ok := settings.Lookup(key)
		if !ok {
			return c, fmt.Errorf("--set %s: %v", pair, settings.Unknown(key))
		}
		if i := slices.IndexFunc(user, func(g given) bool { return g.setting == s }); i >= 0 {
			return c, fmt.Errorf("--set %s: %s is also given by %s; give it once", pair, key, user[i].source)
		}
		if err := s.Set(&c, value); err != nil {
			return c, fmt.Errorf("--set %s: %v", pair, err)
		}
		user = append(user, given{"--set " + pair, s})
	}
	f.user = user
	if err := f.production.pools(&c); err != nil {
		return c, err
	}
	// Each setting's effect is read before the configuration is checked
	// (reading one never fails), but a bad value is the error reported
	// first: it is what the user must mend.
	var inert error
	for _, g := range user {
		if inert = settings.CheckGiven(g.source, g.setting, &c, &before); inert != nil {
			break
		}
	}
	if err := settings.CheckConfig(&c); err != nil {
		return c, f.blame(err)
	}
	return c, inert
}

// blame names where the user gave the setting a simulator error is about
// ("--scheduler: scheduler: …", "--set kv.cpu_blocks=9: kv.cpu_blocks: …");
// the error itself names the setting by its key, as it does for a template.
func (f *simFlags) blame(err error) error {
	var bad *errtext.Setting
	if !errors.As(err, &bad) {
		if f.policyConfig != "" && strings.HasPrefix(err.Error(), "node_pools[") {
			return fmt.Errorf("--policy-config %s: %w", f.policyConfig, err)
		}
		return err
	}
	for _, g := range append(slices.Clone(f.user), f.production.imported...) {
		if g.setting.Key == bad.Key {
			return fmt.Errorf("%s: %w", g.source, err)
		}
	}
	if slices.Contains(f.policySet, bad.Key) {
		return fmt.Errorf("--policy-config %s: %w", f.policyConfig, err)
	}
	return err
}

// apply parses the flag's text into c and returns the settings it set.
func (f *settingFlag) apply(c *cluster.Config) ([]*settings.Setting, error) {
	s := f.members[0]
	switch s.Family() {
	case settings.Single:
		return f.members, s.Set(c, f.raw)
	case settings.Scorers:
		return f.applyScorers(c)
	case settings.Vector:
		return f.applyVector(c)
	case settings.Named:
		return f.applyNamed(c)
	}
	return f.applyPerClass(c)
}

// applyScorers replaces the weighted profile with the one given, in its
// order (the order fixes the float sums, hence ties).
func (f *settingFlag) applyScorers(c *cluster.Config) ([]*settings.Setting, error) {
	list, err := route.ParseScorers(f.raw)
	if err != nil {
		return nil, err
	}
	var set []*settings.Setting
	for _, sw := range list {
		s := f.member(sw.Name)
		if err := s.Set(c, strconv.FormatFloat(sw.Weight, 'g', -1, 64)); err != nil {
			return nil, err
		}
		set = append(set, s)
	}
	c.Routing.Scorers = list
	return set, nil
}

// applyVector reads exactly one value per member, in order.
func (f *settingFlag) applyVector(c *cluster.Config) ([]*settings.Setting, error) {
	parts := strings.Split(f.raw, ",")
	if len(parts) != len(f.members) {
		return nil, fmt.Errorf("need exactly %d values, got %d", len(f.members), len(parts))
	}
	for i, s := range f.members {
		if err := s.Set(c, parts[i]); err != nil {
			return nil, err
		}
	}
	return f.members, nil
}

// applyNamed reads item=value pairs whose item names a member
// (case-insensitively, as GPU names compare), each at most once.
func (f *settingFlag) applyNamed(c *cluster.Config) ([]*settings.Setting, error) {
	var set []*settings.Setting
	for _, pair := range strings.Split(f.raw, ",") {
		name, value, ok := strings.Cut(pair, "=")
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(f.members, func(s *settings.Setting) bool { return strings.EqualFold(s.Item, name) })
		items := make([]string, len(f.members))
		for j, m := range f.members {
			items[j] = m.Item
		}
		switch {
		case !ok || name == "":
			return nil, fmt.Errorf("%q: want name=value, name one of %s", pair, strings.Join(items, ", "))
		case i < 0:
			return nil, fmt.Errorf("%q: unknown name %q (one of %s)", pair, name, strings.Join(items, ", "))
		case slices.Contains(set, f.members[i]):
			return nil, fmt.Errorf("%s: given twice", f.members[i].Item)
		}
		if err := f.members[i].Set(c, strings.TrimSpace(value)); err != nil {
			return nil, err
		}
		set = append(set, f.members[i])
	}
	return set, nil
}

// applyPerClass reads class=value pairs.
func (f *settingFlag) applyPerClass(c *cluster.Config) ([]*settings.Setting, error) {
	pc, err := simcore.ParsePerClass(f.raw, f.members[0].Unit == "ms")
	if err != nil {
		return nil, err
	}
	var set []*settings.Setting
	for cl := simcore.SLOCritical; cl < simcore.NumSLOClasses; cl++ {
		v, ok := pc.Get(cl)
		if !ok {
			continue
		}
		s := f.member(cl.String())
		if err := s.Set(c, strconv.FormatFloat(v, 'g', -1, 64)); err != nil {
			return nil, err
		}
		set = append(set, s)
	}
	return set, nil
}

func (f *settingFlag) member(item string) *settings.Setting {
	for _, s := range f.members {
		if s.Item == item {
			return s
		}
	}
	panic("settings table: flag --" + f.name + " has no member " + item)
}
