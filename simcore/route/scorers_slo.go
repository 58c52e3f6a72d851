package route

import "optimize/simcore"

// The KV- and SLO-aware scorers: kv-pressure, kv-pressure-slo and
// slo-priority.

const (
	// defaultTransferScale is the pending reload (µs) that costs a whole
	// point: PendingTransferLatency is divided by 10000, so 10 ms of
	// pending reloads costs as much as a full cache.
	defaultTransferScale = 10000.0
	// defaultThrashWeight multiplies KVThrashingRate: a thrashing rate of
	// 0.5 costs a whole point (−1.0).
	defaultThrashWeight = 2.0
)

// defaultTransferClassScale is kv-pressure-slo's per-class multiplier of
// the transfer penalty: critical 5 (strongly avoid reloads), batch 0.2
// (tolerate reloads for the cache's benefit), background 0.1, standard
// and unclassed 1; sheddable is best-effort like batch, 0.2.
func defaultTransferClassScale() [simcore.NumSLOClasses]float64 {
	return [...]float64{
		simcore.SLONone:       1,
		simcore.SLOCritical:   5,
		simcore.SLOStandard:   1,
		simcore.SLOSheddable:  0.2,
		simcore.SLOBatch:      0.2,
		simcore.SLOBackground: 0.1,
	}
}

// defaultSLOPriorityBlend is slo-priority's per-class prefix-affinity share
// (the rest goes to queue-depth), interpolating load and cache per tier:
// critical leans on load balance (a fast start beats a warm cache, and
// critical requests should avoid reload costs), best-effort tiers lean on
// cache affinity (they tolerate reloads for the cache's benefit). Standard
// and unclassed requests keep the default profile's ratio,
// prefix-affinity:3 to queue-depth:2. No class reaches 1: prefix-affinity
// alone piles cold requests onto one instance.
func defaultSLOPriorityBlend() [simcore.NumSLOClasses]float64 {
	return [...]float64{
		simcore.SLONone:       0.6,
		simcore.SLOCritical:   0.2,
		simcore.SLOStandard:   0.6,
		simcore.SLOSheddable:  0.8,
		simcore.SLOBatch:      0.8,
		simcore.SLOBackground: 0.8,
	}
}

// kvPressure is a KV-health score: 1 − KVUtilization − pending reload
// µs/scale − thrashing·weight, clamped to [0,1]. Reloads inflate the step
// time of the whole batch, so an instance busy reloading is worse than its
// utilisation says. Without transfers or thrashing it is kv-utilization.
// The SLO variant scales the reload penalty by the request's class.
type kvPressure struct {
	transferPerUs [simcore.NumSLOClasses]float64 // penalty per pending µs, by class
	thrashWeight  float64
}

func newKVPressure(cfg *Config, perClass bool) *kvPressure {
	scale := cfg.TransferScaleInEffect()
	k := &kvPressure{thrashWeight: cfg.ThrashWeightInEffect()}
	for c, factor := range cfg.KVPressureSLOScale.Resolve(defaultTransferClassScale()) {
		if !perClass {
			factor = 1
		}
		k.transferPerUs[c] = factor / scale
	}
	return k
}

func (k *kvPressure) Score(r *simcore.Request, snaps []Snapshot, out []float64) {
	perUs := k.transferPerUs[r.SLO.Known()]
	for i := range snaps {
		s := &snaps[i]
		out[i] = clamp01(1 - s.KVUtilization - float64(s.PendingTransferLatency)*perUs - s.KVThrashingRate*k.thrashWeight)
	}
}

// sloPriority blends cache affinity and load per request class:
// w_c·prefixAffinity + (1 − w_c)·queueDepth. It reads the profile's one
// prefix-affinity record (shared with a prefix-affinity scorer if both are
// configured), so SLO differentiation lives in one scorer and one weight
// profile, and every class's routing decisions feed and read the same
// prefix record (per-class profiles would each keep their own record and
// weaken cache affinity).
type sloPriority struct {
	affinity *prefixAffinity
	blend    [simcore.NumSLOClasses]float64
	load     []float64 // scratch: queue-depth scores
}

func newSLOPriority(cfg *Config, affinity *prefixAffinity, instances int) *sloPriority {
	return &sloPriority{
		affinity: affinity,
		blend:    cfg.SLOPriorityBlend.Resolve(defaultSLOPriorityBlend()),
		load:     make([]float64, instances),
	}
}

func (s *sloPriority) Score(r *simcore.Request, snaps []Snapshot, out []float64) {
	w := s.blend[r.SLO.Known()]
	load := s.load[:len(snaps)]
	queueDepth{}.Score(r, snaps, load)
	s.affinity.Score(r, snaps, out)
	for i := range out {
		out[i] = w*out[i] + (1-w)*load[i]
	}
}

// TransferScaleInEffect is the kv-pressure transfer scale the scorers use:
// the configured one, or the default for 0.
func (c *Config) TransferScaleInEffect() float64 {
	if c.KVPressureTransferScale == 0 {
		return defaultTransferScale
	}
	return c.KVPressureTransferScale
}

// ThrashWeightInEffect is the kv-pressure thrashing weight the scorers use.
func (c *Config) ThrashWeightInEffect() float64 {
	if c.KVPressureThrashWeight == 0 {
		return defaultThrashWeight
	}
	return c.KVPressureThrashWeight
}

// TransferClassScaleFor is kv-pressure-slo's transfer-penalty factor for
// class cl in effect.
func (c *Config) TransferClassScaleFor(cl simcore.SLOClass) float64 {
	return c.KVPressureSLOScale.Or(cl.Known(), defaultTransferClassScale()[cl.Known()])
}

// BlendFor is slo-priority's prefix-affinity share for class cl in effect.
func (c *Config) BlendFor(cl simcore.SLOClass) float64 {
	return c.SLOPriorityBlend.Or(cl.Known(), defaultSLOPriorityBlend()[cl.Known()])
}
