// Package search declares the search space and proposes parameter vectors
// over it for a study, and scores what comes back: the space (Param, with
// its one Active rule and one range check, and Value, a number or a
// choice by name: space.go, value.go), ask/tell sampling (TPE, random,
// grid) over goptuna's rdb.v2 storage, scalarisation with constraint
// penalties, Pareto fronts, hypervolume and parameter importance. Templates
// (package strategies) build their parameters from Param, so the
// dependency runs strategies → search only.
//
// goptuna's rdb.v2 storage holds the sampler's trials (so goptuna's
// tooling reads them); the samplers are this package's own: goptuna's TPE
// miscomputes its continuous density, reads the global math/rand and costs
// more per proposal the longer the history (see tpe.go), and its random
// sampler never draws an integer axis's upper bound.
package search

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strconv"
	"strings"

	"github.com/c-bata/goptuna"
)

// Kind is a parameter's value type; the names are those templates write.
type Kind string

// Parameter kinds. Bounds are inclusive.
const (
	// Float is uniform on [Low, High].
	Float Kind = "float"
	// Int is uniform on the whole numbers Low..High, both included.
	Int Kind = "int"
	// LogFloat is uniform in log space on [Low, High]; Low must be > 0.
	LogFloat Kind = "log-float"
	// Categorical takes one of Choices.
	Categorical Kind = "categorical"
)

// Kinds lists every kind, in the order errors name them.
var Kinds = []Kind{Float, Int, LogFloat, Categorical}

// Param is one parameter of a search space: the one description of a
// tunable dimension that templates declare, the samplers sample, values
// are checked against and reports display. Bounds are inclusive.
type Param struct {
	Name      string
	Kind      Kind
	Low, High float64  // numeric kinds
	Choices   []string // categorical
	// When, if set, makes the parameter conditional: it is active only
	// while an earlier categorical parameter is active and takes one of the
	// given choices. An inactive parameter's value is Inactive: neither
	// sampled, stored, shown to TPE nor applied, so that its TPE model sees
	// only the trials where it was active.
	When *When
}

// When names an earlier categorical parameter and the choices of it under
// which a conditional parameter is active.
type When struct {
	Param   string
	Choices []string
}

// Space is an ordered list of parameters; a vector of values over it is a
// []Value of the same length.
type Space []Param

// Index is the position of the parameter called name, or -1.
func (s Space) Index(name string) int {
	return slices.IndexFunc(s, func(p Param) bool { return p.Name == name })
}

// Active reports which parameters are active at values: those without a
// condition, and those whose condition's parameter is active and takes one
// of the condition's choices.
func (s Space) Active(values []Value) []bool {
	active := make([]bool, len(s))
	for i, p := range s {
		w := p.When
		if w == nil {
			active[i] = true
			continue
		}
		j := s.Index(w.Param)
		active[i] = j >= 0 && j < i && active[j] && slices.Contains(w.Choices, values[j].Choice)
	}
	return active
}

// deactivate sets the inactive axes of internal (values as the sampler
// holds them: categoricals by index) to NaN.
func (s Space) deactivate(internal []float64) []float64 {
	for i, on := range s.Active(s.values(internal)) {
		if !on {
			internal[i] = math.NaN()
		}
	}
	return internal
}

// Validate returns a one-line error naming the first bad field.
func (s Space) Validate() error {
	if len(s) == 0 {
		return fmt.Errorf("search space: no parameters")
	}
	seen := make(map[string]bool, len(s))
	for i, p := range s {
		if p.Name == "" {
			return fmt.Errorf("search space: param[%d].Name is empty", i)
		}
		if seen[p.Name] {
			return fmt.Errorf("param %q: duplicate name", p.Name)
		}
		seen[p.Name] = true
		if err := p.validate(); err != nil {
			return err
		}
		if w := p.When; w != nil {
			j := s.Index(w.Param)
			if j < 0 || j >= i || s[j].Kind != Categorical {
				return fmt.Errorf("param %q: a condition names an earlier categorical param, got %q", p.Name, w.Param)
			}
			if len(w.Choices) == 0 {
				return fmt.Errorf("param %q: a condition needs at least one choice of %q", p.Name, w.Param)
			}
			for _, c := range w.Choices {
				if !slices.Contains(s[j].Choices, c) {
					return fmt.Errorf("param %q: condition choice %q is not one of %q's choices", p.Name, c, w.Param)
				}
			}
		}
	}
	return nil
}

