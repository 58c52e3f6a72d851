package search

import (
	"math/rand"
	"os"
	"strings"
	"sync"
)

// goptuna's TPE draws mixture components (and some categorical candidates)
// from the GLOBAL math/rand source, which Go seeds randomly per process.
// To make a proposal depend only on (study seed, trial number, history),
// every TPE proposal runs under tpeMu with the global source re-seeded from
// the trial's derived seed.
//
// Since Go 1.24 rand.Seed is a no-op unless GODEBUG randseednop=0. Main
// packages should carry `//go:debug randseednop=0`; when they do not (tests,
// other binaries), the first TPE proposal appends randseednop=0 to the
// GODEBUG environment variable, which the runtime re-reads on os.Setenv.
// An explicit randseednop=1 in the environment is respected: proposals then
// still work but are not repeatable (GlobalRandSeedable reports false).
//
// Side effect: after the first TPE proposal the process-wide math/rand
// top-level functions are deterministically seeded. Code that needs
// unpredictable numbers (jitter, ids) should use math/rand/v2 or rand.New.
var (
	tpeMu          sync.Mutex
	seedableOnce   sync.Once
	globalSeedable bool
)

// GlobalRandSeedable reports whether math/rand's global source can be
// re-seeded in this process (enabling randseednop=0 on first use if needed).
func GlobalRandSeedable() bool {
	seedableOnce.Do(func() {
		globalSeedable = seedTakesEffect()
		if globalSeedable {
			return
		}
		current := os.Getenv("GODEBUG")
		if strings.Contains(current, "randseednop=") {
			return // the user chose explicitly
		}
		setting := "randseednop=0"
		if current != "" {
			setting = current + "," + setting
		}
		if os.Setenv("GODEBUG", setting) == nil {
			globalSeedable = seedTakesEffect()
		}
	})
	return globalSeedable
}

func seedTakesEffect() bool {
	rand.Seed(1) //nolint:staticcheck // deliberate: goptuna reads the global source
	first := rand.Int63()
	rand.Seed(1) //nolint:staticcheck
	return first == rand.Int63()
}

// reseedGlobalRand must be called with tpeMu held.
func reseedGlobalRand(seed int64) {
	if GlobalRandSeedable() {
		rand.Seed(seed) //nolint:staticcheck
	}
}
