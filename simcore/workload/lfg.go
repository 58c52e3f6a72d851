package workload

import "math/rand"

// lfgSource produces exactly the Int63 stream of math/rand's seeded
// source, several times faster for the bulk token draws.
//
// math/rand's default source is an additive lagged Fibonacci generator,
// x_n = x_{n-607} + x_{n-273} (mod 2^64), and Int63 returns the low 63 bits.
// Carries only move upwards, so the low 63 bits obey the same recurrence
// mod 2^63: once 607 consecutive outputs are known, every later output
// follows from them. We take the first 607 from the standard source and
// then compute the stream 607 values at a time, with no interface call
// and no per-draw wrap-around logic.
type lfgSource struct {
	buf [lfgLen]int64 // the current batch of outputs
	idx int           // next output to hand out

}

const (
	lfgLen = 607
	lfgTap = 273
	mask63 = 1<<63 - 1
	// tokBase is Int31n(maxTokenID)'s rejection bound: a draw whose Int31
	// exceeds it is discarded and drawn again.
	tokBase = (1<<31 - 1) - (1<<31)%maxTokenID
)

func newLFG(seed int64) *lfgSource {
	s := &lfgSource{}
	s.Seed(seed)
	return s
}

// Seed restarts the stream as rand.NewSource(seed) would.
func (s *lfgSource) Seed(seed int64) {
	std := rand.NewSource(seed)
	for i := range s.buf {
		s.buf[i] = std.Int63()
	}
	s.idx = 0
}

// Int63 returns the next output of the stream.
func (s *lfgSource) Int63() int64 {
	if s.idx == lfgLen {
		s.refill()
	}
	v := s.buf[s.idx]
	s.idx++
	return v
}

// refill (kept out of line so that Int63 inlines) replaces the batch y_{n..n+606} by y_{n+607..n+1213}:
// y_m = y_{m-607} + y_{m-273}, where y_{m-607} is the old entry at the same
// position and y_{m-273} is an old entry (first 273 positions) or a new one.
//
//go:noinline
func (s *lfgSource) refill() {
	b := &s.buf
	for k := 0; k < lfgTap; k++ {
		b[k] = (b[k] + b[k+lfgLen-lfgTap]) & mask63
	}
	for k := lfgTap; k < lfgLen; k++ {
		b[k] = (b[k] + b[k-lfgTap]) & mask63
	}
	s.idx = 0
}

// tokenDraw returns the Int31 of the draw that rand.Rand.Intn(maxTokenID)
// accepts, consuming the same draws (Int31n's rejection loop included).
// The token id is this value mod maxTokenID; callers that only compare
// token sequences for equality may use the value itself.
func (s *lfgSource) tokenDraw() int32 {
	for {
		if v := int32(s.Int63() >> 32); v <= tokBase {
			return v
		}
	}
}

// tokenID is rand.Rand.Intn(maxTokenID) on this stream.
func (s *lfgSource) tokenID() int32 { return s.tokenDraw() % maxTokenID }

// skipTokens consumes the draws of n token ids (Intn(maxTokenID) each,
// Int31n's rejections included) without computing the ids. It consumes
// draws in runs of at most the tokens still owed and counts the run's
// rejections afterwards (rare: each owes one more draw), so that the scan
// carries no dependency from one draw to the next.
func (s *lfgSource) skipTokens(n int) {
	for n > 0 {
		if s.idx == lfgLen {
			s.refill()
		}
		run := s.buf[s.idx:min(s.idx+n, lfgLen)]
		rejected := 0
		for _, v := range run {
			rejected += int(uint32(tokBase-int32(v>>32)) >> 31)
		}
		s.idx += len(run)
		n -= len(run) - rejected
	}
}
