// Package traffic measures a request stream — a production trace read by
// simcore/workload's TraceReader, or a synthetic workload drawn by its
// Generator — and fits a BLIS v2 workload spec to it. Both kinds of stream
// go through the same statistics, so a fitted spec's generated workload
// is compared with its trace figure for figure.
package traffic

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
)

// Request is one request as the statistics see it.
type Request struct {
	Arrival int64 // µs since the stream's first request
	Input   int   // prompt tokens
	Output  int   // output tokens
	// Blocks names the prompt's blocks of BlockTokens tokens (the last
	// possibly partial); nil when the stream carries no prefix identity.
	Blocks      []uint64
	BlockTokens int
	Session     string // "" when none
}

// Stream yields requests in arrival order; io.EOF after the last.
type Stream interface {
	Next() (Request, error)
}

// Lengths summarises a token-length sample.
type Lengths struct {
	Mean float64 `json:"mean"`
	P10  float64 `json:"p10"`
	P25  float64 `json:"p25"`
	P50  float64 `json:"p50"`
	P75  float64 `json:"p75"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// Reuse is the share of prompt blocks (and of prompt tokens) that an
// earlier request of the stream already contained: a block counts as
// reused when its id was seen before, anywhere earlier in the stream.
type Reuse struct {
	BlockTokens int     `json:"block_tokens"` // tokens per block
	Blocks      int64   `json:"blocks"`       // prompt blocks, all requests
	ReusedBlock int64   `json:"reused_blocks"`
	ByBlocks    float64 `json:"by_blocks"` // ReusedBlock / Blocks
	ByTokens    float64 `json:"by_tokens"` // tokens of reused blocks / prompt tokens
}

// Window is one window of the stream's time line.
type Window struct {
	StartS   float64 `json:"start_s"`
	Requests int     `json:"requests"`
	Rate     float64 `json:"rate"` // requests per second of the window's length
	// BlockReuse and TokenReuse are Reuse.ByBlocks and ByTokens of the
	// window's requests (nil without prefix identity or requests).
	BlockReuse *float64 `json:"block_reuse,omitempty"`
	TokenReuse *float64 `json:"token_reuse,omitempty"`
}

// Stats are a stream's figures.
type Stats struct {
	Requests int     `json:"requests"`
	SpanS    float64 `json:"span_s"` // first to last arrival
	WindowS  float64 `json:"window_s"`
	MeanRate float64 `json:"mean_rate"` // requests / span, req/s
	// PeakRate is the most requests in one full window, per second
	// (the whole span when it is shorter than a window).
	PeakRate        float64  `json:"peak_rate"`
	PeakWindowS     float64  `json:"peak_window_start_s"`
	InterArrivalCV  float64  `json:"inter_arrival_cv"` // standard deviation / mean of the gaps
	Input           Lengths  `json:"input_tokens"`
	Output          Lengths  `json:"output_tokens"`
	Reuse           *Reuse   `json:"prefix_reuse"` // nil: the stream has no prefix identity
	Sessions        int      `json:"sessions"`
	Windows         []Window `json:"windows"`
	ZeroOutputCount int      `json:"zero_output_requests"`

	// The samples behind the figures, for fitting and pictures.
	Arrivals []int64 `json:"-"` // µs
	Inputs   []int   `json:"-"`
	Outputs  []int   `json:"-"`
	// PrefixReused is, per request, the tokens of its leading blocks an
	// earlier request contained (nil without prefix identity).
	PrefixReused []int `json:"-"`
}

// Measure reads s to the end and computes its figures over windows of
// windowUs µs.
func Measure(s Stream, windowUs int64) (*Stats, error) {
	if windowUs <= 0 {
		return nil, fmt.Errorf("window must be > 0 µs, got %d", windowUs)
	}
	st := &Stats{WindowS: float64(windowUs) / 1e6}
	seen := map[uint64]struct{}{}
	sessions := map[string]struct{}{}
	var reuse *Reuse
	var promptTokens, reusedTokens int64
	var winBlocks, winReused, winTokens, winReusedTokens []int64
	for {
		r, err := s.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if n := len(st.Arrivals); n > 0 && r.Arrival < st.Arrivals[n-1] {
			return nil, fmt.Errorf("request %d arrives at %d µs, before the one before it (%d µs)", n+1, r.Arrival, st.Arrivals[n-1])
		}
		st.Arrivals = append(st.Arrivals, r.Arrival)
		st.Inputs = append(st.Inputs, r.Input)
		st.Outputs = append(st.Outputs, r.Output)
		if r.Output == 0 {
			st.ZeroOutputCount++
		}
		if r.Session != "" {
			sessions[r.Session] = struct{}{}
		}
		if r.Blocks == nil {
			continue
		}
		if reuse == nil {
			reuse = &Reuse{BlockTokens: r.BlockTokens}
			// Requests before the first with blocks had none.
			st.PrefixReused = make([]int, len(st.Arrivals)-1)
		}
		w := int(r.Arrival / windowUs)
		for len(winBlocks) <= w {
			winBlocks, winReused = append(winBlocks, 0), append(winReused, 0)
			winTokens, winReusedTokens = append(winTokens, 0), append(winReusedTokens, 0)
		}
		leading, inPrefix := 0, true
		for k, id := range r.Blocks {
			tokens := blockTokens(r, k)
			_, was := seen[id]
			if was {
				reuse.ReusedBlock++
				winReused[w]++
				reusedTokens += int64(tokens)
				winReusedTokens[w] += int64(tokens)
				if inPrefix {
					leading += tokens
				}
			} else {
				inPrefix = false
				seen[id] = struct{}{}
			}
		}
		reuse.Blocks += int64(len(r.Blocks))
		winBlocks[w] += int64(len(r.Blocks))
		promptTokens += int64(r.Input)
		winTokens[w] += int64(r.Input)
		st.PrefixReused = append(st.PrefixReused, leading)
	}
	st.Requests = len(st.Arrivals)
	if st.Requests == 0 {
		return nil, errors.New("no requests")
	}
	st.Sessions = len(sessions)
	st.SpanS = float64(st.Arrivals[st.Requests-1]) / 1e6
	st.rates(windowUs)
	st.InterArrivalCV = interArrivalCV(st.Arrivals)
	st.Input, st.Output = summarise(st.Inputs), summarise(st.Outputs)
	if reuse != nil {
		reuse.ByBlocks = ratio(reuse.ReusedBlock, reuse.Blocks)
		reuse.ByTokens = ratio(reusedTokens, promptTokens)
		st.Reuse = reuse
		for w := range st.Windows {
			if w < len(winBlocks) && winBlocks[w] > 0 {
				b, t := ratio(winReused[w], winBlocks[w]), ratio(winReusedTokens[w], winTokens[w])
				st.Windows[w].BlockReuse, st.Windows[w].TokenReuse = &b, &t
			}
		}
	}
	return st, nil
}

// blockTokens is the tokens of block k of r: BlockTokens, the last block
// what is left of the prompt.
func blockTokens(r Request, k int) int {
	if k < len(r.Blocks)-1 {
		return r.BlockTokens
	}
	return max(0, min(r.BlockTokens, r.Input-k*r.BlockTokens))
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// rates fills the windows, the mean rate and the peak window rate.
func (st *Stats) rates(windowUs int64) {
	span := st.Arrivals[st.Requests-1]
	n := int(span/windowUs) + 1
	st.Windows = make([]Window, n)
	for i := range st.Windows {
		st.Windows[i].StartS = float64(int64(i)*windowUs) / 1e6
	}
	for _, a := range st.Arrivals {
		st.Windows[a/windowUs].Requests++
	}
	for i := range st.Windows {
		// The last window ends at the last arrival.
		length := windowUs
		if rest := span - int64(i)*windowUs; i == n-1 && rest > 0 {
			length = rest
		}
		st.Windows[i].Rate = float64(st.Windows[i].Requests) / (float64(length) / 1e6)
	}
	if span > 0 {
		st.MeanRate = float64(st.Requests) / (float64(span) / 1e6)
	}
	full := int(span / windowUs) // windows wholly inside the span
	if full == 0 {
		st.PeakRate, st.PeakWindowS = st.MeanRate, 0
		return
	}
	for i := range full {
		if r := float64(st.Windows[i].Requests) / st.WindowS; r > st.PeakRate {
			st.PeakRate, st.PeakWindowS = r, st.Windows[i].StartS
		}
	}
}

// interArrivalCV is the coefficient of variation of the gaps between
// consecutive arrivals (0 with fewer than two gaps or a zero mean).
func interArrivalCV(arrivals []int64) float64 {
	n := len(arrivals) - 1
	if n < 2 {
		return 0
	}
	var sum, sq float64
	for i := 1; i < len(arrivals); i++ {
		g := float64(arrivals[i] - arrivals[i-1])
		sum += g
		sq += g * g
	}
	mean := sum / float64(n)
	if mean == 0 {
		return 0
	}
	return math.Sqrt(max(0, sq/float64(n)-mean*mean)) / mean
}

// summarise gives a sample's mean and quantiles.
func summarise(xs []int) Lengths {
	s := sortedFloats(xs)
	var sum float64
	for _, x := range s {
		sum += x
	}
	return Lengths{Mean: sum / float64(len(s)), P10: Quantile(s, 0.10), P25: Quantile(s, 0.25), P50: Quantile(s, 0.50),
		P75: Quantile(s, 0.75), P90: Quantile(s, 0.90), P99: Quantile(s, 0.99), Max: s[len(s)-1]}
}

func sortedFloats(xs []int) []float64 {
	s := make([]float64, len(xs))
	for i, x := range xs {
		s[i] = float64(x)
	}
	slices.Sort(s)
	return s
}

// Quantile is the q-quantile of an ascending sample, interpolated
// linearly between order statistics (position q·(n−1)).
func Quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	pos := q * float64(len(sorted)-1)
	lo := int(pos)
	if lo >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	frac := pos - float64(lo)
	return sorted[lo] + frac*(sorted[lo+1]-sorted[lo])
}

// errEOF is io.EOF, named for the streams that end.
var errEOF = io.EOF
