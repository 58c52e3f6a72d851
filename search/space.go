// Package search proposes parameter vectors for a study and scores what
// comes back: ask/tell sampling (TPE, random, grid) over goptuna's rdb.v2
// storage, scalarisation with constraint penalties, Pareto fronts,
// hypervolume and parameter importance.
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

	"github.com/c-bata/goptuna"
)

// Kind is the type of one search-space axis.
type Kind int

const (
	// Float is uniform on [Low, High].
	Float Kind = iota
	// Int is uniform on the whole numbers Low..High, both included.
	Int
	// LogFloat is uniform in log space on [Low, High]; Low must be > 0.
	LogFloat
	// Categorical takes the index of one of Choices (0..len(Choices)-1).
	Categorical
)

func (k Kind) String() string {
	switch k {
	case Float:
		return "float"
	case Int:
		return "int"
	case LogFloat:
		return "log-float"
	case Categorical:
		return "categorical"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Param is one axis of the search space. Bounds are inclusive. Values are
// always float64: integers are whole numbers, categoricals are indices.
type Param struct {
	Name      string
	Kind      Kind
	Low, High float64
	Choices   []string
	// When, if set, makes the axis conditional: it is sampled only while
	// an earlier categorical axis takes one of the given choices, and is
	// NaN (inactive: neither stored nor shown to TPE) otherwise, so that
	// its TPE model sees only the trials where it was active.
	When *When
}

// When names an earlier categorical axis and the choice indices under
// which a conditional axis is active.
type When struct {
	Param   int
	Choices []float64
}

// Active reports which axes are active at values: those without a
// condition, and those whose condition's axis is active and takes one of
// its choices.
func Active(space []Param, values []float64) []bool {
	active := make([]bool, len(space))
	for i, p := range space {
		active[i] = p.When == nil || (active[p.When.Param] && slices.Contains(p.When.Choices, values[p.When.Param]))
	}
	return active
}

// deactivate sets the inactive axes of values to NaN.
func deactivate(space []Param, values []float64) []float64 {
	for i, on := range Active(space, values) {
		if !on {
			values[i] = math.NaN()
		}
	}
	return values
}

// validateSpace returns a one-line error naming the first bad field.
func validateSpace(space []Param) error {
	if len(space) == 0 {
		return fmt.Errorf("search space: no parameters")
	}
	seen := make(map[string]bool, len(space))
	for i, p := range space {
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
			if w.Param < 0 || w.Param >= i || space[w.Param].Kind != Categorical {
				return fmt.Errorf("param %q: a condition names an earlier categorical param, got index %d", p.Name, w.Param)
			}
			for _, c := range w.Choices {
				if c != math.Trunc(c) || c < 0 || int(c) >= len(space[w.Param].Choices) {
					return fmt.Errorf("param %q: condition choice %g is not an index of %q's choices", p.Name, c, space[w.Param].Name)
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
		return fmt.Errorf("param %q: unknown kind %d (want Float, Int, LogFloat or Categorical)", p.Name, int(p.Kind))
	}
	return nil
}

// validateValues checks a vector handed to AskFixed against the space:
// inactive axes NaN, active ones in range.
func validateValues(space []Param, values []float64) error {
	if len(values) != len(space) {
		return fmt.Errorf("values: got %d, the search space has %d parameters", len(values), len(space))
	}
	for i, on := range Active(space, values) {
		p, v := space[i], values[i]
		if !on {
			if !math.IsNaN(v) {
				return fmt.Errorf("values[%d] (%s): %g given while the param is inactive (want NaN)", i, p.Name, v)
			}
			continue
		}
		low, high := p.bounds()
		if math.IsNaN(v) || v < low || v > high {
			return fmt.Errorf("values[%d] (%s): %g outside [%g, %g]", i, p.Name, v, low, high)
		}
		if (p.Kind == Int || p.Kind == Categorical) && v != math.Trunc(v) {
			return fmt.Errorf("values[%d] (%s): %g is not a whole number", i, p.Name, v)
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

// drawUniformVector samples every axis from one stream.
// drawUniformVector draws every axis, active or not, so that the stream
// advances the same whatever the conditions, then masks the inactive ones.
func drawUniformVector(space []Param, rng *rand.Rand) []float64 {
	values := make([]float64, len(space))
	for i, p := range space {
		values[i] = p.drawUniform(rng)
	}
	return deactivate(space, values)
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
