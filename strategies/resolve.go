package strategies

import (
	"fmt"
	"math"
	"path"
	"regexp"
	"slices"
	"strings"

	"optimize/search"
	"optimize/simcore/errtext"
	"optimize/strategies/datasets"
	"optimize/strategies/settings"
	"optimize/strategies/workloads"
)

// Defaults for what a template (and its bases) leave out. The default
// objectives are the four success criteria of an SLO-aware strategy:
// critical TTFT P99 (primary: what class-aware scheduling is for),
// throughput, E2E P99 and the SLO gap. The default constraints keep a
// strategy honest: throughput within 2% of the baseline (a priority scheme
// should reorder work, not drop it), and no class starved or shed — every
// class completes ≥ 99% of its requests.
func defaultObjectives() []Objective {
	return []Objective{
		{Name: "critical_ttft_p99", Metric: "per_slo.critical.ttft_ms.p99", Minimize: true},
		{Name: "tokens_per_sec", Metric: "tokens_per_sec"},
		{Name: "e2e_p99", Metric: "e2e_ms.p99", Minimize: true},
		{Name: "slo_gap", Metric: "slo_gap"},
	}
}

func defaultConstraints() []Constraint {
	return []Constraint{
		{Metric: "tokens_per_sec", MinRatioToBaseline: 0.98},
		{Metric: "min_class_completed_fraction", Min: 0.99, HasMin: true},
	}
}

var (
	templateNamePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	fieldNamePattern    = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
)

// resolver turns raw templates into Templates, bases first.
type resolver struct {
	known    []*Template    // templates registered earlier
	raws     []*rawTemplate // this batch, sorted by name
	done     []*Template
	visiting []string
	failed   map[string]error  // templates of this batch that did not resolve, by name
	unread   map[string]string // files of this batch that did not parse: name (the file's) → file
}

// brokenFile is the file of template name when it is of this batch and
// does not load, else "".
func (r *resolver) brokenFile(name string) string {
	if _, ok := r.failed[name]; ok {
		return r.raw(name).file
	}
	return r.unread[name]
}

func (r *resolver) raw(name string) *rawTemplate {
	for _, t := range r.raws {
		if t.name == name {
			return t
		}
	}
	return nil
}

// get returns the resolved template called name, resolving it (and its
// bases) on first use; nil with no error if there is none.
func (r *resolver) get(name string) (*Template, error) {
	for _, t := range slices.Concat(r.known, r.done) {
		if t.Name == name {
			return t, nil
		}
	}
	if err, ok := r.failed[name]; ok {
		return nil, err
	}
	raw := r.raw(name)
	if raw == nil {
		return nil, nil
	}
	r.visiting = append(r.visiting, name)
	t, err := r.build(raw)
	r.visiting = r.visiting[:len(r.visiting)-1]
	if err != nil {
		r.failed[name] = err
		return nil, err
	}
	r.done = append(r.done, t)
	return t, nil
}

