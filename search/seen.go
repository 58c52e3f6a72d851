package search

import (
	"math"
	"strings"

	"github.com/c-bata/goptuna"
)

// A study's runs are deterministic: the same vector on the same seeds
// gives the same summaries, so a TPE proposal identical to a trial the
// study has completed adds a trial and no information. In a
// discrete space TPE proposes such repeats readily: once one point fills
// the good set (pd-split's aggregated cluster, feasible at the baseline's
// ratio) every parameter's model favours it, and the study re-ran it trial
// after trial. Such a proposal is drawn again as one that cannot beat the
// cost bound is (bound.go): from the model up to maxRedraws times, then
// uniformly, after which the last draw stands (every point seen). Startup
// draws and warm-start trials are left as they are: the first are
// uniform, the second ran in another study. A running trial is not
// "seen": keeping proposals off the points others are running is the
// constant liar's work (liar.go).

// seenBefore reports whether values (internal, inactive NaN) are the
// recorded vector of one of trials that completed, warm-start trials left
// out.
func (s *Sampler) seenBefore(values []float64, trials []goptuna.FrozenTrial) bool {
	for i := range trials {
		t := &trials[i]
		if t.State != goptuna.TrialStateComplete || strings.HasPrefix(t.SystemAttrs[AttrSource], warmSource) {
			continue
		}
		if s.sameVector(values, t.InternalParams) {
			return true
		}
	}
	return false
}

// sameVector reports whether stored (a trial's recorded active params)
// holds exactly values.
func (s *Sampler) sameVector(values []float64, stored map[string]float64) bool {
	for j, p := range s.space {
		v, ok := stored[p.Name]
		if math.IsNaN(values[j]) {
			if ok {
				return false
			}
			continue
		}
		if !ok || v != p.toInternal(values[j]) {
			return false
		}
	}
	return true
}
