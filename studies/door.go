package studies

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"optimize/search"
	"optimize/simcore/errtext"
	"optimize/storage"
	"optimize/strategies"
)

// Door evaluates parameter vectors from outside — any optimizer's points
// (optimize evaluate) — exactly as a study of the same create request
// evaluates its trials: the same evaluator (template, workload, seeds,
// world, cached workload draws), the same baseline run once, the same
// judgement and score (Evaluation.Score with DefaultViolationWeight), so
// the numbers are a study's by construction. A robust study's pruning is
// not applied: every vector runs in every scenario (an unpruned trial's
// numbers).
type Door struct {
	env *Env
	ev  *evaluator
	row *storage.Study
}

// Door validates o as Create does (a total of trials is not needed), then
// runs the baseline a study of o would store. Nothing is written to
// storage: e.Store may be nil.
func (e *Env) Door(o CreateOptions) (*Door, error) {
	if o.Trials == 0 {
		o.Trials = 1
	}
	if err := Validate(e.Registry, &o, e.Limits); err != nil {
		return nil, err
	}
	tpl, _ := e.Registry.Get(o.Template)
	row := &storage.Study{
		Name: o.Name, Template: tpl.Name, Workload: o.Workload, Seeds: o.Seeds,
		BaselineFrom: o.BaselineFrom, BaseFrom: o.BaseFrom, Deployable: o.Deployable,
		Robust: robustRecord(o.Robust),
	}
	ev, err := e.evaluator(row)
	if err != nil {
		return nil, err
	}
	if err := checkTargets(ev); err != nil {
		return nil, err
	}
	if err := e.runBaseline(ev, row); err != nil {
		return nil, err
	}
	ev.baseline = &row.Baseline // as evaluator sets it from the stored row
	return &Door{env: e, ev: ev, row: row}, nil
}

// DoorHeader is evaluate's first output line: what every later line is
// judged against.
type DoorHeader struct {
	Template string  `json:"template"`
	Workload string  `json:"workload"`
	Seeds    []int64 `json:"seeds"`
	// Parameters are the template's parameter names, in its order.
	Parameters []string `json:"parameters"`
	// Grids are where a study's samplers put each float parameter's values
	// (search.Param.GridText), by name: evaluate runs any value in range
	// as given, on the grid or not.
	Grids map[string]string `json:"grids"`
	// Baseline is each objective's baseline value (the mean over the
	// seeds), by objective name.
	Baseline map[string]Number `json:"baseline"`
	Primary  string            `json:"primary"`
	// Constraints are the template's constraints in words, the keys of
	// every line's violations.
	Constraints []string `json:"constraints"`
	// Scores are the two rules a trial is scored by (search.ScoreRules):
	// each line gives its value under each, by the rule's name.
	Scores []search.ScoreRule `json:"scores"`
}

// Header is the door's first output line.
func (d *Door) Header() DoorHeader {
	tpl := d.ev.tpl
	h := DoorHeader{Template: tpl.Name, Workload: d.row.Workload, Seeds: d.row.Seeds, Baseline: map[string]Number{},
		Primary: tpl.Objectives[tpl.Primary].Name, Constraints: []string{}, Parameters: []string{}, Scores: search.ScoreRules}
	h.Grids = map[string]string{}
	for _, p := range tpl.Params {
		h.Parameters = append(h.Parameters, p.Name)
		if g := p.GridText(); g != "" {
			h.Grids[p.Name] = g
		}
	}
	for _, o := range tpl.Objectives {
		v, _ := strategies.Metric(d.ev.baseline, o.Metric)
		h.Baseline[o.Name] = Number(v)
	}
	for _, c := range tpl.Constraints {
		h.Constraints = append(h.Constraints, c.Words())
	}
	return h
}

