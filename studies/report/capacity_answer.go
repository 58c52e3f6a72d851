package report

import (
	"fmt"
	"slices"

	"optimize/simcore/keys"
	"optimize/strategies"
)

// CapacityAnswer is a capacity study's answer in one sentence: the
// cluster its best trial runs (instances × GPU at a TP, the model), its
// price per hour, and its headroom — the highest multiple of the
// workload's rate it sustains on held-out data (study validate
// --max-rate), or how to measure it. "" for a study whose template tunes
// neither the instances nor the GPU, or without a best trial within its
// constraints.
func (r *Report) CapacityAnswer() string {
	tuned := r.Template.TunedWorld()
	if r.Best < 0 || !(slices.Contains(tuned, keys.NumInstances) || slices.Contains(tuned, keys.GPU)) {
		return ""
	}
	best := &r.Complete[r.Best]
	if r.ViolationSentence(best) != "" {
		return ""
	}
	w := r.TrialWorld(best)
	text := fmt.Sprintf("answer: %d × %s at TP%d (%d GPUs) serving %s", w.Instances, w.GPU, w.TP, w.Instances*w.TP, w.Model)
	if cfg, err := r.TrialConfig(best); err == nil {
		if cost, ok := strategies.ConfigMetric(&cfg, "cost_per_hour"); ok {
			text += fmt.Sprintf(", %s USD/h", Human(cost))
		}
	}
	text += fmt.Sprintf(" (trial %d, within every constraint on the study's seeds)", best.Number)
	if m := r.MaxRate; m != nil && m.Trial == best.Number {
		text += fmt.Sprintf("; headroom: it sustains %s %s at its targets on held-out %s %s, the mean (study validate --max-rate)",
			RateText(float64(m.Winner)), m.Unit, m.heldOut(), SeedList(m.Seeds))
		short := 0
		for _, s := range m.PerSeed {
			if float64(s.Winner.Rate) < m.StartRate {
				short++
			}
		}
		if short > 0 {
			text += fmt.Sprintf(", but on %d of the %d it falls short of the workload's own rate (%s %s): buy more, or read it seed by seed", short, len(m.PerSeed), RateText(m.StartRate), m.Unit)
		}
		return text
	}
	return text + fmt.Sprintf("; headroom not measured yet: study validate %s --max-rate", r.Study.Name)
}
