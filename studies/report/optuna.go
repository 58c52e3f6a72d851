package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"optimize/search"
	"optimize/simcore/metrics"
	"optimize/storage"
	"optimize/strategies"
)

// A whole study as Optuna's JournalStorage log (`study export NAME
// --format optuna`), which
//
//	optuna.load_study(study_name=NAME, storage=optuna.storages.JournalStorage(
//	    optuna.storages.JournalFileStorage(FILE)))
//
// opens. The log is one JSON object per line, each an operation that
// JournalStorage replays in order: {"op_code": N, "worker_id": W, ...the
// operation's fields}. The op codes, field names and values below are
// those of Optuna 3.1.0 (optuna/storages/_journal/storage.py), the
// release Debian bookworm ships as python3-optuna; every release since
// (4.x moved the file to optuna/storages/journal/_storage.py) replays the
// same operations with the same fields, so they open the file too:
//
//   - op codes 0–9 are unchanged; 5.0 adds 10 (DISCARD_TRIALS), which
//     this log does not write;
//   - datetimes are ISO 8601 with microseconds. Up to 4.x Optuna writes
//     the local time without an offset and reads it with fromisoformat;
//     5.0 writes UTC with "+00:00" and reads either, converting to local
//     time. This log writes UTC with "+00:00": unambiguous, read by both;
//   - a trial's parameter carries its distribution as a JSON string,
//     {"name": "FloatDistribution"|"IntDistribution"|
//     "CategoricalDistribution", "attributes": {...}}, and its value in
//     Optuna's internal representation: the number, or a categorical's
//     choice index;
//   - constraints are written twice, as each release stores them, a
//     trial feasible when every one is ≤ 0: the trial system attribute
//     "constraints", a list of floats (what a sampler's constraints_func
//     stores, the only form up to 4.x), and one system attribute
//     "constraints:<constraint's words>" per constraint (what 5.0's
//     Trial.set_constraint(key, value) stores). 5.0's trial.constraints
//     reads both into one dict, the list's under the keys "0", "1", …:
//     each shortfall then appears twice, which leaves every feasibility
//     and every comparison of total shortfalls (TPE, NSGA-II) as it is.
//     Optuna ≥ 4.0's study.best_trials keeps only feasible trials, 3.x's
//     ignores them;
//   - the study system attribute "study:metric_names" names the
//     objectives (study.metric_names, Optuna ≥ 3.2; 3.1 keeps it as a
//     plain system attribute).
//
// A trial that finished (complete or failed) takes no further operations
// in Optuna, so each trial is written as create, params, attributes, and
// its state last.

// OptunaFormat is the export format of a whole study as Optuna's
// JournalStorage log.
const OptunaFormat = "optuna"

// The JournalOperation codes this log writes.
const (
	journalCreateStudy         = 0
	journalSetStudyUserAttr    = 2
	journalSetStudySystemAttr  = 3
	journalCreateTrial         = 4
	journalSetTrialParam       = 5
	journalSetTrialStateValues = 6
	journalSetTrialUserAttr    = 8
	journalSetTrialSystemAttr  = 9
)

// Optuna's TrialState and StudyDirection values (both IntEnums, written
// as their numbers). Optuna's WAITING (4, an enqueued trial) has no
// counterpart here: a claimed trial is running from the start. PRUNED is
// a robust study's trial stopped between scenarios (--prune).
const (
	optunaRunning  = 0
	optunaComplete = 1
	optunaPruned   = 2
	optunaFail     = 3

	optunaMinimize = 1
	optunaMaximize = 2
)

// journalWorker is the worker_id of every operation. Optuna compares it
// with its own (a uuid and a thread id) only to raise errors for its own
// operations, so no reader takes these for its own.
const journalWorker = "optimize-study-export"

// journalTime is Optuna's datetime spelling: isoformat(timespec=
// "microseconds") of a UTC datetime.
const journalTime = "2006-01-02T15:04:05.000000+00:00"

