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
	// rejects lists, ascending, the positions in buf whose draw a token's
	// Intn(maxTokenID) would reject (one draw in about 77,700, so about one
	// batch in 128 has one), so that skipping tokens need not look at the
	// draws it skips.
	rejects []int16
}

const (
	lfgLen = 607
	lfgTap = 273
	mask63 = 1<<63 - 1
	// tokBase is Int31n(maxTokenID)'s rejection bound: a draw whose Int31
	// exceeds it is discarded and drawn again.
	tokBase = (1<<31 - 1) - (1<<31)%maxTokenID
	// rejectFrom is the least Int63 output rejected: Int31 is its top 31
	// bits, so v>>32 > tokBase exactly when v ≥ (tokBase+1)<<32.
	rejectFrom = (tokBase + 1) << 32
)

func newLFG(seed int64) *lfgSource {
	s := &lfgSource{}
	s.Seed(seed)
	return s
}

// Seed restarts the stream as rand.NewSource(seed) would.
func (s *lfgSource) Seed(seed int64) {
	std := rand.NewSource(seed)
	s.rejects = s.rejects[:0]
	for i := range s.buf {
		s.buf[i] = std.Int63()
		s.noteReject(i)
	}
	s.idx = 0
}

// noteReject adds position k to rejects if its draw would be rejected.
func (s *lfgSource) noteReject(k int) {
	if s.buf[k] >= rejectFrom {
		s.rejects = append(s.rejects, int16(k))
	}
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

// refill replaces the batch y_{n..n+606} by y_{n+607..n+1213}:
// y_m = y_{m-607} + y_{m-273}, where y_{m-607} is the old entry at the same
// position and y_{m-273} is an old entry (first 273 positions) or a new one
// (addMasked reads it 273 places behind the one it writes). A batch has a
// rejected draw about once in 128 refills; only then are its positions
// listed.
func (s *lfgSource) refill() {
	b := &s.buf
	flags := addMasked(&b[0], &b[lfgLen-lfgTap], lfgTap, rejectCarry) |
		addMasked(&b[lfgTap], &b[0], lfgLen-lfgTap, rejectCarry)
	s.rejects, s.idx = s.rejects[:0], 0
	if flags>>63 != 0 {
		for k := range b {
			s.noteReject(k)
		}
	}
}

// rejectCarry is 2^63 − rejectFrom: a 63-bit draw v is rejected exactly
// when v + rejectCarry reaches bit 63 (it never wraps).
const rejectCarry = 1<<63 - rejectFrom

// addMaskedGo is addMasked in Go: dst[i] = (dst[i] + src[i]) mod 2^63, in
// order, returning the OR of every new value plus carry.
func addMaskedGo(dst, src []int64, carry uint64) uint64 {
	acc := uint64(0)
	for i := range dst {
		v := (dst[i] + src[i]) & mask63
		dst[i] = v
		acc |= uint64(v) + carry
	}
	return acc
}

// tokenID is rand.Rand.Intn(maxTokenID) on this stream: it consumes the
// same draws (Int31n's rejection loop included) and returns the same id.
func (s *lfgSource) tokenID() int32 {
	for {
		if v := int32(s.Int63() >> 32); v <= tokBase {
			return v % maxTokenID
		}
	}
}

// skipTokens consumes the draws of n token ids (Intn(maxTokenID) each,
// Int31n's rejections included) without computing the ids: it moves over
// runs of at most the tokens still owed, each rejected draw in a run
// owing one more.
func (s *lfgSource) skipTokens(n int) {
	for n > 0 {
		if s.idx == lfgLen {
			s.refill()
		}
		end := min(s.idx+n, lfgLen)
		rejected := 0
		for _, p := range s.rejects {
			if int(p) >= s.idx && int(p) < end {
				rejected++
			}
		}
		n -= end - s.idx - rejected
		s.idx = end
	}
}
