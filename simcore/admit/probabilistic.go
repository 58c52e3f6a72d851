package admit

import (
	"math"
	"math/rand"

	"optimize/simcore"
	"optimize/simcore/errtext"
	"optimize/simcore/keys"
)

// Defaults of the probabilistic policy. With them the rejection
// probability of a sheddable-tier request is 1 % at saturation 0.127,
// 9.6 % at 0.2, and 1 from saturation (1/300)^(1/5) ≈ 0.32 up.
const (
	DefaultQueueDepthThreshold = 5   // waiting requests per instance
	DefaultKVUtilThreshold     = 0.8 // GPU KV utilisation
	DefaultPower               = 5
	DefaultK                   = 300
)

// ProbabilisticConfig parameterises the probabilistic policy. Zero values
// mean the defaults.
type ProbabilisticConfig struct {
	QueueDepthThreshold float64 // an instance's wait-queue length at which it counts as saturated
	KVUtilThreshold     float64 // an instance's GPU KV utilisation at which it counts as saturated
	Power               float64 // exponent of the saturation
	K                   float64 // scale of the rejection probability
}

// InEffect is c with its zero fields replaced by the defaults.
func (c ProbabilisticConfig) InEffect() ProbabilisticConfig {
	or := func(v, def float64) float64 {
		if v == 0 {
			return def
		}
		return v
	}
	return ProbabilisticConfig{
		QueueDepthThreshold: or(c.QueueDepthThreshold, DefaultQueueDepthThreshold),
		KVUtilThreshold:     or(c.KVUtilThreshold, DefaultKVUtilThreshold),
		Power:               or(c.Power, DefaultPower),
		K:                   or(c.K, DefaultK),
	}
}

// validate checks the parameters whatever the policy (a bad value is never
// silently ignored); errors name the setting's key.
func (c ProbabilisticConfig) validate() error {
	c = c.InEffect()
	for _, f := range []struct {
		key string
		v   float64
		max float64
	}{
		{keys.ProbQueueDepth, c.QueueDepthThreshold, math.Inf(1)},
		{keys.ProbKVUtil, c.KVUtilThreshold, 1},
		{keys.ProbPower, c.Power, math.Inf(1)},
		{keys.ProbK, c.K, math.Inf(1)},
	} {
		if !(f.v > 0) || math.IsInf(f.v, 0) || f.v > f.max {
			if f.max == 1 {
				return errtext.BadSetting(f.key, "must be a number in (0, 1], got %v", f.v)
			}
			return errtext.BadSetting(f.key, "must be a finite number > 0, got %v", f.v)
		}
	}
	return nil
}

// Saturation is the mean over instances of the larger of queue depth over
// its threshold and KV utilisation over its threshold: 1 when every
// instance sits at a threshold.
func (c ProbabilisticConfig) Saturation(load *Load) float64 {
	if len(load.Instances) == 0 {
		return 0
	}
	var sum float64
	for i := range load.Instances {
		s := &load.Instances[i]
		sum += max(float64(s.QueueDepth)/c.QueueDepthThreshold, s.KVUtilization/c.KVUtilThreshold)
	}
	return sum / float64(len(load.Instances))
}

// RejectProbability is min(saturation^power · k, 1).
func (c ProbabilisticConfig) RejectProbability(saturation float64) float64 {
	return min(math.Pow(saturation, c.Power)*c.K, 1)
}

// probabilistic admits critical, standard and unclassed requests always
// and rejects a sheddable, batch or background request with probability
// RejectProbability(Saturation(load)). It draws one number from its own
// stream for every request of those classes, whatever the load: the
// stream's position depends on the arrivals alone.
type probabilistic struct {
	cfg ProbabilisticConfig // in effect
	rng *rand.Rand
}

// Its random stream is set by New (Validate builds one without).
func newProbabilistic(cfg ProbabilisticConfig) *probabilistic {
	return &probabilistic{cfg: cfg.InEffect()}
}

// Sheddable reports whether probabilistic admission may reject class c.
func Sheddable(c simcore.SLOClass) bool {
	switch c {
	case simcore.SLOSheddable, simcore.SLOBatch, simcore.SLOBackground:
		return true
	}
	return false
}

func (p *probabilistic) Admit(r *simcore.Request, _ simcore.Tick, load *Load) bool {
	if !Sheddable(r.SLO) {
		return true
	}
	u := p.rng.Float64()
	return u >= p.cfg.RejectProbability(p.cfg.Saturation(load))
}
