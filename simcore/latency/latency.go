// Package latency holds the simulator's step-time models, BLIS's three:
//
//   - blackbox: BLIS's alpha/beta regression fitted per (model, GPU, TP)
//     (the model of BLIS 7fd7a88d, whose runs the simulator reproduces);
//   - trained-physics: roofline terms of the model's architecture on the
//     GPU's peak FLOPS and bandwidth, each times a learned correction
//     (BLIS f90a1e3a's default);
//   - roofline: the uncorrected roofline, max(compute, memory) at the
//     GPU's MFU.
//
// A model turns a step — the batch's prefill chunks and decodes — into µs.
// In vLLM terms a step is one engine-core iteration (one forward pass of
// the scheduler's batch); the α terms are the API server's work around it.
package latency

import (
	"math"
	"strconv"
	"strings"

	"optimize/simcore/errtext"
	"optimize/simcore/keys"
)

// Kinds of latency model, by BLIS's --latency-model names; the first is
// the default of the shipped profile.
const (
	KindBlackbox       = "blackbox"
	KindTrainedPhysics = "trained-physics"
	KindRoofline       = "roofline"
)

// Kinds lists the latency models in the order they are documented.
func Kinds() []string { return []string{KindBlackbox, KindTrainedPhysics, KindRoofline} }

// Chunk is one request's prefill work in a step: Done tokens of its input
// already computed (BLIS's ProgressIndex, cached prefix included), New
// computed now, Input its whole prompt.
type Chunk struct{ Done, New, Input int64 }

// Step is what a batch step computes. The instance fills it once per step;
// each model reads what its formula needs.
type Step struct {
	Requests      int     // requests in the batch, idle decodes included
	Prefills      []Chunk // prefill chunks, in batch order
	PrefillTokens int64   // Σ Chunk.New
	Decodes       int64   // requests decoding one token
	DecodeContext int64   // Σ over them of tokens already processed (ProgressIndex)
}

// Model is a latency model. Times are µs.
type Model interface {
	// StepTime is the duration of a step, at least 1 so the clock moves.
	StepTime(s *Step) int64
	// QueueingTime is the delay before a request of input tokens reaches
	// the wait queue (API parsing, tokenisation, queue insertion).
	QueueingTime(input int64) int64
	// OutputTokenTime is added to TTFT and every ITL (streaming and
	// detokenisation of a token); it never occupies the GPU.
	OutputTokenTime() int64
	// PostDecodeTime is added once to a request's E2E when it completes
	// (response finalisation); it moves no event.
	PostDecodeTime() int64
}

// Spec is everything a latency model is built from, resolved from the
// world's names (model, GPU, latency model) by the simulator's caller.
type Spec struct {
	Kind          string     // one of Kinds()
	Coeffs        Coeffs     // blackbox: the profile's, with any overrides
	ProfileBlocks int64      // blackbox: the profile's KV blocks per instance
	Physics       Physics    // trained-physics
	RooflineAlpha [3]float64 // roofline
	Arch          Arch       // trained-physics and roofline; KV capacity
	Hardware      Hardware   // trained-physics and roofline; KV capacity
}

// Physical reports whether the model reads the architecture and the GPU.
func (s Spec) Physical() bool { return s.Kind == KindTrainedPhysics || s.Kind == KindRoofline }

// New builds the model s names for a TP-way instance.
func New(s Spec, tp int) (Model, error) {
	switch s.Kind {
	case "":
		return nil, errtext.BadSetting(keys.LatencyModel, "not resolved: the world (model, GPU, TP) names no latency model yet")
	case KindBlackbox:
		return NewBlackbox(s.Coeffs)
	case KindTrainedPhysics:
		return NewTrainedPhysics(s.Physics, s.Arch, s.Hardware, tp)
	case KindRoofline:
		return NewRoofline(s.RooflineAlpha, s.Arch, s.Hardware, tp)
	}
	return nil, errtext.BadSetting(keys.LatencyModel, "must be one of %s, got %q", strings.Join(Kinds(), ", "), s.Kind)
}

// finite reports whether every value is a finite number ≥ 0, naming the
// first that is not as key.i.
func finite(key string, vs []float64) error {
	for i, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return errtext.BadSetting(keys.Member(key, strconv.Itoa(i)), "must be a finite number ≥ 0, got %v", v)
		}
	}
	return nil
}

// toMicros truncates a float µs figure as BLIS does: NaN and values past
// int64 become MaxInt64 (a step that never ends is visible, not wrapped).
func toMicros(v float64) int64 {
	if math.IsNaN(v) || v >= float64(math.MaxInt64) {
		return math.MaxInt64
	}
	return int64(v)
}
