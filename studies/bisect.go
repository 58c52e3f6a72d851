package studies

import "math"

// bracketSteps bounds the doublings (or halvings) that look for a rate the
// strategy misses (or meets) before bisecting: 2^6 = 64 × the workload's
// own rate either way. Each probe above capacity simulates a growing
// queue, so the bound is also what keeps a strategy that never misses
// from costing without end; it is then reported as a lower bound.
const bracketSteps = 6

// rateSearch is the outcome of a search for the highest rate that meets a
// predicate: Rate meets it (0: no rate tried did), Above does not (+Inf:
// every rate tried met it); Probes counts the predicate's calls.
type rateSearch struct {
	Rate, Above float64
	Probes      int
}

// Bounded reports whether the search found a rate that fails: only then
// is Rate within the tolerance of the threshold.
func (s rateSearch) Bounded() bool { return !math.IsInf(s.Above, 1) && s.Rate > 0 }

// maxRate finds the highest rate meeting meets, a predicate that holds
// below a threshold and fails above it. It brackets the threshold first,
// doubling from start while meets holds or halving while it fails (at
// most bracketSteps times), then bisects [meets, fails] at the midpoint
// until (fails − meets) ≤ tol × meets. The answer meets the predicate:
// it is at most the threshold and, bounded, within tol of it. The rates
// probed depend only on start, tol and the predicate's answers, so a
// search repeated over stored answers probes the same rates. A probe that
// cannot answer (a simulation that failed, a run not stored) ends the
// search with its error.
func maxRate(start, tol float64, meets func(rate float64) (bool, error)) (rateSearch, error) {
	s := rateSearch{Above: math.Inf(1)}
	probe := func(rate float64) (bool, error) {
		s.Probes++
		return meets(rate)
	}
	ok, err := probe(start)
	if err != nil {
		return s, err
	}
	if ok {
		s.Rate = start
		for i := 0; i < bracketSteps; i++ {
			next := 2 * s.Rate
			if ok, err = probe(next); err != nil {
				return s, err
			}
			if !ok {
				s.Above = next
				break
			}
			s.Rate = next
		}
	} else {
		s.Above = start
		for i := 0; i < bracketSteps; i++ {
			next := s.Above / 2
			if ok, err = probe(next); err != nil {
				return s, err
			}
			if ok {
				s.Rate = next
				break
			}
			s.Above = next
		}
	}
	if !s.Bounded() {
		return s, nil
	}
	for s.Above-s.Rate > tol*s.Rate {
		mid := (s.Rate + s.Above) / 2
		if ok, err = probe(mid); err != nil {
			return s, err
		}
		if ok {
			s.Rate = mid
		} else {
			s.Above = mid
		}
	}
	return s, nil
}
