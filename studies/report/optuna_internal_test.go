package report

import (
	"encoding/json"
	"math"
	"slices"
	"testing"

	"optimize/search"
)

// Each kind is the distribution Optuna's distribution_to_json writes for
// it: a log-float is a FloatDistribution with log true, an int an
// IntDistribution of step 1, a categorical its choices by name.
func TestOptunaDistributions(t *testing.T) {
	for _, c := range []struct {
		p    search.Param
		want string
	}{
		{search.Param{Name: "a", Kind: search.Float, Low: 0, High: 1.5},
			`{"name":"FloatDistribution","attributes":{"step":null,"low":0,"high":1.5,"log":false}}`},
		{search.Param{Name: "b", Kind: search.LogFloat, Low: 0.0001, High: 0.1},
			`{"name":"FloatDistribution","attributes":{"step":null,"low":0.0001,"high":0.1,"log":true}}`},
		{search.Param{Name: "c", Kind: search.Int, Low: 0, High: 512},
			`{"name":"IntDistribution","attributes":{"log":false,"step":1,"low":0,"high":512}}`},
		{search.Param{Name: "d", Kind: search.Categorical, Choices: []string{"fcfs", "sjf"}},
			`{"name":"CategoricalDistribution","attributes":{"choices":["fcfs","sjf"]}}`},
	} {
		got, err := optunaDistribution(c.p)
		if err != nil || string(got) != c.want {
			t.Errorf("%s (%s): %s, %v; want %s", c.p.Name, c.p.Kind, got, err, c.want)
		}
		if !json.Valid(got) {
			t.Errorf("%s: not JSON", c.p.Name)
		}
	}
	if _, err := optunaDistribution(search.Param{Name: "e", Kind: "gaussian"}); err == nil {
		t.Error("an unknown kind has a distribution")
	}
}

// Constraints are the stored shortfalls, ≤ 0 exactly when the trial is
// feasible here: rounding below search.FeasibleTolerance is 0, a
// constraint not measured counts 1 and a shortfall beyond
// search.MaxShortfall is capped, as in the total.
func TestOptunaConstraints(t *testing.T) {
	for _, c := range []struct {
		violations []float64
		want       []float64
	}{
		{[]float64{0, 1e-16}, []float64{0, 0}},
		{[]float64{0.02, 0}, []float64{0.02, 0}},
		{[]float64{math.NaN(), 0}, []float64{1, 0}},
		{[]float64{math.Inf(1), 0.5}, []float64{search.MaxShortfall, 0.5}},
	} {
		e := search.Evaluation{Violations: c.violations}
		r := Result{Violations: c.violations, Violation: e.Violation()}
		got := optunaConstraints(&r)
		if !slices.Equal(got, c.want) {
			t.Errorf("violations %v: constraints %v, want %v", c.violations, got, c.want)
		}
		feasible := !slices.ContainsFunc(got, func(v float64) bool { return v > 0 })
		if feasible != search.Feasible(r.Violation) {
			t.Errorf("violations %v: Optuna feasible %v, here %v", c.violations, feasible, search.Feasible(r.Violation))
		}
	}
}