// build validates one raw template; its base is resolved first.
func (r *resolver) build(raw *rawTemplate) (*Template, error) {
	file := raw.file
	t := &Template{Name: raw.name, Description: strings.TrimSpace(raw.description), Base: raw.base, File: file,
		Workload: workloads.Default, Objectives: defaultObjectives(), Constraints: defaultConstraints()}
	if strings.TrimSpace(raw.description) == "" {
		return nil, errtext.New(file, "description", "required: one paragraph on the mechanism and why it should win")
	}
	if raw.base != "" {
		if i := slices.Index(r.visiting, raw.base); i >= 0 {
			return nil, r.cycle(append(slices.Clone(r.visiting[i:]), raw.base))
		}
		base, err := r.get(raw.base)
		if own, ok := r.failed[raw.name]; ok {
			return nil, own // a member of a cycle found while resolving the base
		}
		if bad := r.brokenFile(raw.base); base == nil && bad != "" {
			// The base's own error names its file; this file's is that
			// it stands on it.
			return nil, errtext.New(file, "base", "template %q (%s) does not load; fix it first", raw.base, bad)
		}
		if err != nil {
			return nil, err
		}
		if base == nil {
			return nil, errtext.New(file, "base", "unknown template %q (available: %s)", raw.base, r.available())
		}
		t.inherit(base, raw.searchBase)
	} else if raw.searchBase {
		return nil, errtext.New(file, "base_parameters", "search needs a base template to take the parameters from")
	}
	if raw.gpus != nil {
		t.GPUs = int(*raw.gpus)
	}
	if err := r.mechanism(t, raw); err != nil {
		return nil, err
	}
	if err := r.params(t, raw); err != nil {
		return nil, err
	}
	if raw.workload != "" {
		t.Workload = raw.workload
	}
	builtin, _, _ := strings.Cut(t.Workload, "@")
	switch isDataset, err := workloads.CheckDatasetName(t.Workload); {
	case err != nil:
		return nil, errtext.New(file, "workload", "%v", err)
	case isDataset: // a public trace, fetched when a study runs it
	case !slices.Contains(workloads.Builtins().Names(), builtin):
		return nil, errtext.New(file, "workload", "unknown built-in workload %q (available: %s; traces: %s)", builtin,
			strings.Join(workloads.Builtins().Names(), ", "), strings.Join(datasets.Names(), ", "))
	default:
		if _, err := workloads.Resolve(t.Workload); err != nil {
			return nil, errtext.New(file, "workload", "%v", err)
		}
	}
	if raw.hasRegimes {
		t.Regimes = nil
		for i, name := range raw.regimes {
			if _, err := workloads.LookupRegime(name); err != nil {
				return nil, errtext.New(file, fmt.Sprintf("regimes[%d]", i), "%v", err)
			}
			if slices.Contains(t.Regimes, name) {
				return nil, errtext.New(file, fmt.Sprintf("regimes[%d]", i), "regime %q given twice", name)
			}
			t.Regimes = append(t.Regimes, name)
		}
	}
	t.Robust = raw.robust
	if err := CheckRobust(&t.Robust, RobustFlags{"robust_regimes", "robust_worlds", "robust_aggregate", "robust_prune"}); err != nil {
		return nil, errtext.New(file, "", "%v", err)
	}
	if raw.sampler != "" {
		if _, err := search.ParseMethod(raw.sampler); err != nil {
			return nil, errtext.New(file, "sampler", "%v", err)
		}
	}
	t.Sampler = raw.sampler
	if err := objectives(t, raw); err != nil {
		return nil, err
	}
	if err := constraints(t, raw); err != nil {
		return nil, err
	}
	if _, _, err := t.apply(settings.CheckBase(), t.Defaults()); err != nil {
		return nil, errtext.New(file, "parameters", "the defaults do not make a valid configuration: %v", err)
	}
	if err := checkEffects(t); err != nil {
		return nil, err
	}
	if t.Deployable = raw.deployable; t.Deployable {
		if _, err := t.ForProduction(); err != nil {
			return nil, errtext.New(file, "deployable", "%v", err)
		}
	}
	return t, nil
}

// cycle fails every template of an inheritance cycle (a → … → a), each
// with the cycle named in its own file, and returns the last one's error.
func (r *resolver) cycle(names []string) error {
	text := strings.Join(names, " → ")
	var err error
	for _, name := range names[:len(names)-1] {
		err = errtext.New(r.raw(name).file, "base", "inheritance cycle %s", text)
		r.failed[name] = err
	}
	return err
}

