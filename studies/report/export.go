package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
)

// The trial export: study export's CSV and JSON rows, one per trial.

// Export writes one row per complete trial (or per Pareto trial): number,
// every parameter, every objective's mean over seeds, each objective's
// change against the baseline as a fraction (NAME_delta; −0.62 = 62 %
// lower, as every Δ of the JSON and CSV exports), and each objective's
// lowest and highest value over the seeds. CSV numbers have CSVDigits
// significant digits; JSON numbers are as stored. A study with pruned
// trials (--prune) lists them too, in number order, with a last column
// "pruned": their objectives and score are the bounds the scenarios they
// ran give, not measurements.
func (r *Report) Export(w io.Writer, format string, paretoOnly bool) error {
	var trials []*Result
	if paretoOnly {
		for _, i := range r.Pareto {
			trials = append(trials, &r.Complete[i])
		}
	} else {
		for i := range r.Complete {
			trials = append(trials, &r.Complete[i])
		}
	}
	withPruned := !paretoOnly && len(r.Pruned) > 0
	pruned := map[*Result]bool{}
	if withPruned {
		for i := range r.Pruned {
			trials, pruned[&r.Pruned[i]] = append(trials, &r.Pruned[i]), true
		}
		slices.SortFunc(trials, func(a, b *Result) int { return a.Number - b.Number })
	}
	base, _ := r.BaselineObjectives()
	header := []string{"trial"}
	for _, p := range r.Template.Params {
		header = append(header, p.Name)
	}
	for _, o := range r.Template.Objectives {
		header = append(header, o.Name)
	}
	for _, o := range r.Template.Objectives {
		header = append(header, o.Name+"_delta")
	}
	for _, o := range r.Template.Objectives {
		header = append(header, o.Name+"_seed_min", o.Name+"_seed_max")
	}
	header = append(header, "score")
	if withPruned {
		header = append(header, "pruned")
	}
	rows := make([][]any, 0, len(trials))
	for _, c := range trials {
		row := []any{c.Number}
		pm := r.ParamMap(c.Params)
		for _, p := range r.Template.Params {
			row = append(row, pm[p.Name])
		}
		for _, v := range c.Objectives {
			row = append(row, v)
		}
		for k, v := range c.Objectives {
			row = append(row, Delta(v, base[k]))
		}
		for k, o := range r.Template.Objectives {
			sp := c.objectiveRange(k, o.Metric)
			row = append(row, sp.Min, sp.Max)
		}
		row = append(row, c.Score)
		if withPruned {
			row = append(row, pruned[c])
		}
		rows = append(rows, row)
	}
	switch format {
	case "csv":
		cw := csv.NewWriter(w)
		_ = cw.Write(header)
		for _, row := range rows {
			rec := make([]string, len(row))
			for i, v := range row {
				rec[i] = cell(v)
			}
			_ = cw.Write(rec)
		}
		cw.Flush()
		return cw.Error()
	case "json":
		objs := make([]map[string]any, len(rows))
		for i, row := range rows {
			m := make(map[string]any, len(row))
			for j, v := range row {
				if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
					v = nil
				}
				m[header[j]] = v
			}
			objs[i] = m
		}
		return WriteJSON(w, objs)
	}
	return tableFormat(format, "trials")
}

func cell(v any) string {
	switch x := v.(type) {
	case nil:
		return "" // an inactive parameter
	case float64:
		return CSVNumber(x)
	case int:
		return strconv.Itoa(x)
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// ParamText is a parameter's value in a table: six significant digits
// (keeps columns aligned), "inactive" for none.
func ParamText(v any) string {
	switch x := v.(type) {
	case nil:
		return "inactive"
	case float64:
		return strconv.FormatFloat(x, 'g', 6, 64)
	}
	return fmt.Sprint(v)
}
