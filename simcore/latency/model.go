// Package latency is BLIS's blackbox latency model: a step costs
// β0 + β1·(uncached prefill tokens) + β2·(decode tokens) µs; a request waits
// α0 + α1·(input tokens) µs before it reaches the wait queue; α2 µs per
// output token is added to TTFT and every ITL but never occupies the GPU.
package latency

import (
	"fmt"
	"math"

	"optimize/simcore/errtext"
)

// Coeffs are the α and β coefficients, in µs.
type Coeffs struct {
	Alpha [3]float64
	Beta  [3]float64
}

// Model evaluates the blackbox formulas. It is a value: copy it freely.
type Model struct {
	c      Coeffs
	alpha2 int64
}

// New validates the coefficients (finite, non-negative).
func New(c Coeffs) (Model, error) {
	for i, v := range c.Alpha {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return Model{}, errtext.BadSetting(fmt.Sprintf("latency.alpha.%d", i), "must be a finite number ≥ 0, got %v", v)
		}
	}
	for i, v := range c.Beta {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return Model{}, errtext.BadSetting(fmt.Sprintf("latency.beta.%d", i), "must be a finite number ≥ 0, got %v", v)
		}
	}
	return Model{c: c, alpha2: int64(c.Alpha[2])}, nil
}

// Coeffs returns the coefficients the model was built with.
func (m Model) Coeffs() Coeffs { return m.c }

// StepTime is the duration of a step computing prefill uncached tokens and
// decode tokens, truncated to whole µs and at least 1 so the clock moves.
func (m Model) StepTime(prefill, decode int64) int64 {
	t := m.c.Beta[0] + m.c.Beta[1]*float64(prefill) + m.c.Beta[2]*float64(decode)
	return max(1, int64(t))
}

// QueueingTime is the pre-queue delay of a request with input tokens.
func (m Model) QueueingTime(input int64) int64 {
	return int64(m.c.Alpha[0] + m.c.Alpha[1]*float64(input))
}

// OutputTokenTime is α2 truncated to µs, added to TTFT and each ITL.
func (m Model) OutputTokenTime() int64 { return m.alpha2 }
