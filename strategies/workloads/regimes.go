package workloads

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"optimize/simcore/cluster"
	"optimize/simcore/errtext"
	"optimize/simcore/workload"
)

// Regime is an operating point of a workload: the same clients, classes
// and token distributions at another rate or length, on a cluster with
// more or fewer instances or less GPU KV. A strategy tuned at one point is
// checked at the others (`study validate --regimes`), and a study can run
// at one (`--workload orthogonal-slo@near-capacity`).
type Regime struct {
	Name, Doc string
	// Workload: an absolute rate or a factor (0: unchanged), the same for
	// the request count; SingleTurn keeps each session's first round only.
	Rate, RateScale float64
	Requests        int64
	RequestsScale   float64
	SingleTurn      bool
	KVBlocks        int64   // GPU KV blocks per instance (0: unchanged)
	InstancesScale  float64 // × instances, rounded, at least 1 (0: unchanged)
	// PDTransferBandwidth is the prefill/decode KV link's rate in GB/s
	// (0: unchanged); it has an effect only on a disaggregated cluster.
	PDTransferBandwidth float64
	// LoadFraction sets the rate to this fraction of the measured capacity
	// of the world the workload runs in (0: unchanged). The capacity is a
	// simulation's result, so the rate is set by whoever runs the workload
	// (Workload.AtCapacity) once it is measured; see CapacityDefinition.
	LoadFraction float64
}

// CapacityDefinition says what a capacity-relative regime's capacity is;
// package studies measures it so.
const CapacityDefinition = "the baseline's maximum sustainable rate in that world (cluster, model, GPU, TP, latency model) on the workload: " +
	"the mean over seeds 1–3 of the highest rate, to 2 %, at which every class of the workload meets the default attainment targets " +
	"(TTFT attainment ≥ 0.99 for critical, ≥ 0.95 for the others; study validate --max-rate), measured once per world and workload in a process"

// Regimes is the table of built-in regimes. The absolute rates are the
// orthogonal SLO workload's operating points on its 8-instance cluster,
// whose capacity is near 1,100 req/s (BLIS's own TTFT P99 there: 77 ms at
// 600 req/s, 96 ms at 900, 491 ms at 1200, 1112 ms at 1500).
func Regimes() []Regime {
	return []Regime{
		{Name: "rate-0.5x", Doc: "the workload at half its rate", RateScale: 0.5},
		{Name: "rate-0.8x", Doc: "the workload at 0.8 × its rate", RateScale: 0.8},
		{Name: "rate-1.2x", Doc: "the workload at 1.2 × its rate", RateScale: 1.2},
		{Name: "moderate", Doc: "single-turn, 600 req/s for 10,000 requests: well inside the 8-instance cluster's capacity",
			Rate: 600, Requests: 10000, SingleTurn: true},
		{Name: "near-capacity", Doc: "single-turn, 1000 req/s for 10,000 requests: a steady state just below the 8-instance cluster's capacity",
			Rate: 1000, Requests: 10000, SingleTurn: true},
		{Name: "sustained-overload", Doc: "single-turn, the workload's own rate held for 10 × its requests",
			RequestsScale: 10, SingleTurn: true},
		{Name: "kv-pressure", Doc: "2000 GPU KV blocks per instance: requests are preempted for KV", KVBlocks: 2000},
		{Name: "fewer-instances", Doc: "half the instances", InstancesScale: 0.5},
		{Name: "more-instances", Doc: "1.5 × the instances", InstancesScale: 1.5},
		{Name: "slow-kv-link", Doc: "the prefill/decode KV link at 5 GB/s, a fifth of its 25 GB/s default (a disaggregated cluster's transfers take 5 × as long)", PDTransferBandwidth: 5},
		{Name: "load-0.6", Doc: "0.6 × the measured capacity of the world it runs in: well inside it", LoadFraction: 0.6},
		{Name: "load-0.9", Doc: "0.9 × the measured capacity of the world it runs in: near saturation", LoadFraction: 0.9},
		{Name: "load-1.5", Doc: "1.5 × the measured capacity of the world it runs in: overload", LoadFraction: 1.5},
	}
}