func (p Param) validate() error {
	switch p.Kind {
	case Float, Int, LogFloat:
		if math.IsNaN(p.Low) || math.IsInf(p.Low, 0) || math.IsNaN(p.High) || math.IsInf(p.High, 0) {
			return fmt.Errorf("param %q: bounds must be finite, got Low=%g High=%g", p.Name, p.Low, p.High)
		}
		if p.Low > p.High {
			return fmt.Errorf("param %q: Low %g > High %g", p.Name, p.Low, p.High)
		}
		if p.Kind == LogFloat && p.Low <= 0 {
			return fmt.Errorf("param %q: log-float Low must be > 0, got %g", p.Name, p.Low)
		}
		if p.Kind == Int && (p.Low != math.Trunc(p.Low) || p.High != math.Trunc(p.High)) {
			return fmt.Errorf("param %q: int bounds must be whole numbers, got Low=%g High=%g", p.Name, p.Low, p.High)
		}
		if p.Kind == Int && (math.Abs(p.Low) > 1<<52 || math.Abs(p.High) > 1<<52) {
			return fmt.Errorf("param %q: int bounds must be within ±2^52", p.Name)
		}
	case Categorical:
		if len(p.Choices) == 0 {
			return fmt.Errorf("param %q: categorical needs at least one choice", p.Name)
		}
	default:
		return fmt.Errorf("param %q: unknown kind %q (allowed: %s)", p.Name, p.Kind, KindNames())
	}
	return nil
}

// KindNames is Kinds, comma-separated, for errors.
func KindNames() string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// validateValues checks a vector given to AskFixed or Warm against the
// space: inactive parameters Inactive, active ones in range.
func (s Space) validateValues(values []Value) error {
	if len(values) != len(s) {
		return fmt.Errorf("values: got %d, the search space has %d parameters", len(values), len(s))
	}
	for i, on := range s.Active(values) {
		p, v := s[i], values[i]
		if !on {
			if !v.Absent() {
				return fmt.Errorf("values[%d] (%s): %s given while the param is inactive", i, p.Name, p.Format(v))
			}
			continue
		}
		if err := p.Check(v); err != nil {
			return fmt.Errorf("values[%d]: %v", i, err)
		}
	}
	return nil
}

// bounds returns the inclusive value range; categoricals range over indices.
func (p Param) bounds() (float64, float64) {
	if p.Kind == Categorical {
		return 0, float64(len(p.Choices) - 1)
	}
	return p.Low, p.High
}

// single reports whether the axis holds exactly one value. goptuna's TPE
// loops forever on such axes, so they never reach it.
func (p Param) single() bool {
	low, high := p.bounds()
	return low == high
}

// floatSteps is the resolution of float axes as stored and modelled: a
// float axis is stored as the integer index of one of floatSteps+1 evenly
// spaced values (log-spaced for log-float), so every float we evaluate
// sits on that grid. (The grid dates from goptuna's TPE, whose continuous
// density was miscomputed while its integer path behaved; studies stored
// since keep reading the same way.)
const floatSteps = 1000

// distribution is the goptuna distribution stored in trial_params, so that
// TPE (and goptuna's dashboard) read our trials like its own.
func (p Param) distribution() interface{} {
	switch p.Kind {
	case Int:
		return goptuna.IntUniformDistribution{Low: int(p.Low), High: int(p.High)}
	case Float, LogFloat:
		return goptuna.IntUniformDistribution{Low: 0, High: floatSteps}
	case Categorical:
		return goptuna.CategoricalDistribution{Choices: append([]string(nil), p.Choices...)}
	}
	return goptuna.UniformDistribution{Low: p.Low, High: p.High}
}

