package report

import (
	"optimize/simcore/metrics"
)

// TrialDetail is `study show NAME --trial N --output json` (and GET
// /api/studies/{name}/trials/{n}): one complete trial, its objectives'
// changes against the baseline, and its metrics on every seed beside the
// baseline's on the same seed.
type TrialDetail struct {
	Trial      int                `json:"trial"`
	Params     map[string]any     `json:"params"`
	Objectives map[string]float64 `json:"objectives"`
	Deltas     map[string]Num     `json:"deltas"`
	Score      float64            `json:"score"`
	Metrics    metrics.Summary    `json:"metrics"`
	Seeds      []SeedDetail       `json:"seeds"`
	// World is the world the trial ran in (Report.TrialWorld).
	World *WorldJSON `json:"world"`
	// Settings is as BestJSON's: every setting in effect, by key.
	Settings map[string]string `json:"settings,omitempty"`
}

// SeedDetail is one seed's run of the trial and of the baseline.
type SeedDetail struct {
	Seed     int64           `json:"seed"`
	Metrics  metrics.Summary `json:"metrics"`
	Baseline metrics.Summary `json:"baseline"`
}

// Trial describes complete trial n; false when there is none.
func (r *Report) Trial(n int) (TrialDetail, bool) {
	c := r.ByNumber(n)
	if c == nil {
		return TrialDetail{}, false
	}
	base, _ := r.BaselineObjectives()
	d := TrialDetail{Trial: n, Params: r.ParamMap(c.Params), Objectives: map[string]float64{}, Deltas: map[string]Num{},
		Score: c.Score, Metrics: c.Summary(), World: worldJSON(r.TrialWorld(c))}
	d.Settings, _ = r.TrialSettings(c)
	for k, o := range r.Template.Objectives {
		d.Objectives[o.Name] = c.Objectives[k]
		d.Deltas[o.Name] = Num(Delta(c.Objectives[k], base[k]))
	}
	for i, s := range r.Seeds {
		d.Seeds = append(d.Seeds, SeedDetail{Seed: s, Metrics: c.Seeds()[i], Baseline: r.BaseSeeds[i]})
	}
	return d, true
}
