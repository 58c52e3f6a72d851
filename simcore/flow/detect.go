package flow

import "optimize/simcore/route"

// Saturation is the pool's saturation by c's detector, read from the
// routing snapshots of its instances (their signals as the router sees
// them: periodic when the snapshot refresh interval is set, the in-flight
// counts always current). Under 1 the pool takes more; no instance reads
// as 1.
func (c *Config) Saturation(snaps []route.Snapshot) float64 {
	switch c.Detector {
	case DetectUtilization:
		if len(snaps) == 0 {
			return 1
		}
		sum := 0.0
		for i := range snaps {
			s := &snaps[i]
			sum += max(float64(s.QueueDepth)/c.QueueDepthThreshold, s.KVUtilization/c.KVUtilThreshold)
		}
		return sum / float64(len(snaps))
	case DetectConcurrency:
		if len(snaps) == 0 {
			return 1
		}
		var inFlight int64
		for i := range snaps {
			inFlight += int64(snaps[i].InFlight)
		}
		return float64(inFlight) / float64(int64(len(snaps))*int64(c.MaxConcurrency))
	}
	return 0
}
