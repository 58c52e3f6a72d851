package calibration

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/optimize"

	"optimize/simcore/cluster"
	"optimize/simcore/keys"
	"optimize/simcore/latency"
)

// A fit moves the latency model's coefficients until the simulator's
// replays of a deployment's runs match what its server did: each run's
// TTFT mean, E2E mean and P90 and, where the run records chunks, ITL
// mean, by the sum of their squared log ratios (a 10 % miss weighs the
// same on a 50 ms TTFT as on a 5 s E2E). gonum's Nelder-Mead searches;
// each coefficient moves as floor + e^x, so it never leaves its physical
// range (for trained-physics: prefill no faster than its FLOPs at the
// GPU's peak, KV and weight reads no faster than HBM, β ≥ 1; every other
// coefficient ≥ 0).

// A Coefficient is one coefficient a fit moves.
type Coefficient struct {
	Key   string  // its setting's key
	Floor float64 // its least physical value
	get   func(latency.Spec) float64
	set   func(*cluster.Config, float64)
}

// Coefficients are those a fit of the world of cfg moves:
//   - trained-physics: β1a (≥ 1), β2a, β3 (≥ 1), β4 (TP > 1), β6, β7, β1b,
//     β2b (≥ 1), α0 (the fixed per-request overhead: client, HTTP,
//     tokenisation), α1, α2. β5 (µs per layer) stays: for one model it
//     is a per-step constant like β7, which moves; β8 moves only for an
//     interleaved MoE model; β_EP has no effect without data parallelism;
//   - blackbox: α0…α2 and β0…β2, each ≥ 0.
func Coefficients(cfg cluster.Config) ([]Coefficient, error) {
	w, err := cfg.Resolve()
	if err != nil {
		return nil, err
	}
	var out []Coefficient
	switch w.Kind() {
	case latency.KindTrainedPhysics:
		floors := map[string]float64{"1a": 1, "3": 1, "2b": 1}
		for i, name := range latency.PhysicsBetaNames {
			switch {
			case name == "5" || name == "ep":
				continue
			case name == "4" && cfg.TP == 1:
				continue
			case name == "8" && !(w.Spec.Arch.InterleaveStep > 0 && w.Spec.Arch.MoE()):
				continue
			}
			out = append(out, Coefficient{Key: keys.Member(keys.PhysicsBeta, name), Floor: floors[name],
				get: func(s latency.Spec) float64 { return s.Physics.Beta[i] },
				set: func(c *cluster.Config, v float64) { c.Physics.Beta[i], c.Physics.BetaSet[i] = v, true }})
		}
		for i := range 3 {
			out = append(out, Coefficient{Key: keys.Member(keys.PhysicsAlpha, fmt.Sprint(i)),
				get: func(s latency.Spec) float64 { return s.Physics.Alpha[i] },
				set: func(c *cluster.Config, v float64) { c.Physics.Alpha[i], c.Physics.AlphaSet[i] = v, true }})
		}
	case latency.KindBlackbox:
		for i := range 3 {
			out = append(out,
				Coefficient{Key: keys.Member(keys.LatencyAlpha, fmt.Sprint(i)),
					get: func(s latency.Spec) float64 { return s.Coeffs.Alpha[i] },
					set: func(c *cluster.Config, v float64) { c.Coefficients.Alpha[i], c.Coefficients.AlphaSet[i] = v, true }},
				Coefficient{Key: keys.Member(keys.LatencyBeta, fmt.Sprint(i)),
					get: func(s latency.Spec) float64 { return s.Coeffs.Beta[i] },
					set: func(c *cluster.Config, v float64) { c.Coefficients.Beta[i], c.Coefficients.BetaSet[i] = v, true }})
		}
	default:
		return nil, fmt.Errorf("latency.model: a fit moves trained-physics or blackbox coefficients; %s has none (allowed: %s, %s)", w.Kind(), latency.KindTrainedPhysics, latency.KindBlackbox)
	}
	return out, nil
}

// A Target is a run replayed in its configuration (the run's settings
// and the world being fitted).
type Target struct {
	Run    *Run
	Config cluster.Config
}

// FitOptions bound a fit.
type FitOptions struct {
	Compare     Options
	Evaluations int // most replays of the whole set (default 1500)
}

// Fitted is a fit's result: the coefficients (setting key → value, in
// Coefficients' order) and each run's errors with them.
type Fitted struct {
	Keys   []string   `json:"-"`
	Values []float64  `json:"-"`
	Loss   float64    `json:"loss"`
	Evals  int        `json:"evaluations"`
	Errors []RunError `json:"runs"`
}

// RunError is a run's workload-level errors, signed fractions
// (simulated / real − 1).
type RunError struct {
	Run      string  `json:"run" yaml:"run"`
	TTFTMean float64 `json:"ttft_mean" yaml:"ttft_mean"`
	E2EMean  float64 `json:"e2e_mean" yaml:"e2e_mean"`
	E2EP90   float64 `json:"e2e_p90" yaml:"e2e_p90"`
	ITLMean  float64 `json:"itl_mean,omitempty" yaml:"itl_mean,omitempty"`
}

