package search

import (
	"math/rand"
	"sync"
)

// goptuna's TPE draws mixture components (and some categorical candidates)
// from the GLOBAL math/rand source, which Go seeds randomly per process.
// To make a proposal depend only on (study seed, trial number, history),
// every TPE proposal runs under tpeMu with the global source re-seeded from
// the trial's derived seed.
//
// Since Go 1.24 rand.Seed is a no-op unless GODEBUG randseednop=0, which
// go.mod sets for this module's binaries and tests. With randseednop=1
// forced in the environment proposals still work but are not repeatable
// (GlobalRandSeedable reports false).
//
// Side effect: after the first TPE proposal the process-wide math/rand
// top-level functions are deterministically seeded. Code that needs
// unpredictable numbers (jitter, ids) should use math/rand/v2 or rand.New.
var tpeMu sync.Mutex

// GlobalRandSeedable reports whether rand.Seed takes effect in this process.
func GlobalRandSeedable() bool { return seedable() }

var seedable = sync.OnceValue(func() bool {
	rand.Seed(1) //nolint:staticcheck // deliberate: goptuna reads the global source
	first := rand.Int63()
	rand.Seed(1) //nolint:staticcheck
	return first == rand.Int63()
})

// reseedGlobalRand must be called with tpeMu held.
func reseedGlobalRand(seed int64) {
	if GlobalRandSeedable() {
		rand.Seed(seed) //nolint:staticcheck
	}
}