// WriteOptuna writes the study as Optuna's JournalStorage log: the study
// (its name, one direction per objective, what it ran as user
// attributes) and every trial in number order (Optuna numbers trials in
// creation order, so the numbers are ours) with its state, active
// parameters, values and constraints, per-seed metrics as user
// attributes. store is the storage r was loaded from: the running and
// failed trials, the trials' times and their per-seed metrics are read
// from it.
func (r *Report) WriteOptuna(w io.Writer, store *storage.Store) error {
	trials, err := store.Trials(r.Study.ID)
	if err != nil {
		return err
	}
	perSeed, err := store.StudySeedMetrics(r.Study.ID)
	if err != nil {
		return err
	}
	space := r.Template.Space()
	dists := make([]json.RawMessage, len(space))
	for i, p := range space {
		if dists[i], err = optunaDistribution(p); err != nil {
			return err
		}
	}
	j := &journal{}
	r.journalStudy(j)
	rerun := map[int]int{} // a failed trial's number → the trial that re-ran its parameters
	for _, t := range trials {
		if t.RescueOf >= 0 {
			rerun[t.RescueOf] = t.Number
		}
	}
	for id, t := range trials {
		if err := r.journalTrial(j, id, &t, dists, perSeed[t.ID], rerun); err != nil {
			return err
		}
	}
	if j.err != nil {
		return j.err
	}
	_, err = w.Write(j.buf.Bytes())
	return err
}

// journalStudy writes the study's operations: its creation with the
// objectives' directions, their names, and the user attributes that say
// what it ran: template, workload, seeds, world, sampler, objectives,
// constraints and the baseline's metrics (means and per seed).
func (r *Report) journalStudy(j *journal) {
	tpl := r.Template
	directions := make([]int, len(tpl.Objectives))
	names := make([]string, len(tpl.Objectives))
	type objective struct {
		Name      string `json:"name"`
		Metric    string `json:"metric"`
		Direction string `json:"direction"`
	}
	objectives := make([]objective, len(tpl.Objectives))
	for k, o := range tpl.Objectives {
		directions[k], names[k] = optunaMaximize, o.Name
		objectives[k] = objective{o.Name, o.Metric, "maximize"}
		if o.Minimize {
			directions[k], objectives[k].Direction = optunaMinimize, "minimize"
		}
	}
	constraints := make([]string, len(tpl.Constraints))
	for k, c := range tpl.Constraints {
		constraints[k] = c.Words()
	}
	baselineSeeds := make(map[string]map[string]any, len(r.Seeds))
	for i, seed := range r.Seeds {
		if i < len(r.BaseSeeds) {
			baselineSeeds[strconv.FormatInt(seed, 10)] = r.namedMetrics(&r.BaseSeeds[i])
		}
	}
	study := func(code int, kind, key string, value any) {
		j.op(code, field{"study_id", 0}, field{kind, map[string]any{key: value}})
	}
	j.op(journalCreateStudy, field{"study_name", r.Study.Name}, field{"directions", directions})
	study(journalSetStudySystemAttr, "system_attr", "study:metric_names", names)
	for _, a := range []field{
		{"template", r.Study.Template},
		{"workload", r.Study.Workload},
		{"seeds", r.Seeds},
		{"world", r.World},
		{"sampler", r.Study.Sampler},
		{"objectives", objectives},
		{"primary", tpl.Objectives[tpl.Primary].Name},
		{"constraints", constraints},
		{"baseline", r.namedMetrics(&r.Baseline)},
		{"baseline_seeds", baselineSeeds},
	} {
		study(journalSetStudyUserAttr, "user_attr", a.key, a.value)
	}
}

