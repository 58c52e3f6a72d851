package plot

import (
	"fmt"
	"math"
	"strings"

	"optimize/studies/report"
)

// headlineView is what the report says first: the primary objective of
// the baseline against the best trial, the held-out verdict on that trial
// if a validation is stored, and the price (the objectives the best trial
// makes worse, and requests it rejects that the baseline served).
type headlineView struct {
	Primary    string
	Violates   string
	Verdict    string // "" when the best trial was not validated
	VerdictBad bool
	Price      string
}

// headline is the report's opening; nil without a complete trial.
func headline(r *report.Report) *headlineView {
	if r.Best < 0 {
		return nil
	}
	tpl := r.Template
	b := &r.Complete[r.Best]
	rows := r.Table() // the objectives first, in template order
	prim := rows[tpl.Primary]
	unit := Unit(tpl.Objectives[tpl.Primary].Metric)
	h := &headlineView{Primary: fmt.Sprintf("%s %s in trial %d against the baseline's %s (%s), means over seeds %s",
		prim.Name, withUnit(report.Human(prim.Best), unit), b.Number, withUnit(report.Human(prim.Baseline), unit), pct(prim.Delta), report.SeedList(r.Seeds))}
	if s := r.ViolationSentence(b); s != "" {
		h.Violates = strings.ToUpper(s[:1]) + s[1:] + "."
	}
	if r.Validation != nil {
		for _, c := range r.Validation.Candidates {
			if c.Trial == b.Number {
				h.Verdict, h.VerdictBad = fmt.Sprintf("Validated on %s: %s", r.Validation.HeldOut(), c.VerdictText()), !c.Verdict.Holds()
				if c.Detail != "" {
					h.Verdict += " — " + c.Detail
				}
			}
		}
	}
	var price []string
	for i, o := range tpl.Objectives {
		if d := rows[i].Delta; i != tpl.Primary && (o.Minimize && d > 0 || !o.Minimize && d < 0) {
			price = append(price, fmt.Sprintf("%s %s", o.Name, pct(d)))
		}
	}
	for _, row := range rows[len(tpl.Objectives):] {
		switch {
		case row.Unit == "requests":
			if row.Best > row.Baseline { // a count from 0 has no per cent
				price = append(price, fmt.Sprintf("%s %s → %s", row.Name, report.Human(row.Baseline), report.Human(row.Best)))
			}
		case row.Delta != 0 && !math.IsNaN(row.Delta) && (row.Delta > 0) == lowerIsBetter(row.Unit):
			price = append(price, fmt.Sprintf("%s %s", row.Name, pct(row.Delta)))
		}
	}
	h.Price = "no other objective is worse than the baseline's"
	if len(price) > 0 {
		h.Price = strings.Join(price, ", ")
	}
	return h
}

// lowerIsBetter says which way a row of the baseline-against-best table
// improves, by its unit: its rows are latencies (ms), rejections
// (requests) and costs (USD), which are better lower, and attainment
// (fraction), goodput (req/s) and throughput (tokens/s), better higher.
func lowerIsBetter(unit string) bool {
	return unit == "ms" || unit == "requests" || strings.HasPrefix(unit, "USD")
}

// withUnit is "303.3 ms", or the number alone for a quantity without a
// unit.
func withUnit(v, unit string) string {
	return strings.TrimSpace(v + " " + unit)
}
