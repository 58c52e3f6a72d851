package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"optimize/search"
	"optimize/strategies"
)

// Reading an Optuna JournalStorage log (`study create TEMPLATE --from
// FILE`): the complete trials of its study, their parameters mapped by
// name onto the template's space and judged against the baseline they
// ran with, so that a warm start learns from them as from an earlier
// study's trials.
//
// The log is replayed as Optuna's JournalStorage replays it (3.1.0's
// optuna/storages/_journal/storage.py; 4.x and 5.x moved it to
// optuna/storages/journal/_storage.py with the same operations and
// fields): one JSON object a line, {"op_code": N, "worker_id": W, ...};
//
//   - 0 create study (study_name; ids count up from 0 in creation order; a
//     name already taken creates nothing), 1 delete study (study_id),
//     2/3 set a study user/system attribute (study_id, user_attr or
//     system_attr: a one-key object);
//   - 4 create trial (study_id; trial ids count up from 0 over every
//     study, a trial's number from 0 within its study; enqueue_trial and
//     add_trial also write state, value or values, distributions, params
//     in the internal representation, user_attrs and system_attrs);
//   - 5 set param (trial_id, param_name, param_value_internal, and
//     distribution as a JSON string), 6 set state and values (trial_id,
//     state: 0 running, 1 complete, 2 pruned, 3 fail, 4 waiting; values),
//     7 an intermediate value (unused here), 8/9 set a trial user/system
//     attribute; a finished trial takes no further update;
//   - 10 (DISCARD_TRIALS, written by Rustuna) is skipped, as Optuna does;
//   - datetimes (naive local time up to 4.x, UTC with "+00:00" from 5.0)
//     are not read;
//   - Python's json writes NaN and ±Infinity as bare words: read as null.
//
// A trial's objectives are its user attribute "objectives" (objective
// name → value, as docs/examples/optuna_evaluate.py writes it) or else its
// values, one per template objective (as study export writes them); its
// constraint shortfalls are its user attribute "violations" (constraint
// words → shortfall) or else the system attributes "constraints:<words>"
// (Optuna 5's Trial.set_constraint) or "constraints" (a list, one per
// template constraint: Optuna 3.x's constraints_func). The baseline is the
// study user attribute "baseline" (objective name → value), which both
// write.

// WarmJournal begins a study's WarmFrom when its warm start is an Optuna
// journal: the file's path follows (a study name has no ':').
const WarmJournal = "optuna-journal:"

// JournalTrial is one complete trial of an Optuna journal, as a warm
// start takes it.
type JournalTrial struct {
	Number     int // the trial's number in its Optuna study
	Params     []search.Value
	Evaluation search.Evaluation
}

// Journal operation codes read here beyond those the export writes.
const (
	journalDeleteStudy       = 1
	journalSetTrialInterVal  = 7
	journalDiscardTrials     = 10
	journalMaxLine           = 64 << 20
	journalStudyMetricNames  = "study:metric_names"
	journalConstraintsPrefix = "constraints:"
)

type journalOp struct {
	OpCode        *int               `json:"op_code"`
	StudyID       *int               `json:"study_id"`
	StudyName     *string            `json:"study_name"`
	TrialID       *int               `json:"trial_id"`
	UserAttr      map[string]any     `json:"user_attr"`
	SystemAttr    map[string]any     `json:"system_attr"`
	ParamName     string             `json:"param_name"`
	ParamInternal *float64           `json:"param_value_internal"`
	Distribution  string             `json:"distribution"`
	State         *int               `json:"state"`
	Value         *float64           `json:"value"`
	Values        []*float64         `json:"values"`
	Distributions map[string]string  `json:"distributions"`
	Params        map[string]float64 `json:"params"`
	UserAttrs     map[string]any     `json:"user_attrs"`
	SystemAttrs   map[string]any     `json:"system_attrs"`
}

type jStudy struct {
	name                   string
	userAttrs, systemAttrs map[string]any
	trials                 []*jTrial
}

type jTrial struct {
	number                 int
	state                  int
	values                 []*float64
	params                 []strategies.Given // in the order set
	userAttrs, systemAttrs map[string]any
}

func (t *jTrial) finished() bool { return t.state >= optunaComplete && t.state <= optunaFail }

