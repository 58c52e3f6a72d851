package report

import (
	"math"
	"time"

	"optimize/search"
	"optimize/simcore/cluster"
	"optimize/simcore/metrics"
	"optimize/storage"
	"optimize/strategies"
	"optimize/strategies/settings"
)

// StudySummary is one row of `study list --output json` (and GET
// /api/studies): where the study stands and its best primary Δ, read
// without loading its trials.
type StudySummary struct {
	Name           string    `json:"name"`
	Template       string    `json:"template"`
	Workload       string    `json:"workload"`
	State          string    `json:"state"`
	TrialsTotal    int       `json:"trials_total"`
	TrialsComplete int       `json:"trials_complete"`
	Running        int       `json:"running"`
	Created        time.Time `json:"created"`
	// Failure is why the study's last run stopped before its total
	// (state "failed"); absent otherwise.
	Failure string `json:"failure,omitempty"`
	// World is the world of the study's baseline (Report.World); absent
	// for a study stored before studies recorded it whose template is not
	// loaded. BestWorld is the best trial's, for a study whose template
	// tunes the world (a capacity study: the cluster it answers with).
	World     *WorldJSON `json:"world,omitempty"`
	BestWorld *WorldJSON `json:"best_world,omitempty"`
	// Primary is the primary objective's name; BestTrial and BestDelta the
	// best trial so far and its primary objective's change against the
	// baseline (absent before the first complete trial).
	Primary   string   `json:"primary,omitempty"`
	Minimize  bool     `json:"minimize,omitempty"` // the primary objective is minimised
	BestTrial *int     `json:"best_trial,omitempty"`
	BestDelta *float64 `json:"best_delta,omitempty"`
	// BestViolates: the best trial misses a constraint (see
	// Report.ViolationSentence), so its Δ is not a strategy to pick.
	BestViolates bool `json:"best_violates,omitempty"`
}

// Summaries lists every study in store, oldest first, with templates from
// reg.
func Summaries(store *storage.Store, reg *strategies.Registry) ([]StudySummary, error) {
	rows, err := store.Studies()
	if err != nil {
		return nil, err
	}
	out := make([]StudySummary, 0, len(rows))
	for _, row := range rows {
		complete, running, err := store.Counts(row.ID)
		if err != nil {
			return nil, err
		}
		s := StudySummary{Name: row.Name, Template: row.Template, Workload: row.Workload, TrialsTotal: row.TrialsTotal,
			TrialsComplete: int(complete), Running: int(running), Created: row.CreatedAt.UTC()}
		s.State = stateOf(s.TrialsComplete, s.TrialsTotal, s.Running, row.Failure)
		s.Failure = row.Failure
		if row.World != nil {
			s.World = worldJSON(*row.World)
		}
		if tpl, err := reg.Get(row.Template); err == nil {
			if s.World == nil {
				if w, err := tpl.SeedsWorld(row.Workload); err == nil {
					s.World = worldJSON(w)
				}
			}
			s.Primary, s.Minimize = tpl.Objectives[tpl.Primary].Name, tpl.Objectives[tpl.Primary].Minimize
			if d, n, violates, ok := bestDelta(store, row.ID, &row.Baseline, tpl); ok && !math.IsNaN(d) {
				s.BestTrial, s.BestDelta, s.BestViolates = &n, &d, violates
			}
			if len(tpl.TunedWorld()) > 0 {
				if w, ok := bestWorld(store, &row, tpl); ok {
					s.BestWorld = worldJSON(w)
				}
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// bestDelta is the best trial's primary objective against the baseline,
// its number, and whether it misses a constraint.
func bestDelta(store *storage.Store, studyID uint, baseline *metrics.Summary, tpl *strategies.Template) (delta float64, number int, violates, ok bool) {
	best, err := store.BestTrial(studyID)
	if err != nil || best == nil {
		return 0, 0, false, false
	}
	if tpl.Primary >= len(best.Objectives) {
		return 0, 0, false, false
	}
	prim := tpl.Objectives[tpl.Primary]
	b, err := strategies.Metric(baseline, prim.Metric)
	if err != nil {
		return 0, 0, false, false
	}
	if !best.Judged { // stored by an older release: judge its metrics
		judged, err := JudgeStored(store, tpl, baseline, best.ID)
		if err != nil {
			return 0, 0, false, false
		}
		best.Violation = judged.Violation()
	}
	return Delta(best.Objectives[tpl.Primary], b), best.Number, !search.Feasible(best.Violation), true
}

// stateOf is "complete", "running" or "incomplete" (stopped before its
// total).
func stateOf(complete, total, running int, failure string) string {
	switch {
	case complete >= total:
		return "complete"
	case running > 0:
		return "running"
	case failure != "":
		return "failed"
	}
	return "incomplete"
}

// bestWorld is the world the study's best trial ran in, for a template
// that tunes the world: its parameters in the study's space (the world
// file's pins) from the study's base configuration.
func bestWorld(store *storage.Store, row *storage.Study, tpl *strategies.Template) (cluster.World, bool) {
	best, err := store.BestTrial(row.ID)
	if err != nil || best == nil {
		return cluster.World{}, false
	}
	std, err := settings.Standard()
	if err != nil {
		return cluster.World{}, false
	}
	if tpl, _, err = StudyTemplate(tpl, std, row.BaseFrom, row.Deployable); err != nil {
		return cluster.World{}, false
	}
	base, _, err := StudyBase(std, row.BaseFrom)
	if err != nil {
		return cluster.World{}, false
	}
	params, err := tpl.Space().Decode(best.Params)
	if err != nil {
		return cluster.World{}, false
	}
	w, err := tpl.WorldFrom(base, params, row.Workload)
	return w, err == nil
}
