package production

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"optimize/simcore"
	"optimize/simcore/admit"
	"optimize/simcore/cluster"
	"optimize/strategies/settings"
)

// InferenceObjective is the llm-d resource that gives requests a
// priority: a request names its objective (header
// x-llm-d-inference-objective), and llm-d's flow control and admitters
// read spec.priority (higher is served first; below 0 is sheddable).
const (
	ObjectiveAPIVersion = "llm-d.ai/v1alpha2"
	ObjectiveKind       = settings.LLMDObjective
)

// ClassPriorities are the priorities c gives each SLO class in llm-d
// terms, and whether c uses class priority at all: with flow control on,
// its bands (flow.Priority); else the class's base
// priority (priority.base.<class>, rounded) where it is in effect, and,
// under probabilistic admission, a negative priority for the classes it
// sheds and at least 0 for the others, since llm-d's probabilistic-admitter
// sheds exactly the requests of negative priority.
func ClassPriorities(c *cluster.Config) (map[simcore.SLOClass]int, bool) {
	if c.FlowControl.Enabled {
		// The simulated gateway queue's bands: its class map is the
		// objectives' priorities.
		return flowBands(), true
	}
	given := map[simcore.SLOClass]float64{}
	used := false
	for _, cr := range CarriedSettings(c) {
		if cr.Name != settings.LLMDObjective || cr.Production == "" {
			continue
		}
		for class := simcore.SLOCritical; class < simcore.NumSLOClasses; class++ {
			if strings.HasSuffix(cr.Setting.Key, "."+class.String()) {
				n, err := strconv.ParseFloat(cr.Production, 64)
				if err == nil {
					given[class] = math.Max(math.Min(n, math.MaxInt32/2), math.MinInt32/2)
					used = true
				}
			}
		}
	}
	out := distinctIntegers(given)
	if c.Admission.Policy == admit.Probabilistic {
		used = true
		// Keep the order the base priorities give while moving the shed
		// classes below 0 and the others to 0 or above.
		low := 0
		for class := simcore.SLOCritical; class < simcore.NumSLOClasses; class++ {
			if !admit.Sheddable(class) {
				low = min(low, out[class])
			}
		}
		for class := simcore.SLOCritical; class < simcore.NumSLOClasses; class++ {
			p := out[class] - low
			if admit.Sheddable(class) {
				p = min(p-1-maxProtected(out, low), -1)
			}
			out[class] = p
		}
	}
	return out, used
}

func maxProtected(p map[simcore.SLOClass]int, low int) int {
	m := 0
	for class := simcore.SLOCritical; class < simcore.NumSLOClasses; class++ {
		if !admit.Sheddable(class) {
			m = max(m, p[class]-low)
		}
	}
	return m
}

// WriteObjectives writes one InferenceObjective per SLO class with its
// priority, for the InferencePool pool.
func WriteObjectives(w io.Writer, c *cluster.Config, pool string, header []string) error {
	prio, _ := ClassPriorities(c)
	var b strings.Builder
	for _, h := range header {
		fmt.Fprintf(&b, "# %s\n", h)
	}
	for class := simcore.SLOCritical; class < simcore.NumSLOClasses; class++ {
		if class > simcore.SLOCritical {
			b.WriteString("---\n")
		}
		fmt.Fprintf(&b, "apiVersion: %s\nkind: %s\nmetadata:\n  name: %s\nspec:\n  priority: %d\n  poolRef:\n    group: inference.networking.k8s.io\n    name: %s\n",
			ObjectiveAPIVersion, ObjectiveKind, class.String(), prio[class], pool)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// distinctIntegers rounds each class's priority to an integer, keeping
// the order: a class above another stays above it (9.949 and 9.73 both
// round to 10, but critical must still come before standard: it gets 11),
// equal priorities stay equal. Classes without one get 0.
func distinctIntegers(p map[simcore.SLOClass]float64) map[simcore.SLOClass]int {
	classes := make([]simcore.SLOClass, 0, simcore.NumSLOClasses)
	for class := simcore.SLOCritical; class < simcore.NumSLOClasses; class++ {
		classes = append(classes, class)
	}
	slices.SortStableFunc(classes, func(a, b simcore.SLOClass) int { return cmp.Compare(p[a], p[b]) })
	out := map[simcore.SLOClass]int{}
	for i, class := range classes {
		v := int(math.Round(p[class]))
		if i > 0 {
			prev := classes[i-1]
			switch {
			case p[class] == p[prev]:
				v = out[prev]
			case v <= out[prev]:
				v = out[prev] + 1
			}
		}
		out[class] = v
	}
	return out
}