// ReadOptunaJournal reads the Optuna journal data (file names it in
// errors) and returns its study's name and complete trials over tpl's
// space. Every error is one line naming the file, and the trial and the
// parameter where one is at fault.
func ReadOptunaJournal(file string, data []byte, tpl *strategies.Template) (string, []JournalTrial, error) {
	studies, err := replayJournal(file, data)
	if err != nil {
		return "", nil, err
	}
	st, err := journalStudyOf(file, studies, tpl)
	if err != nil {
		return "", nil, err
	}
	where := fmt.Sprintf("%s: study %s", file, st.name)
	if t, ok := st.userAttrs["template"].(string); ok && t != tpl.Name {
		return "", nil, fmt.Errorf("%s searched template %s, not %s: a warm start needs the same parameters", where, t, tpl.Name)
	}
	baseline, err := journalBaseline(where, st, tpl)
	if err != nil {
		return "", nil, err
	}
	minimize := make([]bool, len(tpl.Objectives))
	for k, o := range tpl.Objectives {
		minimize[k] = o.Minimize
	}
	var out []JournalTrial
	for _, t := range st.trials {
		if t.state != optunaComplete {
			continue
		}
		at := fmt.Sprintf("%s: trial %d", where, t.number)
		params, err := tpl.Vector(t.params)
		if err != nil {
			return "", nil, fmt.Errorf("%s: %v", at, err)
		}
		objectives, err := journalObjectives(at, st, t, tpl)
		if err != nil {
			return "", nil, err
		}
		violations, err := journalViolations(at, t, tpl)
		if err != nil {
			return "", nil, err
		}
		out = append(out, JournalTrial{Number: t.number, Params: params,
			Evaluation: search.Judge(objectives, baseline, minimize, violations, tpl.Primary)})
	}
	if len(out) == 0 {
		return "", nil, fmt.Errorf("%s has no complete trial to warm-start from", where)
	}
	return st.name, out, nil
}

// replayJournal replays the log's operations into its live studies, in
// creation order.
func replayJournal(file string, data []byte) ([]*jStudy, error) {
	studies := map[int]*jStudy{}
	var order []int
	var trials []*jTrial
	nextStudy := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), journalMaxLine)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var op journalOp
		if err := json.Unmarshal(pythonJSON(line), &op); err != nil {
			return nil, fmt.Errorf("%s: line %d: not an Optuna journal operation: %v", file, n, err)
		}
		bad := func(field string) error {
			return fmt.Errorf("%s: line %d: operation %d without %s", file, n, *op.OpCode, field)
		}
		if op.OpCode == nil {
			return nil, fmt.Errorf("%s: line %d: not an Optuna journal operation (no op_code)", file, n)
		}
		study := func() *jStudy {
			if op.StudyID == nil {
				return nil
			}
			return studies[*op.StudyID]
		}
		trial := func() *jTrial { // nil: unknown, or finished (no more updates)
			if op.TrialID == nil || *op.TrialID < 0 || *op.TrialID >= len(trials) || trials[*op.TrialID].finished() {
				return nil
			}
			return trials[*op.TrialID]
		}
		switch *op.OpCode {
		case journalCreateStudy:
			if op.StudyName == nil {
				return nil, bad("study_name")
			}
			if slices.ContainsFunc(order, func(id int) bool { return studies[id].name == *op.StudyName }) {
				continue
			}
			studies[nextStudy] = &jStudy{name: *op.StudyName, userAttrs: map[string]any{}, systemAttrs: map[string]any{}}
			order = append(order, nextStudy)
			nextStudy++
		case journalDeleteStudy:
			if st := study(); st != nil {
				delete(studies, *op.StudyID)
				order = slices.DeleteFunc(order, func(id int) bool { return id == *op.StudyID })
			}
		case journalSetStudyUserAttr, journalSetStudySystemAttr:
			if st := study(); st != nil {
				update(st.userAttrs, op.UserAttr)
				update(st.systemAttrs, op.SystemAttr)
			}
		case journalCreateTrial:
			st := study()
			if st == nil {
				continue
			}
			t := &jTrial{number: len(st.trials), userAttrs: map[string]any{}, systemAttrs: map[string]any{}}
			if op.State != nil {
				t.state = *op.State
			}
			t.values = op.Values
			if op.Values == nil && op.Value != nil {
				t.values = []*float64{op.Value}
			}
			names := make([]string, 0, len(op.Params))
			for name := range op.Params {
				names = append(names, name)
			}
			slices.Sort(names) // a JSON object's order is not kept: by name
			for _, name := range names {
				g, err := journalParam(name, op.Params[name], op.Distributions[name])
				if err != nil {
					return nil, fmt.Errorf("%s: line %d: trial %d: %v", file, n, t.number, err)
				}
				t.params = append(t.params, g)
			}
			update(t.userAttrs, op.UserAttrs)
			update(t.systemAttrs, op.SystemAttrs)
			st.trials = append(st.trials, t)
			trials = append(trials, t)
		case journalSetTrialParam:
			t := trial()
			if t == nil {
				continue
			}
			if op.ParamInternal == nil {
				return nil, bad("param_value_internal")
			}
			g, err := journalParam(op.ParamName, *op.ParamInternal, op.Distribution)
			if err != nil {
				return nil, fmt.Errorf("%s: line %d: trial %d: %v", file, n, t.number, err)
			}
			t.params = slices.DeleteFunc(t.params, func(p strategies.Given) bool { return p.Name == g.Name })
			t.params = append(t.params, g)
		case journalSetTrialStateValues:
			t := trial()
			if t == nil {
				continue
			}
			if op.State == nil {
				return nil, bad("state")
			}
			t.state = *op.State
			if op.Values != nil {
				t.values = op.Values
			}
		case journalSetTrialUserAttr, journalSetTrialSystemAttr:
			if t := trial(); t != nil {
				update(t.userAttrs, op.UserAttr)
				update(t.systemAttrs, op.SystemAttr)
			}
		case journalSetTrialInterVal, journalDiscardTrials:
		default:
			return nil, fmt.Errorf("%s: line %d: unknown Optuna journal op_code %d (known: 0–10)", file, n, *op.OpCode)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	out := make([]*jStudy, len(order))
	for i, id := range order {
		out[i] = studies[id]
	}
	return out, nil
}