// Apply writes the fitted coefficients onto c.
func (f *Fitted) Apply(c *cluster.Config, coeffs []Coefficient) {
	for i, k := range coeffs {
		k.set(c, f.Values[i])
	}
}

// Fit fits the coefficients of the targets' world (they share it: the
// first target's coefficients are moved on every target) to their runs.
func Fit(targets []Target, o FitOptions) (*Fitted, error) {
	if len(targets) == 0 {
		return nil, errors.New("calibrate --fit: no run to fit")
	}
	coeffs, err := Coefficients(targets[0].Config)
	if err != nil {
		return nil, err
	}
	w, err := targets[0].Config.Resolve()
	if err != nil {
		return nil, err
	}
	x0 := make([]float64, len(coeffs))
	for i, k := range coeffs {
		// Start from the data's value, lifted off its floor (a value at
		// the floor has no logarithm to move from).
		x0[i] = math.Log(max(k.get(w.Spec)-k.Floor, 0.05*max(k.Floor, 1)))
	}
	values := func(x []float64) []float64 {
		v := make([]float64, len(x))
		for i := range x {
			v[i] = coeffs[i].Floor + math.Exp(x[i])
		}
		return v
	}
	var firstErr error
	loss := func(x []float64) float64 {
		errs, err := evaluate(targets, coeffs, values(x), o.Compare)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			return math.Inf(1)
		}
		return lossOf(errs)
	}
	evals := o.Evaluations
	if evals == 0 {
		evals = 1500
	}
	res, err := optimize.Minimize(optimize.Problem{Func: loss}, x0,
		&optimize.Settings{FuncEvaluations: evals, Converger: &optimize.FunctionConverge{Absolute: 1e-6, Iterations: 200}},
		&optimize.NelderMead{SimplexSize: 1})
	if firstErr != nil {
		return nil, firstErr
	}
	if err != nil && res == nil {
		return nil, fmt.Errorf("calibrate --fit: %v", err)
	}
	f := &Fitted{Values: values(res.X), Loss: res.F, Evals: res.Stats.FuncEvaluations}
	for _, k := range coeffs {
		f.Keys = append(f.Keys, k.Key)
	}
	if f.Errors, err = evaluate(targets, coeffs, f.Values, o.Compare); err != nil {
		return nil, err
	}
	return f, nil
}

// evaluate replays every target with the coefficients at values (runs
// on their own goroutines; each replay is deterministic, so the result
// does not depend on scheduling) and returns each run's errors.
func evaluate(targets []Target, coeffs []Coefficient, values []float64, o Options) ([]RunError, error) {
	out := make([]RunError, len(targets))
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cfg := t.Config
			for j, k := range coeffs {
				k.set(&cfg, values[j])
			}
			out[i], errs[i] = t.errors(cfg, o)
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// errors replays the target's run in cfg and returns its errors.
func (t Target) errors(cfg cluster.Config, o Options) (RunError, error) {
	sim, _, err := t.Run.replay(cfg)
	if err != nil {
		return RunError{}, err
	}
	rep, err := Compare(t.Run, sim, o)
	if err != nil {
		return RunError{}, err
	}
	return ErrorsOf(rep), nil
}

// ErrorsOf is a report's workload-level errors.
func ErrorsOf(r *Report) RunError {
	e := RunError{Run: r.Run}
	if m := r.Metrics[TTFT]; m != nil {
		e.TTFTMean = Signed(m.Workload.RealMean, m.Workload.SimMean)
	}
	if m := r.Metrics[E2E]; m != nil {
		e.E2EMean = Signed(m.Workload.RealMean, m.Workload.SimMean)
		e.E2EP90 = Signed(m.Workload.RealP90, m.Workload.SimP90)
	}
	if m := r.Metrics[ITL]; m != nil {
		e.ITLMean = Signed(m.Workload.RealMean, m.Workload.SimMean)
	}
	return e
}

// lossOf sums the fourth powers of the log ratios of every run's
// figures: the worst figure weighs most, as the question a fit answers
// ("is every figure within x %?") weighs it.
func lossOf(errs []RunError) float64 {
	var sum float64
	for _, e := range errs {
		for _, v := range []float64{e.TTFTMean, e.E2EMean, e.E2EP90} {
			r := math.Log1p(v)
			sum += r * r * r * r
		}
	}
	return sum
}

// HoldOut is the leave-one-run-out check of a fit: each run's errors
// when the world is fitted to the other runs alone.
func HoldOut(targets []Target, o FitOptions) ([]RunError, error) {
	if len(targets) < 2 {
		return nil, nil
	}
	out := make([]RunError, len(targets))
	for i := range targets {
		rest := append(append([]Target{}, targets[:i]...), targets[i+1:]...)
		f, err := Fit(rest, o)
		if err != nil {
			return nil, err
		}
		coeffs, _ := Coefficients(targets[i].Config)
		errs, err := evaluate(targets[i:i+1], coeffs, f.Values, o.Compare)
		if err != nil {
			return nil, err
		}
		out[i] = errs[0]
	}
	return out, nil
}
