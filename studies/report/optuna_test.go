package report_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"optimize/internal/testkit/studykit"
	"optimize/search"
	"optimize/studies/report"
)

// journalTrial is what the journal's operations say of one trial, keyed
// by Optuna's trial id.
type journalTrial struct {
	ops         []int
	params      map[string]float64 // internal representation
	dists       map[string]map[string]any
	state       int
	values      []float64
	constraints []float64
	keyed       map[string]float64 // "constraints:<words>" (Optuna 5's Trial.set_constraint)
	times       []string           // datetime_start, datetime_complete
	userAttrs   map[string]any
	failReason  string
}

// replayJournal reads the log's operations: the study's (the creation
// and attributes) and each trial's, by trial id in creation order.
func replayJournal(t *testing.T, log []byte) (study map[string]any, studyAttrs map[string]any, trials []*journalTrial) {
	t.Helper()
	studyAttrs = map[string]any{}
	for i, line := range strings.Split(strings.TrimSuffix(string(log), "\n"), "\n") {
		var op map[string]any
		if err := json.Unmarshal([]byte(line), &op); err != nil {
			t.Fatalf("line %d: %v: %s", i+1, err, line)
		}
		if op["worker_id"] == nil {
			t.Fatalf("line %d has no worker_id (Optuna reads it of every operation): %s", i+1, line)
		}
		code := int(op["op_code"].(float64))
		switch code {
		case 0:
			study = op
			continue
		case 2:
			for k, v := range op["user_attr"].(map[string]any) {
				studyAttrs[k] = v
			}
			continue
		case 3:
			continue
		case 4:
			if op["datetime_start"] == nil {
				t.Fatalf("line %d: a trial without datetime_start (Optuna 3.1 reads it): %s", i+1, line)
			}
			trials = append(trials, &journalTrial{state: 0, params: map[string]float64{}, dists: map[string]map[string]any{},
				userAttrs: map[string]any{}, keyed: map[string]float64{}, times: []string{op["datetime_start"].(string)}})
		}
		id := len(trials) - 1
		if code != 4 {
			id = int(op["trial_id"].(float64))
		}
		tr := trials[id]
		if slices.Contains(tr.ops, 6) {
			t.Fatalf("line %d: an operation on trial %d after its final state (Optuna ignores it): %s", i+1, id, line)
		}
		tr.ops = append(tr.ops, code)
		switch code {
		case 5:
			name := op["param_name"].(string)
			tr.params[name] = op["param_value_internal"].(float64)
			var dist map[string]any
			if err := json.Unmarshal([]byte(op["distribution"].(string)), &dist); err != nil {
				t.Fatalf("line %d: distribution is not a JSON string: %v", i+1, err)
			}
			tr.dists[name] = dist
		case 6:
			tr.state = int(op["state"].(float64))
			if op["state"].(float64) != 0 && op["datetime_complete"] == nil {
				t.Fatalf("line %d: a finished trial without datetime_complete: %s", i+1, line)
			}
			if end, ok := op["datetime_complete"].(string); ok {
				tr.times = append(tr.times, end)
			}
			if vs, ok := op["values"].([]any); ok {
				for _, v := range vs {
					tr.values = append(tr.values, v.(float64))
				}
			}
		case 8:
			for k, v := range op["user_attr"].(map[string]any) {
				tr.userAttrs[k] = v
			}
		case 9:
			attr := op["system_attr"].(map[string]any)
			if cs, ok := attr["constraints"].([]any); ok {
				for _, c := range cs {
					tr.constraints = append(tr.constraints, c.(float64))
				}
			}
			for k, v := range attr {
				if words, ok := strings.CutPrefix(k, "constraints:"); ok {
					tr.keyed[words] = v.(float64)
				}
			}
			if r, ok := attr["fail_reason"].(string); ok {
				tr.failReason = r
			}
		}
	}
	return study, studyAttrs, trials
}

