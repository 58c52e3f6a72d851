package strategies

import (
	"fmt"
	"slices"
	"strings"

	"optimize/simcore/cluster"
	"optimize/simcore/latency"
	"optimize/strategies/settings"
	"optimize/strategies/workloads"
)

// A robust study runs every trial in several scenarios — each of its
// regimes in each of its worlds — and scores it by the aggregate of its
// ratios to the baseline measured in the same scenario (study create
// --regime, --worlds, --aggregate; a template's robust_regimes,
// robust_worlds, robust_aggregate). The first scenario is the study's
// reference: its baseline is the study's baseline, its runs the trial's
// per-seed metrics as in any study.

// BaseRegime names the workload's own operating point in a robust study's
// regimes (it is no built-in regime: it moves nothing).
const BaseRegime = "base"

// Aggregates of a robust study's per-scenario ratios: the worst
// scenario's (the default) or their mean.
const (
	AggregateWorst = "worst"
	AggregateMean  = "mean"
)

// Aggregates lists the aggregate names, the default first.
func Aggregates() []string { return []string{AggregateWorst, AggregateMean} }

// Robust is what a robust study runs every trial in: regimes (BaseRegime
// or built-in regime names) × worlds (latency models; none: the study's
// own world), and how it aggregates the scenarios' ratios.
type Robust struct {
	Regimes   []string `json:"regimes"`
	Worlds    []string `json:"worlds,omitempty"`
	Aggregate string   `json:"aggregate"`
	// Prune stops a trial's runs as soon as the scenarios it has run
	// prove it cannot beat the study's best trial (study create --prune;
	// a template's robust_prune): its score can only grow with every
	// scenario added, so the scenarios run give a lower bound. This is
	// adaptive capping (ParamILS, SMAC) over scenarios; neither vLLM nor
	// llm-d has a counterpart.
	Prune bool `json:"prune,omitempty"`
}

// Active reports whether r asks for more than the study's own scenario.
func (r Robust) Active() bool { return len(r.Regimes) > 0 || len(r.Worlds) > 0 }

// Scenario is one regime in one world of a robust study.
type Scenario struct {
	Regime string // BaseRegime or a built-in regime's name
	World  string // a latency model, or "" for the study's own world
}

// Key names the scenario where its runs are stored and shown:
// "near-capacity", or "near-capacity/trained-physics" in another world.
func (s Scenario) Key() string {
	if s.World == "" {
		return s.Regime
	}
	return s.Regime + "/" + s.World
}

// Scenarios lists r's regimes × worlds, regime-major, the reference first.
func (r Robust) Scenarios() []Scenario {
	regimes, worlds := r.Regimes, r.Worlds
	if len(regimes) == 0 {
		regimes = []string{BaseRegime}
	}
	if len(worlds) == 0 {
		worlds = []string{""}
	}
	var out []Scenario
	for _, rg := range regimes {
		for _, w := range worlds {
			out = append(out, Scenario{Regime: rg, World: w})
		}
	}
	return out
}

// RobustRegimeNames are the names a robust study's regimes may take: base
// and every absolute regime. The capacity-relative ones (load-0.6, …) are
// not among them yet: their rate depends on a capacity measured in each
// scenario's world, which robust studies do not measure.
func RobustRegimeNames() []string {
	names := []string{BaseRegime}
	for _, rg := range workloads.Regimes() {
		if rg.LoadFraction == 0 {
			names = append(names, rg.Name)
		}
	}
	return names
}

// RobustFlags names the flags (or template fields) of a Robust's parts,
// for CheckRobust's messages.
type RobustFlags struct{ Regimes, Worlds, Aggregate, Prune string }

// CheckRobust checks r, naming the flag (or template field) of each part
// in flags, and fills in the default aggregate.
func CheckRobust(r *Robust, flags RobustFlags) error {
	for _, name := range r.Regimes {
		if !slices.Contains(RobustRegimeNames(), name) {
			if _, err := workloads.LookupRegime(name); err == nil {
				return fmt.Errorf("%s: regime %q is relative to the measured capacity, which robust studies do not measure yet (regimes: %s)",
					flags.Regimes, name, strings.Join(RobustRegimeNames(), ", "))
			}
			return fmt.Errorf("%s: unknown regime %q (regimes: %s)", flags.Regimes, name, strings.Join(RobustRegimeNames(), ", "))
		}
	}
	if d := firstRepeat(r.Regimes); d != "" {
		return fmt.Errorf("%s: regime %q given twice", flags.Regimes, d)
	}
	for _, w := range r.Worlds {
		if !slices.Contains(latency.Kinds(), w) && !slices.Contains(settings.BuiltinWorlds(), w) {
			return fmt.Errorf("%s: unknown world %q (latency models: %s; built-in worlds: %s)", flags.Worlds, w, strings.Join(latency.Kinds(), ", "), strings.Join(settings.BuiltinWorlds(), ", "))
		}
	}
	if d := firstRepeat(r.Worlds); d != "" {
		return fmt.Errorf("%s: world %q given twice", flags.Worlds, d)
	}
	if r.Aggregate == "" {
		r.Aggregate = AggregateWorst
	}
	if !slices.Contains(Aggregates(), r.Aggregate) {
		return fmt.Errorf("%s: unknown aggregate %q (aggregates: %s)", flags.Aggregate, r.Aggregate, strings.Join(Aggregates(), ", "))
	}
	if !r.Active() {
		if r.Prune {
			return fmt.Errorf("%s: a study of one scenario has nothing to prune (a trial's scenarios are what it stops between): give %s or %s too", flags.Prune, flags.Regimes, flags.Worlds)
		}
		r.Aggregate = ""
	}
	return nil
}

func firstRepeat(names []string) string {
	for i, n := range names {
		if slices.Contains(names[:i], n) {
			return n
		}
	}
	return ""
}

// Workload is w moved to the scenario's regime (unchanged at BaseRegime).
func (s Scenario) Workload(w *workloads.Workload) *workloads.Workload {
	if s.Regime == BaseRegime {
		return w
	}
	rg, err := workloads.LookupRegime(s.Regime)
	if err != nil {
		return w // CheckRobust refused it
	}
	return w.At(rg)
}

// ApplyWorld moves c to the scenario's world: its latency model (and its
// era, which follows the latency model unless set), or a built-in world
// file's settings, checked in it.
func (s Scenario) ApplyWorld(c *cluster.Config) error {
	if s.World == "" {
		return nil
	}
	if !slices.Contains(latency.Kinds(), s.World) { // a built-in world (CheckRobust)
		name, text, err := settings.ReadWorldFile(s.World)
		if err != nil {
			return fmt.Errorf("world %s: %v", s.World, err)
		}
		if _, err := settings.ApplyWorldFile(name, text, c); err != nil {
			return fmt.Errorf("world %s: %v", s.World, err)
		}
		return nil
	}
	c.LatencyModel = s.World
	if err := settings.CheckConfig(c); err != nil {
		return fmt.Errorf("world %s: %v", s.World, err)
	}
	return nil
}