// toInternal maps a value to what goptuna stores (a grid index for floats).
func (p Param) toInternal(v float64) float64 {
	switch p.Kind {
	case Float:
		return math.Round((v - p.Low) / (p.High - p.Low) * floatSteps)
	case LogFloat:
		return math.Round((math.Log(v) - math.Log(p.Low)) / (math.Log(p.High) - math.Log(p.Low)) * floatSteps)
	}
	return v
}

// fromInternal maps goptuna's stored value back to the parameter's,
// rounded to 12 significant digits so that exports read 6.935, not
// 6.9350000000000005.
func (p Param) fromInternal(i float64) float64 {
	switch p.Kind {
	case Float:
		return p.clamp(round12(p.Low + i/floatSteps*(p.High-p.Low)))
	case LogFloat:
		return p.clamp(round12(math.Exp(math.Log(p.Low) + i/floatSteps*(math.Log(p.High)-math.Log(p.Low)))))
	}
	return i
}

func round12(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	return r
}

// internalBounds is the whole-number range of a numeric axis as stored:
// the grid indices for floats, the values for ints.
func (p Param) internalBounds() (float64, float64) {
	if p.Kind == Float || p.Kind == LogFloat {
		return 0, floatSteps
	}
	return p.Low, p.High
}

// quantize puts a float on the grid TPE sees.
func (p Param) quantize(v float64) float64 {
	if p.Kind == Float || p.Kind == LogFloat {
		return p.fromInternal(p.toInternal(v))
	}
	return v
}

// drawUniform samples the axis with both bounds reachable for integers and
// categoricals (goptuna's random sampler never draws the top integer).
func (p Param) drawUniform(rng *rand.Rand) float64 {
	low, high := p.bounds()
	if low == high {
		return low
	}
	switch p.Kind {
	case Int, Categorical:
		return low + float64(rng.Int63n(int64(high-low)+1))
	case LogFloat:
		logLow, logHigh := math.Log(low), math.Log(high)
		return p.quantize(p.clamp(math.Exp(logLow + rng.Float64()*(logHigh-logLow))))
	}
	return p.quantize(p.clamp(low + rng.Float64()*(high-low)))
}

// clamp brings a proposal back into range (TPE's integer path can land on
// Low-0.5, and exp/log round trips can leave the bounds by one ulp).
func (p Param) clamp(v float64) float64 {
	if p.Kind == Int || p.Kind == Categorical {
		v = math.Round(v)
	}
	low, high := p.bounds()
	return math.Min(math.Max(v, low), high)
}

// drawUniformVector draws every axis, active or not, so that the stream
// advances the same whatever the conditions, then masks the inactive ones.
func drawUniformVector(space Space, rng *rand.Rand) []float64 {
	values := make([]float64, len(space))
	for i, p := range space {
		values[i] = p.drawUniform(rng)
	}
	return space.deactivate(values)
}

// Streams keep the random numbers used for different purposes in one trial
// independent of each other.
const (
	streamUniform uint64 = iota + 1
	streamTPE
)

// derivedSeed mixes (study seed, trial number, stream) with SplitMix64 so
// that every trial number gets its own unrelated random stream: resumed or
// parallel processes asking different numbers never repeat a proposal.
func derivedSeed(studySeed int64, number int, stream uint64) int64 {
	h := splitMix64(uint64(studySeed))
	h = splitMix64(h ^ uint64(number))
	h = splitMix64(h ^ stream)
	return int64(h >> 1)
}

func splitMix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func newTrialRand(studySeed int64, number int, stream uint64) *rand.Rand {
	return rand.New(rand.NewSource(derivedSeed(studySeed, number, stream)))
}
