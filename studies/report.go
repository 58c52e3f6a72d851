package studies

import (
	"encoding/json"
	"fmt"
	"math"

	"optimize/search"
	"optimize/simcore/metrics"
	"optimize/storage"
	"optimize/strategies"
)

// Report is a study's state and results.
type Report struct {
	Study       *storage.StudyRow
	Template    *strategies.Template
	Baseline    metrics.Summary
	Complete    []Result // complete trials in number order
	Running     int
	Failed      int
	Best        int   // index into Complete of the lowest score, -1 if none
	Pareto      []int // indices into Complete
	Hypervolume float64
}

// Result is one complete trial.
type Result struct {
	Number     int
	Params     []float64
	Objectives []float64
	Score      float64
	Metrics    metrics.Summary
}

// State is "complete", "running" or "incomplete" (stopped before its total).
func (r *Report) State() string {
	switch {
	case len(r.Complete) >= r.Study.TrialsTotal:
		return "complete"
	case r.Running > 0:
		return "running"
	}
	return "incomplete"
}

// HypervolumeReference is the reference point on every normalised axis:
// twice as bad as the baseline.
const HypervolumeReference = 2.0

// Load builds a study's report.
func (e *Env) Load(name string) (*Report, error) {
	row, err := e.Store.StudyByName(name)
	if err != nil {
		return nil, err
	}
	tpl, err := e.Registry.Get(row.Template)
	if err != nil {
		return nil, err
	}
	r := &Report{Study: row, Template: tpl, Best: -1}
	if err := json.Unmarshal([]byte(row.Baseline), &r.Baseline); err != nil {
		return nil, fmt.Errorf("study %s: baseline: %v", name, err)
	}
	trials, err := e.Store.Trials(row.ID)
	if err != nil {
		return nil, err
	}
	for _, t := range trials {
		switch t.State {
		case storage.TrialRunning:
			r.Running++
			continue
		case storage.TrialFailed:
			r.Failed++
			continue
		}
		res := Result{Number: t.Number, Score: t.Score}
		if err := json.Unmarshal([]byte(t.Params), &res.Params); err != nil {
			return nil, fmt.Errorf("trial %d: params: %v", t.Number, err)
		}
		if err := json.Unmarshal([]byte(t.Objectives), &res.Objectives); err != nil {
			return nil, fmt.Errorf("trial %d: objectives: %v", t.Number, err)
		}
		if err := json.Unmarshal([]byte(t.Metrics), &res.Metrics); err != nil {
			return nil, fmt.Errorf("trial %d: metrics: %v", t.Number, err)
		}
		if r.Best < 0 || res.Score < r.Complete[r.Best].Score {
			r.Best = len(r.Complete)
		}
		r.Complete = append(r.Complete, res)
	}
	r.pareto()
	return r, nil
}

// pareto computes the front and its hypervolume over the template's
// objectives, each normalised to "ratio to the baseline, smaller is better".
func (r *Report) pareto() {
	if len(r.Complete) == 0 {
		return
	}
	base, minimize := r.baselineObjectives()
	points := make([][]float64, len(r.Complete))
	for i, c := range r.Complete {
		points[i] = search.Normalize(c.Objectives, base, minimize)
	}
	r.Pareto = search.ParetoFront(points)
	front := make([][]float64, len(r.Pareto))
	ref := make([]float64, len(base))
	for i := range ref {
		ref[i] = HypervolumeReference
	}
	for i, idx := range r.Pareto {
		front[i] = points[idx]
	}
	r.Hypervolume = search.Hypervolume(front, ref)
}

func (r *Report) baselineObjectives() (values []float64, minimize []bool) {
	for _, o := range r.Template.Objectives {
		v, _ := strategies.Metric(&r.Baseline, o.Metric)
		values = append(values, v)
		minimize = append(minimize, o.Minimize)
	}
	return
}

// Delta is the relative change from b to v (−0.62 = 62% lower); NaN when
// the baseline is 0.
func Delta(v, b float64) float64 {
	if b == 0 {
		if v == 0 {
			return 0
		}
		return math.NaN()
	}
	return (v - b) / math.Abs(b)
}

// ParamMap names a trial's parameters (categoricals by their choice).
func (r *Report) ParamMap(values []float64) map[string]any {
	out := make(map[string]any, len(values))
	for i, p := range r.Template.Params {
		if i >= len(values) {
			break
		}
		if p.Kind == strategies.Categorical && int(values[i]) < len(p.Choices) {
			out[p.Name] = p.Choices[int(values[i])]
		} else {
			out[p.Name] = values[i]
		}
	}
	return out
}
