package report_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"optimize/internal/testkit"
	"optimize/search"
	"optimize/strategies"
	"optimize/studies/report"
)

// journalLines is a JournalStorage log of one slo-cascade study written as
// Optuna writes one: its lines, a trial's parameters and attributes
// filled in by the test.
type journalLines struct {
	t     *testing.T
	lines []string
}

func (j *journalLines) op(fields map[string]any) {
	j.t.Helper()
	fields["worker_id"] = "w"
	b, err := json.Marshal(fields)
	if err != nil {
		j.t.Fatal(err)
	}
	j.lines = append(j.lines, string(b))
}

func (j *journalLines) data() []byte { return []byte(strings.Join(j.lines, "\n") + "\n") }

const (
	chunkDist = `{"name": "IntDistribution", "attributes": {"log": false, "step": 1, "low": 0, "high": 512}}`
)

// sloCascadeParams are a complete slo-cascade vector, by name: each
// parameter's internal value and distribution.
func sloCascadeParams() map[string][2]any {
	return map[string][2]any{
		"critical_base":          {12.5, `{"name": "FloatDistribution", "attributes": {"step": null, "low": 1, "high": 20, "log": false}}`},
		"standard_base":          {4.0, `{"name": "FloatDistribution", "attributes": {"step": null, "low": 1, "high": 10, "log": false}}`},
		"age_weight_per_ms":      {0.003, `{"name": "FloatDistribution", "attributes": {"step": null, "low": 0.0001, "high": 0.1, "log": true}}`},
		"sheddable_urgency_ms":   {250.0, `{"name": "FloatDistribution", "attributes": {"step": null, "low": 0, "high": 1000, "log": false}}`},
		"critical_blend":         {0.25, `{"name": "FloatDistribution", "attributes": {"step": null, "low": 0, "high": 1, "log": false}}`},
		"critical_prefill_chunk": {128.0, chunkDist},
	}
}

// newSloCascadeJournal writes the study (baseline and template as user
// attributes, as the example writes them) and two studies' worth of
// noise around it: a deleted study before it, whose trial still takes a
// trial id.
func newSloCascadeJournal(t *testing.T, tpl *strategies.Template) *journalLines {
	j := &journalLines{t: t}
	j.op(map[string]any{"op_code": 0, "study_name": "gone", "directions": []int{1}})
	j.op(map[string]any{"op_code": 4, "study_id": 0, "datetime_start": "2026-01-01T00:00:00.000000"})
	j.op(map[string]any{"op_code": 1, "study_id": 0})
	j.op(map[string]any{"op_code": 0, "study_name": "opt", "directions": []int{1}})
	j.op(map[string]any{"op_code": 2, "study_id": 1, "user_attr": map[string]any{"template": tpl.Name}})
	j.op(map[string]any{"op_code": 2, "study_id": 1, "user_attr": map[string]any{"baseline": map[string]any{
		"critical_ttft_p99": 300.0, "tokens_per_sec": 17000.0, "e2e_p99": 5000.0, "slo_gap": 1.0}}})
	return j
}

// trial3x writes trial id's operations as Optuna 3.1's study.optimize
// does: create, one set-param per parameter, attributes, the state last.
func (j *journalLines) trial3x(id int, params map[string][2]any, tpl *strategies.Template, value float64) {
	j.op(map[string]any{"op_code": 4, "study_id": 1, "datetime_start": "2026-01-01T00:00:01.000000"})
	for name, p := range params {
		j.op(map[string]any{"op_code": 5, "trial_id": id, "param_name": name, "param_value_internal": p[0], "distribution": p[1]})
	}
	j.op(map[string]any{"op_code": 8, "trial_id": id, "user_attr": map[string]any{"objectives": map[string]any{
		"critical_ttft_p99": 150.0, "tokens_per_sec": 17000.0, "e2e_p99": 5000.0, "slo_gap": 2.0}}})
	violations := map[string]any{}
	for k, c := range tpl.Constraints {
		violations[c.Words()] = 0.0
		if k == 1 {
			violations[c.Words()] = nil // not measured
		}
	}
	j.op(map[string]any{"op_code": 8, "trial_id": id, "user_attr": map[string]any{"violations": violations}})
	j.op(map[string]any{"op_code": 6, "trial_id": id, "state": 1, "values": []float64{value}, "datetime_complete": "2026-01-01T00:00:02.000000"})
}

