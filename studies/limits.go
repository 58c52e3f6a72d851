package studies

import (
	"fmt"

	"optimize/simcore/errtext"
	"optimize/simcore/workload"
	"optimize/strategies/workloads"
)

// Limit bounds the work one command or one API request may ask for, so
// that a typo or a hostile request (trials: 1e12) is refused before
// anything runs instead of running for ever. Each limit is declared once,
// in limitTable: the CLI binds its flag from the table and the server and
// the commands check through Limits.Check, so a flag, a template and an
// HTTP request get the same message.
type Limit int

const (
	LimitTrials   Limit = iota // trials in one study
	LimitSeeds                 // seeds one study or command runs
	LimitRequests              // requests one simulated run generates
	LimitRunning               // studies one server runs at once
	limitCount
)

// limitSpec is one row of the table: the flag that raises the limit, what
// it counts (for messages), its default and why that default.
type limitSpec struct {
	flag, counts string
	def          int64
	why          string
}

// limitTable's defaults are what a laptop survives: the simulator needs
// about 200 MB and 5 s per million requests of the baseline workload, so
// 10 million requests is about 2 GB and a minute per run; 100,000 trials
// of the slo-cascade template take about half an hour on 2 cores (a
// 1,000-trial study takes 15 s) and store about 200 MB; 1,000 seeds is a
// hundred times the held-out default of 10; a server runs each study with
// every CPU, so 4 studies at once already share the cores four ways.
var limitTable = [limitCount]limitSpec{
	LimitTrials:   {"max-trials", "trials per study", 100_000, "about half an hour of slo-cascade on 2 cores"},
	LimitSeeds:    {"max-seeds", "seeds per study or command", 1_000, "a hundred times the held-out default"},
	LimitRequests: {"max-requests", "requests per simulated run", 10_000_000, "about 2 GB and a minute per run"},
	LimitRunning:  {"max-running-studies", "studies running at once in one server", 4, "each runs on every CPU"},
}

// Limits holds a value for each Limit.
type Limits [limitCount]int64

// DefaultLimits are the table's defaults.
func DefaultLimits() Limits {
	var l Limits
	for k, spec := range limitTable {
		l[k] = spec.def
	}
	return l
}

// AllLimits lists the limits in table order.
func AllLimits() []Limit {
	out := make([]Limit, limitCount)
	for k := range out {
		out[k] = Limit(k)
	}
	return out
}

// Flag is the flag that raises the limit, without its dashes.
func (k Limit) Flag() string { return limitTable[k].flag }

// Usage is the flag's help text.
func (k Limit) Usage() string {
	return fmt.Sprintf("the most %s a command or request may ask for (%s); more is refused before anything runs", limitTable[k].counts, limitTable[k].why)
}

// Default is the limit's default value.
func (k Limit) Default() int64 { return limitTable[k].def }

// Of returns the limit's value in l; a zero Limits (a caller that set
// none) has the defaults.
func (l Limits) Of(k Limit) int64 {
	if l[k] <= 0 {
		return limitTable[k].def
	}
	return l[k]
}

// Check refuses n of k above the limit, naming the input (a flag such as
// "--trials", which the API rewrites to its JSON field) and the flag that
// raises the limit.
func (l Limits) Check(k Limit, input string, n int64) error {
	if limit := l.Of(k); n > limit {
		return errtext.Usage("%s: %d is over the limit of %d %s (--%s raises it)", input, n, limit, limitTable[k].counts, limitTable[k].flag)
	}
	return nil
}

// Bad returns the limits' first value below 1 (as flags gave them), as a
// usage error naming its flag.
func (l Limits) Bad() error {
	for k, v := range l {
		if v < 1 {
			return errtext.Usage("--%s: must be ≥ 1, got %d", limitTable[k].flag, v)
		}
	}
	return nil
}

// CheckWorkload refuses a workload whose runs would generate more
// requests than the limit: a spec's num_requests at its regimes, named as
// "SPEC: num_requests". A trace replays its own rows (its file bounds
// them); a spec with num_requests 0 is bounded by the horizon.
func (l Limits) CheckWorkload(w *workloads.Workload) error {
	if w == nil {
		return nil
	}
	return l.CheckSpec(w.Spec)
}

// CheckSpec is CheckWorkload for a spec (nil: none).
func (l Limits) CheckSpec(spec *workload.Spec) error {
	if spec == nil {
		return nil
	}
	return l.Check(LimitRequests, spec.Name+": num_requests", spec.NumRequests)
}
