package latency

import (
	"fmt"

	"optimize/simcore/keys"
)

// The blackbox model is BLIS's alpha/beta regression: a step costs
// β0 + β1·(uncached prefill tokens) + β2·(decode tokens) µs; a request
// waits α0 + α1·(input tokens) µs before it reaches the wait queue; α2 µs
// per output token is added to TTFT and every ITL but never occupies the
// GPU. It has no production counterpart: it is a fit of one vLLM version
// on one (model, GPU, TP), shipped as a profile.

// Coeffs are the α and β coefficients, in µs.
type Coeffs struct {
	Alpha [3]float64
	Beta  [3]float64
}

// Blackbox evaluates the blackbox formulas. It is a value: copy it freely.
type Blackbox struct {
	c      Coeffs
	alpha2 int64
}

// NewBlackbox validates the coefficients (finite, non-negative).
func NewBlackbox(c Coeffs) (Blackbox, error) {
	if err := finite(keys.LatencyAlpha, c.Alpha[:]); err != nil {
		return Blackbox{}, err
	}
	if err := finite(keys.LatencyBeta, c.Beta[:]); err != nil {
		return Blackbox{}, err
	}
	return Blackbox{c: c, alpha2: int64(c.Alpha[2])}, nil
}

// Coeffs returns the coefficients the model was built with.
func (m Blackbox) Coeffs() Coeffs { return m.c }

// StepTime is β0 + β1·prefill + β2·decode, truncated to whole µs and at
// least 1 so the clock moves.
func (m Blackbox) StepTime(s *Step) int64 {
	t := m.c.Beta[0] + m.c.Beta[1]*float64(s.PrefillTokens) + m.c.Beta[2]*float64(s.Decodes)
	return max(1, int64(t))
}

// QueueingTime is α0 + α1·input.
func (m Blackbox) QueueingTime(input int64) int64 {
	return int64(m.c.Alpha[0] + m.c.Alpha[1]*float64(input))
}

// OutputTokenTime is α2 truncated to µs.
func (m Blackbox) OutputTokenTime() int64 { return m.alpha2 }

// PostDecodeTime is 0: the blackbox fit folds completion into α2.
func (Blackbox) PostDecodeTime() int64 { return 0 }

func (m Blackbox) String() string { return fmt.Sprintf("blackbox α=%v β=%v", m.c.Alpha, m.c.Beta) }

// Overrides are blackbox coefficients given by hand, each over the
// profile's.
type Overrides struct {
	Alpha, Beta       [3]float64
	AlphaSet, BetaSet [3]bool
}

// Apply returns c with the overridden coefficients replaced.
func (o Overrides) Apply(c Coeffs) Coeffs {
	for i := range 3 {
		if o.AlphaSet[i] {
			c.Alpha[i] = o.Alpha[i]
		}
		if o.BetaSet[i] {
			c.Beta[i] = o.Beta[i]
		}
	}
	return c
}

// Complete reports whether every coefficient is given.
func (o Overrides) Complete() bool {
	return o.AlphaSet == [3]bool{true, true, true} && o.BetaSet == [3]bool{true, true, true}
}
