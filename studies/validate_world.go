package studies

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"optimize/simcore/cluster"
	"optimize/simcore/errtext"
	"optimize/strategies/settings"
	"optimize/strategies/workloads"
	"optimize/studies/report"
)

// A study tunes its strategy in one world (model, GPU, TP, latency
// model). Validating in another re-runs the trial and the baseline there
// on held-out seeds: the strategy's settings stay the trial's, only the
// world settings given change, in both, so the comparison asks whether
// the gain survives the change of world.

// WorldSetting is one world setting of another world, given by its key
// (settings.WorldKeys) as text.
type WorldSetting struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	// Flag is how the user gave it ("--latency-model"), for errors; ""
	// names the setting's own flag. Not stored.
	Flag string `json:"-"`
}

// WorldChange is another world: the world settings it gives; every other
// setting stays the study's.
type WorldChange []WorldSetting

// String names the change by its settings, "latency.model=trained-physics"
// or "model=qwen/qwen3-14b,tp=1".
func (w WorldChange) String() string {
	parts := make([]string, len(w))
	for i, s := range w {
		parts[i] = s.Key + "=" + s.Value
	}
	return strings.Join(parts, ",")
}

// flag is how the user gave s.
func (s WorldSetting) flag() string {
	if s.Flag != "" {
		return s.Flag
	}
	if set, ok := settings.Lookup(s.Key); ok {
		return "--" + set.Flag
	}
	return s.Key
}

// apply sets the change's settings in c and resolves the world they
// name. A nil change leaves c as it is.
func (w WorldChange) apply(c *cluster.Config) error {
	if len(w) == 0 {
		return nil
	}
	for _, s := range w {
		set, ok := settings.Lookup(s.Key)
		if !ok || !(slices.Contains(settings.WorldKeys(), s.Key) || settings.WorldFileKey(s.Key)) {
			return fmt.Errorf("%s: %q is not a world setting (allowed: %s)", s.flag(), s.Key, strings.Join(settings.WorldKeys(), ", "))
		}
		if err := set.Set(c, s.Value); err != nil {
			return fmt.Errorf("%s: %v", s.flag(), err)
		}
	}
	if err := settings.CheckConfig(c); err != nil {
		return w.blame(err)
	}
	return nil
}

// blame names the flag a world error is about, as `simulate` does: the
// one that gave the setting the error names, else the first given (the
// world it chose is what fails, "--model: tp: … does not fit").
func (w WorldChange) blame(err error) error {
	var bad *errtext.Setting
	if errors.As(err, &bad) {
		for _, s := range w {
			if s.Key == bad.Key {
				return fmt.Errorf("%s: %w", s.flag(), err)
			}
		}
	}
	return fmt.Errorf("%s: %w", w[0].flag(), err)
}

// checkWorlds resolves each world of o for study r — the template's
// defaults there — so that a world that cannot run (a model that does not
// fit at the TP, a blackbox profile that does not exist) is a one-line
// usage error before anything runs.
func (e *Env) checkWorlds(r *report.Report, o ValidateOptions) error {
	seen := map[string]bool{}
	for _, w := range o.Worlds {
		if len(w) == 0 {
			return errtext.Usage("--world: an empty world (give --world, --model, --hardware, --tp or --latency-model)")
		}
		if seen[w.String()] {
			return errtext.Usage("%s: world %s is given twice", w[0].flag(), w)
		}
		seen[w.String()] = true
		start, err := e.baseOf(r.Study)
		if err != nil {
			return err
		}
		c, err := r.Template.Config(start, r.Template.Defaults())
		if err != nil {
			return err
		}
		if err := w.apply(&c); err != nil {
			return errtext.UsageError{Err: err}
		}
	}
	return nil
}

// point is one place a validation compares the trials with the baseline:
// the study's operating point (regime ""), a regime, another world, or a
// regime in another world.
type point struct {
	regime string
	world  WorldChange
	label  string // the runs' key prefix, "validate|study", "validate|REGIME", "validate|world:CHANGE" or "validate|world:CHANGE|REGIME"
}

// points are where request q compares: the study's operating point and
// its regimes, or in each of its worlds the operating point and its
// regimes (a capacity-relative regime, load-0.9, at the capacity
// measured in that world).
func (q validationRequest) points() []point {
	if len(q.Worlds) > 0 {
		var out []point
		for _, w := range q.Worlds {
			out = append(out, point{world: w, label: "validate|world:" + w.String()})
			for _, rg := range q.Regimes {
				out = append(out, point{world: w, regime: rg, label: "validate|world:" + w.String() + "|" + rg})
			}
		}
		return out
	}
	out := []point{{label: "validate|study"}}
	for _, rg := range q.Regimes {
		out = append(out, point{regime: rg, label: "validate|" + rg})
	}
	return out
}

// worldEvidence is a world's block of a validation, at the study's
// operating point or at a regime: the world the baseline ran in there,
// whether the study was tuned in it, and the candidates, graded as at a
// regime unless both are the study's own (elsewhere nothing was fitted:
// a gain that fails there does not hold, it did not overfit).
func worldEvidence(r *report.Report, pt point, p *plan, cands []report.CandidateEvidence) report.WorldEvidence {
	we := p.worlds[pt.label]
	we.Given, we.Regime, we.Candidates = pt.world.String(), pt.regime, cands
	where := ""
	switch {
	case !we.StudyWorld && pt.regime != "":
		where = " (in the study's world, at its operating point)"
	case !we.StudyWorld:
		where = " (in the study's world)"
	case pt.regime != "":
		where = " (at the study's operating point)"
	}
	if where != "" {
		for i := range we.Candidates {
			c := &we.Candidates[i]
			prim := r.Template.Objectives[r.Template.Primary].Name
			c.Detail += "; in study " + report.Percent(float64(c.Objectives[prim].InStudyDelta)) + where
		}
	}
	return we
}

// placeWorld records in p the world the baseline runs in at world point
// pt under wl, and whether the study was tuned in it (then the block is
// graded as a plain held-out validation): its template's world, or, for
// a robust study over --worlds, one of those (and only those).
func (e *Env) placeWorld(r *report.Report, wl *workloads.Workload, pt point, p *plan) error {
	defaults := r.Template.Defaults()
	_, there, err := e.configs(r, wl, defaults, pt.world)
	if err != nil {
		return fmt.Errorf("world %s: %v", pt.world, err)
	}
	world := there.Where()
	tunedIn := robustWorlds(r.Study)
	if tunedIn == nil {
		tunedIn = []WorldChange{nil}
	}
	tuned := false
	for _, w := range tunedIn {
		_, own, err := e.configs(r, wl, defaults, w)
		if err != nil {
			return err
		}
		// The same world: the same record, and the same latency
		// coefficients (a world file's are not in the record).
		tuned = tuned || (world == own.Where() && there.Physics == own.Physics && there.Coefficients == own.Coefficients)
	}
	p.worlds[pt.label] = report.WorldEvidence{World: world, Line: world.Line(), StudyWorld: tuned}
	return nil
}
