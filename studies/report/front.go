package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"optimize/strategies"
)

// writeFront lists the Pareto front under its summary line, one trial a
// row in the order of the primary objective (best first): each objective
// in its unit, the trial's world when the template tunes it, then the
// parameters in which the front's trials differ — what moves along the
// trade-off (a capacity study's GPU and instances).
func (r *Report) writeFront(w io.Writer) {
	if len(r.Pareto) == 0 {
		return
	}
	front := slices.Clone(r.Pareto)
	prim := r.Template.Primary
	better := func(a, b float64) int {
		if r.Template.Objectives[prim].Minimize {
			return compareFloat(a, b)
		}
		return compareFloat(b, a)
	}
	slices.SortStableFunc(front, func(i, j int) int {
		a, b := &r.Complete[i], &r.Complete[j]
		if c := better(a.Objectives[prim], b.Objectives[prim]); c != 0 {
			return c
		}
		return a.Number - b.Number
	})
	params := make([]map[string]any, len(front))
	for k, i := range front {
		params[k] = r.ParamMap(r.Complete[i].Params)
	}
	var varying []string
	for _, p := range r.Template.Params {
		for k := range params {
			if ParamText(params[k][p.Name]) != ParamText(params[0][p.Name]) {
				varying = append(varying, p.Name)
				break
			}
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"  trial"}
	for _, o := range r.Template.Objectives {
		head = append(head, fmt.Sprintf("%s %s", o.Name, strategies.MetricUnit(o.Metric)))
	}
	world := r.TunesWorld()
	if world {
		head = append(head, "world")
	}
	if len(varying) > 0 {
		head = append(head, "parameters")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for k, i := range front {
		c := &r.Complete[i]
		cells := []string{fmt.Sprintf("  %d", c.Number)}
		for j := range r.Template.Objectives {
			cells = append(cells, Human(c.Objectives[j]))
		}
		if world {
			cells = append(cells, r.TrialWorld(c).Short())
		}
		var ps []string
		for _, name := range varying {
			ps = append(ps, name+"="+ParamText(params[k][name]))
		}
		if len(ps) > 0 {
			cells = append(cells, strings.Join(ps, " "))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
}

// compareFloat orders a before b when it is smaller (NaN last).
func compareFloat(a, b float64) int {
	switch {
	case a < b || (b != b && a == a):
		return -1
	case a > b || (a != a && b == b):
		return 1
	}
	return 0
}

// readsCost reports whether an objective or a constraint of the template
// is a cost metric: its table then shows all three (a cost study weighs
// the cluster's size and both prices, whichever it optimises).
func (r *Report) readsCost() bool {
	cost := strategies.CostMetrics()
	for _, o := range r.Template.Objectives {
		if slices.Contains(cost, o.Metric) {
			return true
		}
	}
	for _, c := range r.Template.Constraints {
		if slices.Contains(cost, c.Metric) {
			return true
		}
	}
	return false
}
