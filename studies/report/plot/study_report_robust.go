package plot

import (
	"fmt"
	"strconv"

	"optimize/search"
	"optimize/studies/report"
)

// robustView is a robust study's best trial in each scenario (regime ×
// world), against that scenario's baseline, and the scenario that binds.
type robustView struct {
	Trial, Scenarios, Seeds, Simulations int
	Aggregate, Binding, Primary          string
	Error                                string // the table could not be read from storage
	Pruning                              string // what --prune saved, or ""
	Table                                table
}

// robust is the per-scenario section of r's best trial; nil for a study
// that is not robust.
func robust(r *report.Report) *robustView {
	if r.Best < 0 {
		return nil
	}
	rj, err := r.Robust(&r.Complete[r.Best])
	if err != nil {
		return &robustView{Trial: r.Complete[r.Best].Number, Error: err.Error()}
	}
	if rj == nil {
		return nil
	}
	tpl := r.Template
	v := &robustView{Trial: rj.Trial, Scenarios: len(rj.Scenarios), Seeds: len(r.Seeds), Simulations: rj.SimulationsPerTrial,
		Aggregate: rj.Aggregate, Binding: rj.Binding, Primary: tpl.Objectives[tpl.Primary].Name, Pruning: rj.PruneText(len(r.Complete))}
	v.Table = table{Head: []string{"scenario"}, Num: []bool{false}}
	for _, o := range tpl.Objectives {
		v.Table.Head, v.Table.Num = append(v.Table.Head, o.Name+" Δ"), append(v.Table.Num, true)
	}
	v.Table.Head = append(v.Table.Head, "constraints", "worst scenario for")
	for _, s := range rj.Scenarios {
		row := []string{s.Scenario}
		for _, o := range tpl.Objectives {
			row = append(row, pct(float64(s.Deltas[o.Name])))
		}
		met := "met"
		if !search.Feasible(float64(s.Violation)) {
			met = "misses " + s.Missed
		}
		binds := ""
		for _, o := range tpl.Objectives {
			if rj.BindingBy[o.Name] == s.Scenario {
				binds += sep(binds) + o.Name
			}
		}
		v.Table.Rows = append(v.Table.Rows, append(row, met, binds))
	}
	return v
}

// sep is ", " after a non-empty list, else "".
func sep(list string) string {
	if list == "" {
		return ""
	}
	return ", "
}

// maxRateView is the latest `validate --max-rate`: its sentence and one
// row per seed.
type maxRateView struct {
	Trial                  int
	Ran, Summary, Start    string
	Tolerance, Seeds, Unit string
	Missing                string
	PerSeed                table
}

func maxRate(m *report.MaxRate) *maxRateView {
	v := &maxRateView{Trial: m.Trial, Summary: m.Summary(), Start: report.RateText(m.StartRate), Unit: m.Unit,
		Tolerance: strconv.FormatFloat(100*m.Tolerance, 'g', 3, 64) + "%", Seeds: report.SeedList(m.Seeds)}
	if m.RanAt != nil {
		v.Ran = report.RanText(*m.RanAt)
	}
	if m.Missing > 0 {
		v.Missing = fmt.Sprintf("Incomplete: %d seeds not searched yet (run study validate --max-rate again to finish).", m.Missing)
	}
	v.PerSeed = table{Head: []string{"seed", fmt.Sprintf("trial %d (%s)", m.Trial, m.Unit), "fails at", "baseline (" + m.Unit + ")", "fails at", "Δ"},
		Num: []bool{true, true, true, true, true, true}}
	for _, s := range m.PerSeed {
		v.PerSeed.Rows = append(v.PerSeed.Rows, []string{strconv.FormatInt(s.Seed, 10), s.Winner.Text(), report.RateText(float64(s.Winner.FailsAt)),
			s.Baseline.Text(), report.RateText(float64(s.Baseline.FailsAt)), pct(s.Delta())})
	}
	return v
}
