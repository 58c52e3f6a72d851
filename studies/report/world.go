package report

import (
	"fmt"
	"strings"

	"optimize/simcore/cluster"
	"optimize/strategies/settings"
)

// A study's world — model, GPU, TP, latency model, instances and KV
// blocks — is recorded when it is created; a template that tunes world
// settings (strategies.Template.TunedWorld) runs each trial in the world
// its parameters give, which the reports state for the best trial and
// each Pareto trial.

// loadWorld sets r.World from the study's record, or to the seeds' world
// for a study stored before studies recorded theirs.
func (r *Report) loadWorld() error {
	if r.Study.World != nil {
		r.World = *r.Study.World
		return nil
	}
	w, err := r.Template.SeedsWorld(r.Study.Workload)
	if err != nil {
		return fmt.Errorf("study %s: its world (stored before studies recorded it): %v", r.Study.Name, err)
	}
	r.World, r.WorldAssumed = w, true
	return nil
}

// TunesWorld reports whether the study's trials run in worlds of their
// own: its template tunes a world setting.
func (r *Report) TunesWorld() bool { return len(r.Template.TunedWorld()) > 0 }

// TrialWorld is the world complete trial c ran in: the study's, unless
// the template tunes the world, then the one c's parameters give.
func (r *Report) TrialWorld(c *Result) cluster.World {
	if !r.TunesWorld() {
		return r.World
	}
	std, err := settings.Standard()
	if err != nil {
		return r.World
	}
	base, _, err := StudyBase(std, r.Study.BaseFrom)
	if err != nil {
		return r.World
	}
	w, err := r.Template.WorldFrom(base, c.Params, r.Study.Workload)
	if err != nil { // it ran: its parameters make a configuration
		return r.World
	}
	if r.WorldAssumed {
		// Before studies recorded their world no template could choose
		// one: only the cluster's shape varies.
		shape := w
		w = r.World
		w.Instances, w.KVBlocks = shape.Instances, shape.KVBlocks
	}
	return w
}

// WorldText is the study's world as `show` states it, with a note when it
// is assumed.
func (r *Report) WorldText() string {
	text := r.World.String()
	if r.WorldAssumed {
		text += " (stored before studies recorded their world: the seeds' world, the only one there was)"
	}
	return text
}

// WorldJSON is the world of a study or trial in the documents of show
// and list (and so the dashboard's), with the words the text says it in.
type WorldJSON struct {
	cluster.World
	Line  string `json:"line"`  // cluster.World.String
	Short string `json:"short"` // cluster.World.Short, for a list's column
}

func worldJSON(w cluster.World) *WorldJSON {
	return &WorldJSON{World: w, Line: w.String(), Short: w.Short()}
}

// tunedText names the world settings the template tunes, for headings.
func (r *Report) tunedText() string { return strings.Join(r.Template.TunedWorld(), ", ") }

// trialWorldJSON is c's world for the show document when the template
// tunes the world; nil when every trial ran in the study's.
func (r *Report) trialWorldJSON(c *Result) *WorldJSON {
	if !r.TunesWorld() {
		return nil
	}
	return worldJSON(r.TrialWorld(c))
}