// journalTrial writes trial t, Optuna's trial id: its creation, its
// active parameters, its attributes and, unless it is running, its final
// state. A pruned trial is PRUNED, without values. A complete trial
// carries one value per objective, its score and
// total violation and its metrics on each seed (user attributes), and its
// constraints; a complete trial with an objective that was not measured
// (NaN, which Optuna's own tell fails too) and a failed trial are FAIL
// with the reason in the system attribute fail_reason.
func (r *Report) journalTrial(j *journal, id int, t *storage.Trial, dists []json.RawMessage, seeds []storage.SeedRun, rerun map[int]int) error {
	trial := func(code int, fields ...field) { j.op(code, append([]field{{"trial_id", id}}, fields...)...) }
	j.op(journalCreateTrial, field{"study_id", 0}, field{"datetime_start", t.StartedAt.UTC().Format(journalTime)})
	space := r.Template.Space()
	var c *Result
	var values []search.Value // nil: a claimed trial not yet proposed
	switch {
	case t.State == storage.TrialComplete:
		if c = r.ByNumber(t.Number); c == nil {
			return fmt.Errorf("trial %d: complete in storage, not in the report", t.Number)
		}
		values = c.Params
	case t.Params != nil:
		var err error
		if values, err = space.Decode(t.Params); err != nil {
			return fmt.Errorf("trial %d: params: %v", t.Number, err)
		}
	}
	if values != nil {
		internal := space.Encode(values)
		for i, on := range space.Active(values) {
			if on && !math.IsNaN(internal[i]) {
				trial(journalSetTrialParam, field{"param_name", space[i].Name},
					field{"param_value_internal", internal[i]}, field{"distribution", string(dists[i])})
			}
		}
	}
	end := t.HeartbeatAt // a failed trial's last sign of life
	if t.FinishedAt != nil {
		end = *t.FinishedAt
	}
	finish := func(state int, values []float64) {
		trial(journalSetTrialStateValues, field{"state", state}, field{"values", values},
			field{"datetime_complete", end.UTC().Format(journalTime)})
	}
	switch t.State {
	case storage.TrialRunning:
		return nil
	case storage.TrialFailed:
		reason := "its worker stopped before it finished"
		if n, ok := rerun[t.Number]; ok {
			reason += fmt.Sprintf("; its parameters were run again as trial %d", n)
		}
		trial(journalSetTrialSystemAttr, field{"system_attr", map[string]any{"fail_reason": reason}})
		finish(optunaFail, nil)
		return nil
	case storage.TrialPruned:
		// No values, as Optuna's own pruned trials: the stored ones are
		// bounds. The bound on the score says why it stopped.
		trial(journalSetTrialUserAttr, field{"user_attr", map[string]any{"score_bound": finite(t.Score)}})
		trial(journalSetTrialSystemAttr, field{"system_attr", map[string]any{"pruned_reason": "the scenarios it ran proved it could not beat the best trial (study create --prune)"}})
		finish(optunaPruned, nil)
		return nil
	}
	trial(journalSetTrialUserAttr, field{"user_attr", map[string]any{"score": finite(c.Score)}})
	trial(journalSetTrialUserAttr, field{"user_attr", map[string]any{"violation": finite(c.Violation)}})
	for _, run := range seeds {
		trial(journalSetTrialUserAttr, field{"user_attr", map[string]any{"seed_" + strconv.FormatInt(run.Seed, 10): r.namedMetrics(&run.Metrics)}})
	}
	if len(r.Template.Constraints) > 0 {
		constraints := optunaConstraints(c)
		trial(journalSetTrialSystemAttr, field{"system_attr", map[string]any{"constraints": constraints}})
		for k, con := range r.Template.Constraints {
			trial(journalSetTrialSystemAttr, field{"system_attr", map[string]any{journalConstraintsPrefix + con.Words(): constraints[k]}})
		}
	}
	for k, v := range c.Objectives {
		if math.IsNaN(v) {
			trial(journalSetTrialSystemAttr, field{"system_attr", map[string]any{
				"fail_reason": fmt.Sprintf("objective %s was not measured", r.Template.Objectives[k].Name)}})
			finish(optunaFail, nil)
			return nil
		}
	}
	finish(optunaComplete, c.Objectives)
	return nil
}