func update(into, from map[string]any) {
	for k, v := range from {
		into[k] = v
	}
}

// journalStudyOf picks the journal's study: its only one, or its only one
// of tpl's template (user attribute "template").
func journalStudyOf(file string, studies []*jStudy, tpl *strategies.Template) (*jStudy, error) {
	if len(studies) == 1 {
		return studies[0], nil
	}
	if len(studies) == 0 {
		return nil, fmt.Errorf("%s: no Optuna study in the journal", file)
	}
	var names []string
	var of []*jStudy
	for _, st := range studies {
		names = append(names, st.name)
		if st.userAttrs["template"] == tpl.Name {
			of = append(of, st)
		}
	}
	if len(of) == 1 {
		return of[0], nil
	}
	return nil, fmt.Errorf("%s: %d studies (%s), %d of template %s: a warm start reads the one study of its template",
		file, len(studies), strings.Join(names, ", "), len(of), tpl.Name)
}

// journalParam is a parameter as Optuna stores it (its value in the
// internal representation: a categorical's choice index) as the text a
// template reads.
func journalParam(name string, internal float64, distribution string) (strategies.Given, error) {
	var d struct {
		Name       string `json:"name"`
		Attributes struct {
			Choices []any `json:"choices"`
		} `json:"attributes"`
	}
	if err := json.Unmarshal([]byte(distribution), &d); err != nil {
		return strategies.Given{}, fmt.Errorf("parameter %s: distribution %q: %v", name, distribution, err)
	}
	if d.Name != "CategoricalDistribution" {
		return strategies.Given{Name: name, Text: strconv.FormatFloat(internal, 'f', -1, 64)}, nil
	}
	i := int(internal)
	if float64(i) != internal || i < 0 || i >= len(d.Attributes.Choices) {
		return strategies.Given{}, fmt.Errorf("parameter %s: choice index %g out of its %d choices", name, internal, len(d.Attributes.Choices))
	}
	switch c := d.Attributes.Choices[i].(type) {
	case string:
		return strategies.Given{Name: name, Text: c}, nil
	case float64:
		return strategies.Given{Name: name, Text: strconv.FormatFloat(c, 'f', -1, 64)}, nil
	default:
		js, _ := json.Marshal(c)
		return strategies.Given{Name: name, Text: string(js)}, nil
	}
}