func (r *resolver) available() string {
	var names []string
	for _, t := range r.raws {
		names = append(names, t.name)
	}
	for _, t := range r.known {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	return strings.Join(slices.Compact(names), ", ")
}

// inherit copies base's mechanism, with its parameters frozen at their
// defaults (or still searched, with search), and the sections a child may
// leave out.
func (t *Template) inherit(base *Template, search bool) {
	t.mechanism = slices.Clone(base.mechanism)
	if search {
		t.Params, t.space = slices.Clone(base.Params), slices.Clone(base.space)
	}
	defaults := base.Defaults()
	for i, p := range base.Params {
		if search || defaults[i].Absent() || p.Switch() {
			continue // inactive at the base's defaults (not applied there either), or a switch (nothing to apply)
		}
		t.mechanism = put(t.mechanism, fixed{setting: p.setting, value: p.settingValue(defaults[i]), from: base.Name})
	}
	t.Workload, t.GPUs = base.Workload, base.GPUs
	t.Objectives, t.Primary = slices.Clone(base.Objectives), base.Primary
	t.Constraints = slices.Clone(base.Constraints)
	t.Regimes = slices.Clone(base.Regimes)
}

// put sets a setting, in place if it is already set (so the scorer order
// stays the base's), else at the end.
func put(list []fixed, s fixed) []fixed {
	for i := range list {
		if list[i].setting.Key == s.setting.Key {
			list[i] = s
			return list
		}
	}
	return append(list, s)
}

func (r *resolver) mechanism(t *Template, raw *rawTemplate) error {
	for _, s := range raw.mechanism {
		fieldPath := "mechanism." + s.key
		k, ok := settings.Lookup(s.key)
		if !ok {
			return errtext.New(raw.file, fieldPath, "line %d: %v", s.line, settings.Unknown(s.key))
		}
		if t.derives(k.Key) {
			return errtext.New(raw.file, fieldPath, "line %d: setting %s follows from the template's gpus (%d): neither fix nor search it", s.line, k.Key, t.GPUs)
		}
		v, err := k.ParseNumber(s.value)
		if err != nil {
			return errtext.New(raw.file, fieldPath, "line %d: %v", s.line, err)
		}
		for _, p := range t.Params {
			if p.SettingKey == s.key {
				return errtext.New(raw.file, fieldPath, "line %d: setting %s is searched by the base's parameter %s (base_parameters: search); drop one", s.line, s.key, p.Name)
			}
		}
		t.mechanism = put(t.mechanism, fixed{setting: k, value: v, from: t.Name})
	}
	return nil
}

func (r *resolver) params(t *Template, raw *rawTemplate) error {
	for i, rp := range raw.params {
		fieldPath := fmt.Sprintf("parameters[%d]", i)
		fail := func(field, format string, args ...any) error {
			return errtext.New(raw.file, errtext.Join(fieldPath, field), "line %d: %s", rp.line, fmt.Sprintf(format, args...))
		}
		if !fieldNamePattern.MatchString(rp.name) {
			return fail("name", "%q must be lower_snake_case (letters, digits, _)", rp.name)
		}
		for _, q := range t.Params {
			if q.Name == rp.name {
				return fail("name", "duplicate parameter name %q", rp.name)
			}
		}
		p := TemplateParam{Param: search.Param{Name: rp.name, Kind: search.Kind(rp.kind)}, SettingKey: rp.setting}
		if !slices.Contains(search.Kinds, p.Kind) {
			return fail("type", "%q is not a type (allowed: %s)", rp.kind, search.KindNames())
		}
		if rp.settingField == "" && p.Kind != search.Categorical {
			return fail("setting", "required for a %s parameter (only a categorical may be a switch, tuning no setting)", p.Kind)
		}
		if rp.settingField != "" {
			k, ok := settings.Lookup(rp.setting)
			if !ok {
				return fail(rp.settingFieldName(), "%v", settings.Unknown(rp.setting))
			}
			if t.derives(k.Key) {
				return fail(rp.settingFieldName(), "setting %s follows from the template's gpus (%d): neither fix nor search it", k.Key, t.GPUs)
			}
			p.setting = k
		}
		for _, s := range raw.mechanism {
			if p.setting != nil && s.key == p.SettingKey {
				return fail(rp.settingFieldName(), "setting %s is also fixed in this template's mechanism; drop one", p.SettingKey)
			}
		}
		var err error
		if p.Kind == search.Categorical {
			err = categoricalSpace(&p, &rp, fail)
		} else {
			err = numericSpace(&p, &rp, fail)
		}
		if err != nil {
			return err
		}
		if rp.when != nil {
			if p.When, err = condition(t, rp.when, fail); err != nil {
				return err
			}
		}
		for _, q := range t.Params {
			if p.setting != nil && q.setting == p.setting && !t.exclusive(p.When, q.When) {
				return fail(rp.settingFieldName(), "setting %s is already tuned by parameter %s (two parameters share a setting only under disjoint choices of one categorical: when)", p.SettingKey, q.Name)
			}
		}
		t.Params = append(t.Params, p)
		t.space = append(t.space, p.Param)
	}
	if err := t.space.Validate(); err != nil && len(t.space) > 0 {
		return errtext.New(raw.file, "parameters", "%v", err)
	}
	for i, p := range t.Params {
		if p.Switch() && !slices.ContainsFunc(t.Params, func(q TemplateParam) bool { return q.When != nil && q.When.Param == p.Name }) {
			return errtext.New(raw.file, fmt.Sprintf("parameters[%d].setting", i), "parameter %s tunes no setting and no parameter is conditioned on it (when: {%s: …}): give it a setting, or condition parameters on it", p.Name, p.Name)
		}
	}
	return nil
}

// condition resolves a parameter's when: an earlier categorical parameter
// and some of its choices.
func condition(t *Template, w *rawWhen, fail failFunc) (*search.When, error) {
	i := t.space.Index(w.param)
	if i < 0 {
		return nil, fail("when", "%q is not a parameter declared before this one (a condition names an earlier categorical parameter)", w.param)
	}
	q := &t.Params[i]
	if q.Kind != search.Categorical {
		return nil, fail("when", "parameter %s is %s; a condition names a categorical parameter", q.Name, q.Kind)
	}
	c := &search.When{Param: q.Name}
	for _, v := range w.values {
		if !slices.Contains(q.Choices, v) {
			return nil, fail("when", "%q is not a choice of parameter %s %s", v, q.Name, q.RangeText())
		}
		if slices.Contains(c.Choices, v) {
			return nil, fail("when", "choice %q given twice", v)
		}
		c.Choices = append(c.Choices, v)
	}
	if len(c.Choices) == 0 {
		return nil, fail("when", "give at least one choice of parameter %s", q.Name)
	}
	return c, nil
}

// exclusive reports whether two conditions can never hold together: the
// same categorical, no choice in common, or a condition on a conditional
// parameter whose own condition excludes the other (a condition holds only
// while its parameter is active: pd-split's prefill count per prefill TP
// under each decode TP). Two parameters may then tune one setting (TP per
// GPU, say), and TPE models each apart: a value good on one GPU is not
// taken for good on another.
func (t *Template) exclusive(a, b *search.When) bool {
	if a == nil || b == nil {
		return false
	}
	if a.Param != b.Param {
		// Walk up from the condition on the later parameter: its
		// parameter's condition holds whenever it does.
		ia, ib := t.space.Index(a.Param), t.space.Index(b.Param)
		if ia > ib {
			return t.exclusive(t.Params[ia].When, b)
		}
		return t.exclusive(a, t.Params[ib].When)
	}
	for _, c := range a.Choices {
		if slices.Contains(b.Choices, c) {
			return false
		}
	}
	return true
}

type failFunc func(field, format string, args ...any) error

func categoricalSpace(p *TemplateParam, rp *rawParam, fail failFunc) error {
	if rp.low != nil || rp.high != nil {
		return fail("low", "a categorical parameter takes choices, not low/high")
	}
	if len(rp.choices) < 2 {
		return fail("choices", "a categorical parameter needs at least 2 choices (fix a single value in the mechanism)")
	}
	for j, c := range rp.choices {
		if slices.Contains(rp.choices[:j], c) {
			return fail(fmt.Sprintf("choices[%d]", j), "choice %q given twice", c)
		}
		var v float64
		var err error
		switch {
		case p.setting != nil:
			v, err = p.setting.ParseNumber(c)
		case !fieldNamePattern.MatchString(c):
			err = fmt.Errorf("a switch's choice %q must be lower_snake_case (letters, digits, _)", c)
		}
		if err != nil {
			return fail(fmt.Sprintf("choices[%d]", j), "%v", err)
		}
		p.Choices = append(p.Choices, c)
		p.choiceValues = append(p.choiceValues, v)
	}
	if rp.defaultValue == nil {
		return fail("default", "required: one of %s", strings.Join(p.Choices, ", "))
	}
	if !slices.Contains(p.Choices, rp.defaultValue.Value) {
		return fail("default", "%q is not one of the choices %s", rp.defaultValue.Value, p.RangeText())
	}
	p.Default = search.Value{Choice: rp.defaultValue.Value}
	return nil
}

func numericSpace(p *TemplateParam, rp *rawParam, fail failFunc) error {
	k := p.setting
	switch {
	case rp.hasChoices:
		return fail("choices", "only a categorical parameter takes choices")
	case k.Kind == search.Categorical:
		return fail("type", "setting %s takes %s: use type categorical", k.Key, k.ValuesText())
	case k.Kind == search.Int && p.Kind != search.Int:
		return fail("type", "setting %s takes whole numbers: use type int (or categorical)", k.Key)
	case rp.low == nil:
		return fail("low", "required for a %s parameter", p.Kind)
	case rp.high == nil:
		return fail("high", "required for a %s parameter", p.Kind)
	}
	p.Low, p.High = *rp.low, *rp.high
	switch {
	case p.Low > p.High:
		return fail("low", "bounds inverted: low %s > high %s", search.FormatNumber(p.Low), search.FormatNumber(p.High))
	case p.Low == p.High:
		return fail("high", "low and high are both %s: fix the value in the mechanism instead", search.FormatNumber(p.Low))
	case p.Kind == search.LogFloat && p.Low <= 0:
		return fail("low", "a log-float parameter needs low > 0, got %s", search.FormatNumber(p.Low))
	case p.Kind == search.Int && (p.Low != math.Trunc(p.Low) || p.High != math.Trunc(p.High)):
		return fail("low", "an int parameter needs whole bounds, got [%s, %s]", search.FormatNumber(p.Low), search.FormatNumber(p.High))
	}
	if err := k.CheckNumber(p.Low); err != nil {
		return fail("low", "%v", err)
	}
	if err := k.CheckNumber(p.High); err != nil {
		return fail("high", "%v", err)
	}
	if rp.defaultValue == nil {
		return fail("default", "required: a value in %s", p.RangeText())
	}
	var v float64
	if rp.defaultValue.Tag != "!!int" && rp.defaultValue.Tag != "!!float" || rp.defaultValue.Decode(&v) != nil {
		return fail("default", "%q is not a number (range %s)", rp.defaultValue.Value, p.RangeText())
	}
	p.Default = search.Value{Number: v}
	if err := p.Check(p.Default); err != nil {
		return fail("default", "%v", err)
	}
	return nil
}

func objectives(t *Template, raw *rawTemplate) error {
	if raw.hasObjectives {
		if len(raw.objectives) == 0 {
			return errtext.New(raw.file, "objectives", "give at least one objective (or leave the key out for the defaults)")
		}
		t.Objectives, t.Primary = raw.objectives, 0
	}
	for i, o := range raw.objectives {
		fieldPath := fmt.Sprintf("objectives[%d]", i)
		if !fieldNamePattern.MatchString(o.Name) {
			return errtext.New(raw.file, fieldPath+".name", "%q must be lower_snake_case (letters, digits, _)", o.Name)
		}
		if slices.ContainsFunc(raw.objectives[:i], func(q Objective) bool { return q.Name == o.Name }) {
			return errtext.New(raw.file, fieldPath+".name", "duplicate objective name %q", o.Name)
		}
		if err := ValidMetric(o.Metric); err != nil {
			return errtext.New(raw.file, fieldPath+".metric", "%v", err)
		}
	}
	if raw.primary != "" {
		i := slices.IndexFunc(t.Objectives, func(o Objective) bool { return o.Name == raw.primary })
		if i < 0 {
			names := make([]string, len(t.Objectives))
			for j, o := range t.Objectives {
				names[j] = o.Name
			}
			return errtext.New(raw.file, "primary", "%q is not an objective (objectives: %s)", raw.primary, strings.Join(names, ", "))
		}
		t.Primary = i
	}
	return nil
}

func constraints(t *Template, raw *rawTemplate) error {
	if !raw.hasConstraints {
		return nil
	}
	t.Constraints = nil // an empty list means "no constraints"
	for i, rc := range raw.constraints {
		fieldPath := fmt.Sprintf("constraints[%d]", i)
		fail := func(field, format string, args ...any) error {
			return errtext.New(raw.file, errtext.Join(fieldPath, field), "line %d: %s", rc.line, fmt.Sprintf(format, args...))
		}
		if err := ValidMetric(rc.metric); err != nil {
			return fail("metric", "%v", err)
		}
		c := Constraint{Metric: rc.metric}
		for _, r := range []struct {
			field    string
			src, dst *float64
		}{
			{"min_ratio_to_baseline", rc.minRatio, &c.MinRatioToBaseline},
			{"max_ratio_to_baseline", rc.maxRatio, &c.MaxRatioToBaseline},
		} {
			switch {
			case r.src == nil:
			case *r.src <= 0: // and so 0 can mean unset
				return fail(r.field, "a ratio to the baseline must be > 0, got %s", search.FormatNumber(*r.src))
			default:
				*r.dst = *r.src
			}
		}
		if rc.minDelta != nil {
			c.MinDeltaToBaseline, c.HasMinDelta = *rc.minDelta, true
		}
		if rc.minValue != nil {
			c.Min, c.HasMin = *rc.minValue, true
		}
		if rc.maxValue != nil {
			c.Max, c.HasMax = *rc.maxValue, true
		}
		switch {
		case c.MinRatioToBaseline == 0 && c.MaxRatioToBaseline == 0 && !c.HasMinDelta && !c.HasMin && !c.HasMax:
			return fail("", "give at least one of %s", strings.Join(constraintKeys[1:], ", "))
		case c.HasMin && c.HasMax && c.Min > c.Max:
			return fail("min", "min %s > max %s", search.FormatNumber(c.Min), search.FormatNumber(c.Max))
		case c.MinRatioToBaseline != 0 && c.MaxRatioToBaseline != 0 && c.MinRatioToBaseline > c.MaxRatioToBaseline:
			return fail("min_ratio_to_baseline", "min ratio %s > max ratio %s", search.FormatNumber(c.MinRatioToBaseline), search.FormatNumber(c.MaxRatioToBaseline))
		}
		t.Constraints = append(t.Constraints, c)
	}
	return nil
}

// nameFromFile is the template name a file must declare: its base name.
func nameFromFile(file string) string {
	return strings.TrimSuffix(path.Base(strings.ReplaceAll(file, `\`, "/")), ".yaml")
}