// RegimeNames lists the built-in regimes' names.
func RegimeNames() []string {
	var names []string
	for _, r := range Regimes() {
		names = append(names, r.Name)
	}
	return names
}

// LookupRegime finds a built-in regime by name.
func LookupRegime(name string) (Regime, error) {
	i := slices.IndexFunc(Regimes(), func(r Regime) bool { return r.Name == name })
	if i < 0 {
		return Regime{}, fmt.Errorf("unknown regime %s (regimes: %s)", errtext.Quote(name), strings.Join(RegimeNames(), ", "))
	}
	return Regimes()[i], nil
}

// Describe says what the regime changes, for reports.
func (r Regime) Describe() string { return r.Doc }

// ApplySpec returns a copy of spec at the regime's operating point.
func (r Regime) ApplySpec(spec *workload.Spec) *workload.Spec {
	out := *spec
	out.Clients = slices.Clone(spec.Clients)
	if r.RateScale > 0 {
		out.AggregateRate *= r.RateScale
	}
	if r.Rate > 0 {
		out.AggregateRate = r.Rate
	}
	if r.RequestsScale > 0 {
		out.NumRequests = int64(math.Round(float64(out.NumRequests) * r.RequestsScale))
	}
	if r.Requests > 0 {
		out.NumRequests = r.Requests
	}
	if r.SingleTurn {
		for i := range out.Clients {
			c := &out.Clients[i]
			if c.Reasoning != nil && c.Reasoning.MultiTurn != nil {
				reasoning, multi := *c.Reasoning, *c.Reasoning.MultiTurn
				multi.MaxRounds = 1
				reasoning.MultiTurn = &multi
				c.Reasoning = &reasoning
			}
		}
	}
	if r.Name != "" {
		out.Name = spec.Name + "@" + r.Name
	}
	return &out
}

// applyTrace returns a copy of t at the regime's operating point: a rate
// factor scales the trace's times, an absolute rate becomes its target
// rate, a request count its cap (a count factor has no trace
// counterpart), single-turn replays every row on its own.
func (r Regime) applyTrace(t *Trace) *Trace {
	out := *t
	o := &out.Replay
	if r.RateScale > 0 {
		if o.TargetRate > 0 {
			o.TargetRate *= r.RateScale
		} else {
			if o.TimeScale == 0 {
				o.TimeScale = 1
			}
			o.TimeScale /= r.RateScale
		}
	}
	if r.Rate > 0 {
		o.TargetRate = r.Rate
	}
	if r.Requests > 0 {
		o.MaxRequests = int(r.Requests)
	}
	if r.SingleTurn {
		o.NoSessions = true
	}
	return &out
}

// ApplyConfig moves c to the regime's cluster.
func (r Regime) ApplyConfig(c *cluster.Config) {
	if r.KVBlocks > 0 {
		c.TotalKVBlocks = r.KVBlocks
	}
	if r.InstancesScale > 0 {
		c.NumInstances = max(1, int(math.Round(float64(c.NumInstances)*r.InstancesScale)))
	}
	if r.PDTransferBandwidth > 0 {
		c.PD.TransferBandwidth = r.PDTransferBandwidth
	}
}

// Workload is a resolved workload: a spec at its regimes (none: the spec
// as written), whose cluster changes ApplyConfig makes.
type Workload struct {
	Name    string
	Spec    *workload.Spec // nil for a trace
	Trace   *Trace         // a replayed trace, or nil
	regimes []Regime
	// loadApplied says AtCapacity set the rate of the last regime's
	// LoadFraction.
	loadApplied bool
}

// ApplyConfig moves c to the workload's regimes' cluster.
func (w *Workload) ApplyConfig(c *cluster.Config) {
	for _, r := range w.regimes {
		r.ApplyConfig(c)
	}
}