// journalBaseline is the study's baseline value of each objective.
func journalBaseline(where string, st *jStudy, tpl *strategies.Template) ([]float64, error) {
	m, _ := st.userAttrs["baseline"].(map[string]any)
	out := make([]float64, len(tpl.Objectives))
	for k, o := range tpl.Objectives {
		v, ok := m[o.Name].(float64)
		if !ok {
			return nil, fmt.Errorf("%s: no baseline value of objective %s (study user attribute \"baseline\", objective name → value, as study export and docs/examples/optuna_evaluate.py write it): a warm start judges trials against the baseline they ran with", where, o.Name)
		}
		out[k] = v
	}
	return out, nil
}

// journalObjectives is the trial's value of each template objective (NaN
// where null).
func journalObjectives(at string, st *jStudy, t *jTrial, tpl *strategies.Template) ([]float64, error) {
	out := make([]float64, len(tpl.Objectives))
	if m, ok := t.userAttrs["objectives"].(map[string]any); ok {
		for k, o := range tpl.Objectives {
			v, ok := m[o.Name]
			if !ok {
				return nil, fmt.Errorf("%s: user attribute \"objectives\" has no %s", at, o.Name)
			}
			out[k] = number(v)
		}
		return out, nil
	}
	names, words := make([]any, len(tpl.Objectives)), make([]string, len(tpl.Objectives))
	for k, o := range tpl.Objectives {
		names[k], words[k] = o.Name, o.Name
	}
	metric, ok := st.systemAttrs[journalStudyMetricNames].([]any)
	if len(t.values) != len(tpl.Objectives) || ok && !slices.Equal(metric, names) {
		return nil, fmt.Errorf("%s: its objectives are unknown: want user attribute \"objectives\" (objective name → value) or one value per objective of %s (%s), as study export writes them; it has %d values",
			at, tpl.Name, strings.Join(words, ", "), len(t.values))
	}
	for k, v := range t.values {
		out[k] = math.NaN()
		if v != nil {
			out[k] = *v
		}
	}
	return out, nil
}

// journalViolations is the trial's shortfall of each template constraint
// (NaN where null).
func journalViolations(at string, t *jTrial, tpl *strategies.Template) ([]float64, error) {
	out := make([]float64, len(tpl.Constraints))
	if len(out) == 0 {
		return out, nil
	}
	if m, ok := t.userAttrs["violations"].(map[string]any); ok {
		for k, c := range tpl.Constraints {
			v, ok := m[c.Words()]
			if !ok {
				return nil, fmt.Errorf("%s: user attribute \"violations\" has no %q", at, c.Words())
			}
			out[k] = number(v)
		}
		return out, nil
	}
	keyed := 0
	for k, c := range tpl.Constraints {
		if v, ok := t.systemAttrs[journalConstraintsPrefix+c.Words()]; ok {
			out[k], keyed = number(v), keyed+1
		}
	}
	if keyed == len(out) {
		return out, nil
	}
	if list, ok := t.systemAttrs["constraints"].([]any); ok && len(list) == len(out) {
		for k, v := range list {
			out[k] = number(v)
		}
		return out, nil
	}
	words := make([]string, len(tpl.Constraints))
	for k, c := range tpl.Constraints {
		words[k] = c.Words()
	}
	return nil, fmt.Errorf("%s: its constraints are unknown: want user attribute \"violations\" (constraint → shortfall), system attributes \"constraints:<constraint>\" or a \"constraints\" list of %d, one per constraint of %s (%s)",
		at, len(out), tpl.Name, strings.Join(words, "; "))
}

// number is a JSON number, NaN for null or anything else.
func number(v any) float64 {
	if f, ok := v.(float64); ok {
		return f
	}
	return math.NaN()
}

// pythonJSON replaces the bare words NaN, Infinity and -Infinity that
// Python's json writes for non-finite floats (outside strings) by null.
func pythonJSON(line []byte) []byte {
	if !bytes.Contains(line, []byte("NaN")) && !bytes.Contains(line, []byte("Infinity")) {
		return line
	}
	var out []byte
	inString, escaped := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			out = append(out, c)
			continue
		}
		if c == '"' {
			inString = true
		}
		replaced := false
		for _, w := range []string{"-Infinity", "Infinity", "NaN"} {
			if bytes.HasPrefix(line[i:], []byte(w)) {
				out, i, replaced = append(out, "null"...), i+len(w)-1, true
				break
			}
		}
		if !replaced {
			out = append(out, c)
		}
	}
	return out
}