// The exported journal holds the study with one direction per objective
// and every trial in number order: complete trials with their values,
// active parameters only (a categorical by its choice's index, each with
// its Optuna distribution), constraints (all 0 exactly when the trial is
// feasible) and per-seed metrics; a failed trial FAIL with the trial that
// re-ran it; running trials left running, with or without parameters.
func TestOptunaJournalHoldsEveryTrial(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "q.db")
	env := studykit.Env(t, dsn, 1)
	o := studykit.Study("joint-kv", "j", 8)
	o.Sampler, o.SamplerSeed = "random", 5
	studykit.RunStudy(t, env, o)
	failed, rescue, claimed := studykit.AddUnfinished(t, dsn, "j")
	r, err := report.Load(env.Store, env.Registry, "j")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := r.WriteOptuna(&buf, env.Store); err != nil {
		t.Fatal(err)
	}
	study, attrs, trials := replayJournal(t, buf.Bytes())
	tpl := r.Template
	if study["study_name"] != "j" || fmt.Sprint(study["directions"]) != "[1 2 1 1]" {
		t.Fatalf("create study %v: want name j, directions [1 2 1 1] (minimize 1, maximize 2, as joint-kv's objectives)", study)
	}
	if attrs["template"] != "joint-kv" || fmt.Sprint(attrs["seeds"]) != "[42 43 44]" || attrs["primary"] != "critical_ttft_p99" || attrs["baseline"] == nil {
		t.Fatalf("study user attributes %v", attrs)
	}
	if len(trials) != len(r.Complete)+3 || claimed != len(trials)-1 {
		t.Fatalf("%d trials in the journal, want %d complete + 3 unfinished", len(trials), len(r.Complete))
	}
	space := tpl.Space()
	inactive, active := 0, 0
	for _, c := range r.Complete {
		tr := trials[c.Number]
		if tr.state != 1 || !slices.Equal(tr.values, c.Objectives) {
			t.Fatalf("trial %d: state %d values %v, want COMPLETE (1) with %v", c.Number, tr.state, tr.values, c.Objectives)
		}
		for i, on := range space.Active(c.Params) {
			p := space[i]
			got, present := tr.params[p.Name]
			if present != on {
				t.Fatalf("trial %d: %s present %v, active %v", c.Number, p.Name, present, on)
			}
			if p.Name == "critical_base" {
				inactive, active = inactive+map[bool]int{false: 1}[on], active+map[bool]int{true: 1}[on]
			}
			if !on {
				continue
			}
			want := c.Params[i].Number
			if p.Kind == search.Categorical {
				want = float64(slices.Index(p.Choices, c.Params[i].Choice))
			}
			if got != want {
				t.Fatalf("trial %d: %s internal %v, want %v", c.Number, p.Name, got, want)
			}
			d := tr.dists[p.Name]
			name := map[search.Kind]string{search.Int: "IntDistribution", search.Categorical: "CategoricalDistribution",
				search.Float: "FloatDistribution"}[p.Kind]
			if d["name"] != name {
				t.Fatalf("trial %d: %s distribution %v, want %s", c.Number, p.Name, d, name)
			}
		}
		if len(tr.constraints) != len(tpl.Constraints) {
			t.Fatalf("trial %d: constraints %v for %d template constraints", c.Number, tr.constraints, len(tpl.Constraints))
		}
		for k, con := range tpl.Constraints {
			if v, ok := tr.keyed[con.Words()]; !ok || v != tr.constraints[k] || len(tr.keyed) != len(tpl.Constraints) {
				t.Fatalf("trial %d: constraints:%s = %v (present %v), list %v: want one key per constraint, the list's value", c.Number, con.Words(), v, ok, tr.constraints)
			}
		}
		for _, at := range tr.times {
			if _, err := time.Parse("2006-01-02T15:04:05.000000-07:00", at); err != nil || !strings.HasSuffix(at, "+00:00") {
				t.Fatalf("trial %d: datetime %q: want ISO 8601 with microseconds in UTC, +00:00 (as Optuna 5 writes it): %v", c.Number, at, err)
			}
		}
		allMet := !slices.ContainsFunc(tr.constraints, func(v float64) bool { return v > 0 })
		if allMet != search.Feasible(c.Violation) {
			t.Fatalf("trial %d: constraints %v, violation %v: Optuna's feasibility differs", c.Number, tr.constraints, c.Violation)
		}
		if tr.userAttrs["score"] != c.Score || tr.userAttrs["seed_43"].(map[string]any)["critical_ttft_p99"] == nil {
			t.Fatalf("trial %d: user attributes %v", c.Number, tr.userAttrs)
		}
	}
	// The log reads back as a warm start: every complete trial with its
	// parameters, ratios and score.
	_, back, err := report.ReadOptunaJournal("j.log", buf.Bytes(), tpl)
	if err != nil || len(back) != len(r.Complete) {
		t.Fatalf("read back: %d of %d complete trials, %v", len(back), len(r.Complete), err)
	}
	for i, b := range back {
		c := &r.Complete[i]
		e := b.Evaluation
		if b.Number != c.Number || !slices.EqualFunc(b.Params, c.Params, func(x, y search.Value) bool { return x.Any() == y.Any() }) || !slices.Equal(e.Ratios, r.Evaluation(c).Ratios) ||
			math.Abs(e.Score(search.DefaultViolationWeight)-c.Score) > 1e-9 {
			t.Fatalf("trial %d read back: number %d, params %v, ratios %v, score %v; want %v, %v, %v",
				c.Number, b.Number, b.Params, e.Ratios, e.Score(search.DefaultViolationWeight), c.Params, r.Evaluation(c).Ratios, c.Score)
		}
	}
	if inactive == 0 || active == 0 {
		t.Fatalf("critical_base inactive in %d trials, active in %d: the test needs both", inactive, active)
	}
	if tr := trials[failed]; tr.state != 3 || tr.values != nil || len(tr.params) != len(trials[0].params) ||
		!strings.Contains(tr.failReason, fmt.Sprintf("trial %d", rescue)) {
		t.Fatalf("failed trial: state %d values %v params %v reason %q; want FAIL (3), trial 0's params, re-run as %d",
			tr.state, tr.values, tr.params, tr.failReason, rescue)
	}
	if tr := trials[rescue]; slices.Contains(tr.ops, 6) || len(tr.params) == 0 {
		t.Fatalf("running rescue: ops %v params %v; want RUNNING (no state operation) with params", tr.ops, tr.params)
	}
	if tr := trials[claimed]; !slices.Equal(tr.ops, []int{4}) {
		t.Fatalf("claimed trial: ops %v; want only its creation", tr.ops)
	}
}