// ApplyRegimes moves c to the cluster of the regimes the workload name
// names ("NAME@REGIME"), if any; only the name is read, so the world of a
// study whose spec file has gone can still be told.
func ApplyRegimes(name string, c *cluster.Config) error {
	_, regimes, err := workloadRegimes(name)
	if err != nil {
		return err
	}
	(&Workload{regimes: regimes}).ApplyConfig(c)
	return nil
}

// Resolve reads a workload name: a built-in ("orthogonal-slo"), a
// spec file (a path ending in .yaml or .yml), either followed by
// "@REGIME" to run it at a built-in regime.
func Resolve(name string) (*Workload, error) {
	base, regimes, err := workloadRegimes(name)
	if err != nil {
		return nil, err
	}
	if t, isTrace, err := resolveTrace(base); isTrace || err != nil {
		if err != nil {
			return nil, err
		}
		w := &Workload{Name: name, Trace: t}
		for _, r := range regimes {
			w = w.At(r)
		}
		w.Name = name
		return w, nil
	}
	var spec *workload.Spec
	if ext := filepath.Ext(base); ext == ".yaml" || ext == ".yml" {
		if _, statErr := os.Stat(base); statErr != nil {
			return nil, fmt.Errorf("workload spec file %s: %v", base, statErr)
		}
		spec, err = workload.LoadSpecFile(base)
	} else {
		spec, err = Builtins().Spec(base)
	}
	if err != nil {
		return nil, err
	}
	w := &Workload{Name: name, Spec: spec}
	for _, r := range regimes {
		w = w.At(r)
	}
	w.Name = name
	return w, nil
}

// workloadRegimes splits a workload name into its spec's name and the
// regimes its "@REGIME" names (none without one).
func workloadRegimes(name string) (string, []Regime, error) {
	base, regimeName, hasRegime := strings.Cut(name, "@")
	if !hasRegime {
		return base, nil, nil
	}
	reg, err := LookupRegime(regimeName)
	if err != nil {
		return "", nil, err
	}
	return base, []Regime{reg}, nil
}

// LoadFraction is the capacity fraction a capacity-relative regime of the
// workload asks for and AtCapacity has not applied yet, else 0.
func (w *Workload) LoadFraction() float64 {
	if i := w.loadRegime(); i >= 0 && !w.loadApplied {
		return w.regimes[i].LoadFraction
	}
	return 0
}

// loadRegime is the index of the last capacity-relative regime, -1 for
// none.
func (w *Workload) loadRegime() int {
	for i, r := range slices.Backward(w.regimes) {
		if r.LoadFraction > 0 {
			return i
		}
	}
	return -1
}

// AtCapacity is the workload with its capacity-relative regime applied:
// its rate LoadFraction × capacity, then moved by any later regime's rate.
func (w *Workload) AtCapacity(capacity float64) *Workload {
	out := *w
	out.loadApplied = true
	if i := w.loadRegime(); i >= 0 && w.Spec != nil {
		spec := *w.Spec
		spec.AggregateRate = w.regimes[i].LoadFraction * capacity
		for _, r := range w.regimes[i+1:] {
			if r.RateScale > 0 {
				spec.AggregateRate *= r.RateScale
			}
			if r.Rate > 0 {
				spec.AggregateRate = r.Rate
			}
		}
		out.Spec = &spec
	}
	return &out
}

// At returns the workload moved to another regime as well (a validation
// regime on top of the study's own).
func (w *Workload) At(r Regime) *Workload {
	if w.Trace != nil {
		return &Workload{Name: w.Name + "@" + r.Name, Trace: r.applyTrace(w.Trace), regimes: append(slices.Clone(w.regimes), r)}
	}
	return &Workload{Name: w.Name + "@" + r.Name, Spec: r.ApplySpec(w.Spec), regimes: append(slices.Clone(w.regimes), r)}
}