func sloCascade(t *testing.T) *strategies.Template {
	reg, _ := testkit.Builtins(t)
	tpl, err := reg.Get("slo-cascade")
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

// A journal replays as Optuna replays it: of its live study, the complete
// trials only, with parameters mapped by name (a categorical index, a
// log-float, an int), objectives from the example's user attribute or
// from the values (an add_trial with every field in its creation, Optuna
// 5's timezone-aware datetimes and "constraints:<words>" keys), judged
// against the study's baseline; a failed trial, an update after a
// trial's end, Optuna's DISCARD_TRIALS (10) and Python's bare NaN change
// nothing.
func TestReadOptunaJournal(t *testing.T) {
	tpl := sloCascade(t)
	j := newSloCascadeJournal(t, tpl)
	j.trial3x(1, sloCascadeParams(), tpl, 0.5)
	j.op(map[string]any{"op_code": 6, "trial_id": 1, "state": 3, "values": nil, "datetime_complete": "2026-01-01T00:00:03.000000"}) // after its end: ignored
	// Trial 2 (number 1): failed.
	j.op(map[string]any{"op_code": 4, "study_id": 1, "datetime_start": "2026-01-01T00:00:01.000000"})
	j.op(map[string]any{"op_code": 6, "trial_id": 2, "state": 3, "values": nil, "datetime_complete": "2026-01-01T00:00:02.000000"})
	j.op(map[string]any{"op_code": 10, "study_id": 1, "trial_ids": []int{2}})
	// Trial 3 (number 2): an add_trial, Optuna 5 style, objectives as values.
	params, dists := map[string]any{}, map[string]any{}
	for name, p := range sloCascadeParams() {
		params[name], dists[name] = p[0], p[1]
	}
	params["critical_base"] = 20.0
	system := map[string]any{}
	for _, c := range tpl.Constraints {
		system["constraints:"+c.Words()] = 0.25
	}
	j.op(map[string]any{"op_code": 4, "study_id": 1, "datetime_start": "2026-01-01T00:00:01.000000+00:00", "datetime_complete": "2026-01-01T00:00:02.000000+00:00",
		"state": 1, "value": nil, "values": []float64{600, 8500, 5000, 0.5}, "params": params, "distributions": dists,
		"user_attrs": map[string]any{}, "system_attrs": system, "intermediate_values": map[string]any{}})
	j.lines = append(j.lines, `{"op_code": 8, "worker_id": "w", "trial_id": 3, "user_attr": {"note": NaN}}`)
	j.op(map[string]any{"op_code": 3, "study_id": 1, "system_attr": map[string]any{"study:metric_names": []string{"critical_ttft_p99", "tokens_per_sec", "e2e_p99", "slo_gap"}}})

	name, trials, err := report.ReadOptunaJournal("j.log", j.data(), tpl)
	if err != nil {
		t.Fatal(err)
	}
	if name != "opt" || len(trials) != 2 || trials[0].Number != 0 || trials[1].Number != 2 {
		t.Fatalf("study %q, %d trials %+v; want opt's trials 0 and 2", name, len(trials), trials)
	}
	first := trials[0]
	want := map[string]string{"critical_base": "12.5", "age_weight_per_ms": "0.003", "critical_prefill_chunk": "128"}
	for i, p := range tpl.Params {
		if w, ok := want[p.Name]; ok && p.Format(first.Params[i]) != w {
			t.Errorf("trial 0: %s = %s, want %s", p.Name, p.Format(first.Params[i]), w)
		}
	}
	if e := first.Evaluation; e.Ratios[0] != 0.5 || e.Ratios[3] != 0.5 || e.Violations[0] != 0 || !math.IsNaN(e.Violations[1]) || e.Violation() != 1 {
		t.Errorf("trial 0: ratios %v violations %v (total %v); want critical TTFT 0.5, slo_gap 0.5 (maximised), the unmeasured constraint NaN counting 1",
			e.Ratios, e.Violations, e.Violation())
	}
	second, n := trials[1].Evaluation, float64(len(tpl.Constraints))
	if second.Ratios[0] != 2 || second.Ratios[1] != 2 || second.Violation() != 0.25*n || second.Score(search.DefaultViolationWeight) != 2+1000*0.25*n {
		t.Errorf("trial 2: ratios %v violations %v; want 2, 2 and %g shortfalls of 0.25 (score %g)", second.Ratios, second.Violations, n, 2+1000*0.25*n)
	}
}

// A journal the template cannot take is refused in one line naming the
// file and, where one is at fault, the trial and the parameter.
func TestReadOptunaJournalRefuses(t *testing.T) {
	tpl := sloCascade(t)
	for _, c := range []struct {
		name string
		edit func(j *journalLines, params map[string][2]any)
		want []string
	}{
		{"unknown parameter", func(_ *journalLines, p map[string][2]any) { p["token_budget"] = [2]any{1024.0, chunkDist} },
			[]string{"j.log", "trial 0", "token_budget", "no such parameter"}},
		{"out of range", func(_ *journalLines, p map[string][2]any) {
			p["critical_base"] = [2]any{25.0, `{"name": "FloatDistribution", "attributes": {"step": null, "low": 1, "high": 30, "log": false}}`}
		}, []string{"j.log", "trial 0", "critical_base", "25"}},
		{"missing parameter", func(_ *journalLines, p map[string][2]any) { delete(p, "critical_blend") },
			[]string{"j.log", "trial 0", "critical_blend", "missing"}},
		{"another template", func(j *journalLines, _ map[string][2]any) {
			j.op(map[string]any{"op_code": 2, "study_id": 1, "user_attr": map[string]any{"template": "joint-slo"}})
		}, []string{"j.log", "study opt", "joint-slo, not slo-cascade"}},
		{"no baseline", func(j *journalLines, _ map[string][2]any) {
			j.op(map[string]any{"op_code": 2, "study_id": 1, "user_attr": map[string]any{"baseline": "?"}})
		}, []string{"j.log", "study opt", "baseline", "critical_ttft_p99"}},
		{"two studies", func(j *journalLines, _ map[string][2]any) {
			j.op(map[string]any{"op_code": 0, "study_name": "other", "directions": []int{1}})
			j.op(map[string]any{"op_code": 2, "study_id": 2, "user_attr": map[string]any{"template": tpl.Name}})
		}, []string{"j.log", "2 studies (opt, other), 2 of template slo-cascade"}},
		{"not a journal", func(j *journalLines, _ map[string][2]any) { j.lines = append(j.lines, "op_code: 4") },
			[]string{"j.log", "line 7", "not an Optuna journal operation"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := newSloCascadeJournal(t, tpl)
			params := sloCascadeParams()
			c.edit(j, params)
			j.trial3x(1, params, tpl, 0.5)
			_, _, err := report.ReadOptunaJournal("j.log", j.data(), tpl)
			if err == nil {
				t.Fatal("read")
			}
			t.Log(err)
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("error %q: want one line naming %q", err, w)
				}
			}
		})
	}
}