// optunaConstraints is c's constraints as Optuna reads them, one per
// template constraint, feasible when every one is ≤ 0: the stored
// shortfall of each (0 when met); one that could not be measured (NaN) is
// 1, the full shortfall it counts as in the total, and one beyond
// search.MaxShortfall is capped there as in the total. A trial this
// program calls feasible (search.Feasible: a total of at most
// search.FeasibleTolerance, rounding) has every constraint written as 0,
// so that Optuna's feasible trials are exactly ours.
func optunaConstraints(c *Result) []float64 {
	out := make([]float64, len(c.Violations))
	if search.Feasible(c.Violation) {
		return out
	}
	for k, v := range c.Violations {
		switch {
		case math.IsNaN(v):
			out[k] = 1
		default:
			out[k] = min(v, search.MaxShortfall)
		}
	}
	return out
}

// namedMetrics is m's value of each objective (by name) and of each
// constrained metric (by its path), null where not finite: the metrics a
// study judges a run by.
func (r *Report) namedMetrics(m *metrics.Summary) map[string]any {
	out := make(map[string]any, len(r.Template.Objectives)+len(r.Template.Constraints))
	for _, o := range r.Template.Objectives {
		v, _ := strategies.Metric(m, o.Metric)
		out[o.Name] = finite(v)
	}
	for _, c := range r.Template.Constraints {
		v, _ := strategies.Metric(m, c.Metric)
		out[c.Metric] = finite(v)
	}
	return out
}

// finite is v for JSON, nil (null) when not finite.
func finite(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}

// optunaDistribution is p's distribution as Optuna's
// distribution_to_json writes it: a float (log scale for a log-float), an
// integer with step 1, or a categorical over the choices' names.
func optunaDistribution(p search.Param) (json.RawMessage, error) {
	type float struct {
		Step *float64 `json:"step"`
		Low  float64  `json:"low"`
		High float64  `json:"high"`
		Log  bool     `json:"log"`
	}
	type integer struct {
		Log  bool  `json:"log"`
		Step int   `json:"step"`
		Low  int64 `json:"low"`
		High int64 `json:"high"`
	}
	type categorical struct {
		Choices []string `json:"choices"`
	}
	var name string
	var attributes any
	switch p.Kind {
	case search.Float, search.LogFloat:
		name, attributes = "FloatDistribution", float{Low: p.Low, High: p.High, Log: p.Kind == search.LogFloat}
	case search.Int:
		name, attributes = "IntDistribution", integer{Step: 1, Low: int64(p.Low), High: int64(p.High)}
	case search.Categorical:
		name, attributes = "CategoricalDistribution", categorical{p.Choices}
	default:
		return nil, fmt.Errorf("param %s: kind %q has no Optuna distribution", p.Name, p.Kind)
	}
	return json.Marshal(struct {
		Name       string `json:"name"`
		Attributes any    `json:"attributes"`
	}{name, attributes})
}

// field is one field of a journal operation.
type field struct {
	key   string
	value any
}

// journal accumulates operations, one JSON object a line, fields in the
// order given; the first value that cannot be written as JSON is kept in
// err and ends the log.
type journal struct {
	buf bytes.Buffer
	err error
}

func (j *journal) op(code int, fields ...field) {
	if j.err != nil {
		return
	}
	fields = append([]field{{"op_code", code}, {"worker_id", journalWorker}}, fields...)
	for i, f := range fields {
		key, _ := json.Marshal(f.key) // a string: cannot fail
		value, err := json.Marshal(f.value)
		if err != nil {
			j.err = fmt.Errorf("optuna journal: %s: %v", f.key, err)
			return
		}
		j.buf.WriteString(map[bool]string{true: "{", false: ","}[i == 0])
		j.buf.Write(key)
		j.buf.WriteByte(':')
		j.buf.Write(value)
	}
	j.buf.WriteString("}\n")
}