// DoorResult is one evaluated vector.
type DoorResult struct {
	Line int `json:"line"`
	// Params are the active parameters' values (a choice or a number).
	Params     map[string]any    `json:"params"`
	Objectives map[string]Number `json:"objectives"`
	// Ratios are the objectives as ratios to the baseline's (smaller is
	// better: value/baseline minimised, baseline/value maximised).
	Ratios map[string]Number `json:"ratios"`
	// Violations are each constraint's relative shortfall (0 when met;
	// null when it could not be measured), by the constraint's words.
	Violations map[string]Number `json:"violations"`
	Violation  Number            `json:"violation"` // the total, as a study stores it
	Feasible   bool              `json:"feasible"`
	// Score is the stored score (search.StoredScore), SamplerScore the
	// samplers' rank (search.SamplerRank): an outside optimizer minimises
	// either.
	Score        Number `json:"score"`
	SamplerScore Number `json:"sampler_score"`
}

// DoorError is the output line of an input line evaluate refuses or
// cannot run.
type DoorError struct {
	Line  int    `json:"line"`
	Error string `json:"error"`
}

// Number is a float64 in JSON at full precision (the shortest text that
// reads back to the same bits), null when NaN or infinite.
type Number float64

// MarshalJSON writes n as a JSON number, or null.
func (n Number) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return []byte(strconv.FormatFloat(f, 'g', -1, 64)), nil
}

// Line evaluates input line n (text: a JSON object, parameter name →
// value; a null value is the parameter not given). A line that cannot be
// read, whose vector the template refuses, or whose run fails is a
// one-line error "line N: …" naming the parameter.
func (d *Door) Line(n int, text []byte) (DoorResult, error) {
	values, err := d.vector(text)
	var res DoorResult
	if err == nil {
		res, err = d.evaluate(values)
	}
	if err != nil {
		return DoorResult{}, fmt.Errorf("line %d: %s", n, errtext.OneLine(err.Error()))
	}
	res.Line = n
	return res, nil
}

// vector reads a line's object into the template's parameter values.
func (d *Door) vector(text []byte) ([]search.Value, error) {
	given, err := GivenJSON(text, d.example())
	if err != nil {
		return nil, err
	}
	return d.ev.tpl.Vector(given)
}

// GivenJSON reads a JSON object of parameter name → value (a number, or a
// categorical's choice as a string; null: not given, as study export
// writes an inactive parameter) into given parameters, in the object's
// order: an evaluate line, or the params of an HTTP enqueue request.
// example names a parameter for the error of text that is no object.
func GivenJSON(text []byte, example string) ([]strategies.Given, error) {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New(`want a JSON object of parameter name → value, e.g. {"` + example + `": …}`)
	}
	var given []strategies.Given
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("not JSON: %v", err)
		}
		name, _ := tok.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s: not JSON: %v", name, err)
		}
		switch v := v.(type) {
		case nil: // not given (an inactive parameter as study export writes it)
		case json.Number:
			given = append(given, strategies.Given{Name: name, Text: v.String()})
		case string:
			given = append(given, strategies.Given{Name: name, Text: v})
		default:
			return nil, fmt.Errorf("%s: want a number or a choice (a string), got %s", name, compact(v))
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("want one JSON object per line, found more after it")
	}
	return given, nil
}

// example is a parameter name for the error of a line that is no object.
func (d *Door) example() string {
	if len(d.ev.tpl.Params) == 0 {
		return "name"
	}
	return d.ev.tpl.Params[0].Name
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// evaluate runs values as a study's trial and reports its judgement.
func (d *Door) evaluate(values []search.Value) (DoorResult, error) {
	runs, err := d.env.evaluate(d.ev, values)
	if err != nil {
		return DoorResult{}, err
	}
	tpl, judged := d.ev.tpl, runs.judged
	res := DoorResult{Params: map[string]any{}, Objectives: map[string]Number{}, Ratios: map[string]Number{}, Violations: map[string]Number{}}
	for i, p := range tpl.Params {
		if !values[i].Absent() {
			res.Params[p.Name] = values[i].Any()
		}
	}
	for k, o := range tpl.Objectives {
		res.Objectives[o.Name], res.Ratios[o.Name] = Number(judged.Objectives[k]), Number(judged.Ratios[k])
	}
	for k, c := range tpl.Constraints {
		res.Violations[c.Words()] = Number(judged.Violations[k])
	}
	res.Violation = Number(judged.Violation())
	res.Feasible = search.Feasible(judged.Violation())
	res.Score = Number(judged.Score(search.DefaultViolationWeight))
	res.SamplerScore = Number(judged.SamplerRank())
	return res, nil
}
