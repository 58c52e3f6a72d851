package strategies

import (
	"math"

	"optimize/search"
	"optimize/simcore/cluster"
)

// TemplateSummary is one row of `template list --output json` (and GET
// /api/templates).
type TemplateSummary struct {
	Name        string `json:"name"`
	Base        string `json:"base,omitempty"`
	Workload    string `json:"workload"`
	Parameters  int    `json:"parameters"`
	Description string `json:"description"`
}

// TemplateJSON is `template show --output json` (and GET
// /api/templates/{name}).
type TemplateJSON struct {
	Name        string           `json:"name"`
	File        string           `json:"file"`
	Base        string           `json:"base,omitempty"`
	Workload    string           `json:"workload"`
	Description string           `json:"description"`
	Mechanism   []Fixed          `json:"mechanism"`
	Parameters  []ParamJSON      `json:"parameters"`
	Objectives  []ObjectiveJSON  `json:"objectives"`
	Primary     string           `json:"primary"`
	Constraints []ConstraintJSON `json:"constraints"`
	Regimes     []string         `json:"regimes"`
	Sampler     string           `json:"sampler,omitempty"`
	// World is the world of the template's defaults (Template.World);
	// TunesWorld the world settings its parameters tune, [] for none.
	World      cluster.World `json:"world"`
	TunesWorld []string      `json:"tunes_world"`
}

// ParamJSON is one parameter's space.
type ParamJSON struct {
	Name    string      `json:"name"`
	Type    search.Kind `json:"type"`
	Low     *float64    `json:"low,omitempty"`
	High    *float64    `json:"high,omitempty"`
	Choices []string    `json:"choices,omitempty"`
	// Grid is where a study's samplers put a float's values
	// (search.Param.GridText); absent for the other kinds.
	Grid    string `json:"grid,omitempty"`
	Default string `json:"default"`
	Setting string `json:"setting"`
	When    *struct {
		Param   string   `json:"param"`
		Choices []string `json:"choices"`
	} `json:"when,omitempty"`
}

// ObjectiveJSON is one objective.
type ObjectiveJSON struct {
	Name      string `json:"name"`
	Metric    string `json:"metric"`
	Direction string `json:"direction"`
}

// ConstraintJSON is one constraint; absent bounds are left out.
type ConstraintJSON struct {
	Metric             string   `json:"metric"`
	MinRatioToBaseline *float64 `json:"min_ratio_to_baseline,omitempty"`
	MaxRatioToBaseline *float64 `json:"max_ratio_to_baseline,omitempty"`
	MinDeltaToBaseline *float64 `json:"min_delta_to_baseline,omitempty"`
	Min                *float64 `json:"min,omitempty"`
	Max                *float64 `json:"max,omitempty"`
}

// Summary is the template's list row.
func (t *Template) Summary() TemplateSummary {
	return TemplateSummary{Name: t.Name, Base: t.Base, Workload: t.Workload, Parameters: len(t.Params), Description: t.Description}
}

// JSON is the template's full description.
func (t *Template) JSON() TemplateJSON {
	out := TemplateJSON{Name: t.Name, File: t.File, Base: t.Base, Workload: t.Workload, Description: t.Description,
		Mechanism: t.Mechanism(), Parameters: []ParamJSON{}, Objectives: []ObjectiveJSON{},
		Primary: t.Objectives[t.Primary].Name, Constraints: []ConstraintJSON{}, Regimes: append([]string{}, t.Regimes...),
		Sampler: t.Sampler, TunesWorld: append([]string{}, t.TunedWorld()...)}
	out.World, _ = t.World() // its defaults were checked when it loaded
	for _, p := range t.Params {
		pj := ParamJSON{Name: p.Name, Type: p.Kind, Choices: p.Choices, Grid: p.GridText(), Default: p.Format(p.Default), Setting: p.SettingKey}
		if p.Kind != search.Categorical {
			pj.Low, pj.High = ptr(p.Low), ptr(p.High)
		}
		if p.When != nil {
			pj.When = &struct {
				Param   string   `json:"param"`
				Choices []string `json:"choices"`
			}{p.When.Param, p.When.Choices}
		}
		out.Parameters = append(out.Parameters, pj)
	}
	for _, o := range t.Objectives {
		dir := "maximize"
		if o.Minimize {
			dir = "minimize"
		}
		out.Objectives = append(out.Objectives, ObjectiveJSON{Name: o.Name, Metric: o.Metric, Direction: dir})
	}
	for _, c := range t.Constraints {
		cj := ConstraintJSON{Metric: c.Metric}
		if c.MinRatioToBaseline != 0 {
			cj.MinRatioToBaseline = ptr(c.MinRatioToBaseline)
		}
		if c.MaxRatioToBaseline != 0 {
			cj.MaxRatioToBaseline = ptr(c.MaxRatioToBaseline)
		}
		if c.HasMinDelta {
			cj.MinDeltaToBaseline = ptr(c.MinDeltaToBaseline)
		}
		if c.HasMin {
			cj.Min = ptr(c.Min)
		}
		if c.HasMax {
			cj.Max = ptr(c.Max)
		}
		out.Constraints = append(out.Constraints, cj)
	}
	return out
}

func ptr(v float64) *float64 {
	if math.IsNaN(v) {
		return nil
	}
	return &v
}
