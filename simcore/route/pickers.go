package route

import (
	"math"
	"math/rand"
)

// Pickers: how the weighted policy turns the instances' composite scores
// into one instance. llm-d's pickers (ebab68792) can return several
// endpoints (maxNumOfEndpoints); the simulator routes a request to one
// instance, so they pick one, as with llm-d's default maxNumOfEndpoints 1.

// pickerKind is one row of the picker table.
type pickerKind struct {
	name string
	// normalise: the composite uses the weights divided by their sum (BLIS),
	// else the weights as configured (llm-d).
	normalise bool
	pick      func(w *weighted, composite []float64) int
}

// pickerKinds is the one place where picker names are defined; the first
// row is the default.
func pickerKinds() []pickerKind {
	return []pickerKind{
		// BLIS 7fd7a88d: argmax of the normalised sum, exact ties uniformly
		// at random (Intn over the tied, drawn only on a tie).
		{"blis", true, pickMax},
		// llm-d's max-score-picker: the highest raw weighted sum wins; llm-d
		// shuffles before a stable sort, which is a uniform choice among
		// the tied: drawn here as blis draws it, only on a tie.
		{"max-score-picker", false, pickMax},
		// llm-d's random-picker: uniform over the instances, scores ignored
		// (llm-d shuffles; one Intn(N) here, the same distribution).
		{"random-picker", false, pickUniform},
		// llm-d's weighted-random-picker: A-Res sampling, key u^(1/score)
		// with u uniform in (0,1) per instance scoring > 0 (key 0 for the
		// others), highest key wins; so instance i wins with probability
		// score_i / Σ score. When no instance scores > 0, random-picker.
		{"weighted-random-picker", false, pickWeightedRandom},
	}
}

// PickerNames lists the accepted picker names, the default first.
func PickerNames() []string {
	kinds := pickerKinds()
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.name
	}
	return names
}

func findPicker(name string) (pickerKind, bool) {
	kinds := pickerKinds()
	if name == "" {
		return kinds[0], true
	}
	for _, k := range kinds {
		if k.name == name {
			return k, true
		}
	}
	return pickerKind{}, false
}

// pickMax is the argmax, exact ties broken by the tie breaker.
func pickMax(w *weighted, composite []float64) int {
	best := -1.0
	for _, c := range composite {
		if c > best {
			best = c
		}
	}
	w.ties.tied = w.ties.tied[:0]
	for i, c := range composite {
		if c == best {
			w.ties.tied = append(w.ties.tied, i)
		}
	}
	return w.ties.pick()
}

func pickUniform(w *weighted, composite []float64) int {
	return intn(w.ties.rng, len(composite))
}

func pickWeightedRandom(w *weighted, composite []float64) int {
	rng := w.ties.rng
	best, bestKey := -1, -1.0
	for i, c := range composite {
		key := 0.0
		if c > 0 {
			if rng == nil {
				key = c // no RNG: the highest score wins
			} else {
				u := rng.Float64()
				if u == 0 {
					u = 1e-10
				}
				key = math.Pow(u, 1/c)
			}
		}
		if best < 0 || key > bestKey {
			best, bestKey = i, key
		}
	}
	if bestKey <= 0 {
		return intn(rng, len(composite))
	}
	return best
}

// intn is rng.Intn(n), or 0 without an RNG.
func intn(rng *rand.Rand, n int) int {
	if rng == nil {
		return 0
	}
	return rng.Intn(n)
}
