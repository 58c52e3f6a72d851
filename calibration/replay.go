package calibration

import (
	"fmt"

	"optimize/simcore/cluster"
	"optimize/simcore/metrics"
)

// SimResult is the simulator's account of one request of a replayed run
// (BLIS's SimResult): latencies from when the replay sent it, µs, as the
// server sees them (no network).
type SimResult struct {
	TTFT, E2E     float64
	Input, Output int32
	Done          bool // completed within the run (false: dropped, or still running at its end)
}

// Replay runs the run on cfg, its requests sent as the run sent them
// (or under its replay controls), and returns each request's result in
// replay order, with the run's summary.
func (r *Run) Replay(cfg cluster.Config) ([]SimResult, metrics.Summary, error) {
	return r.replay(cfg)
}

// replay is Replay. A run replays one replay at a time (it rewinds its
// one copy of the requests); different runs replay side by side.
func (r *Run) replay(cfg cluster.Config) ([]SimResult, metrics.Summary, error) {
	src, err := r.load(int(cfg.BlockSize))
	if err != nil {
		return nil, metrics.Summary{}, err
	}
	eng, err := cluster.New(cfg, src)
	if err != nil {
		return nil, metrics.Summary{}, err
	}
	results := make([]SimResult, src.Len())
	eng.OnCompleted(func(rec *metrics.RequestRecord) {
		results[rec.ID] = SimResult{TTFT: float64(rec.FirstToken - rec.Arrival), E2E: float64(rec.Finish - rec.Arrival),
			Input: rec.InputTokens, Output: rec.OutputTokens, Done: true}
	})
	sum := eng.Run()
	if len(results) != len(r.Observed()) {
		return nil, sum, fmt.Errorf("run %s: %d requests replayed for %d recorded", r.Name, len(results), len(r.Observed()))
	}
	return results, sum, nil
}
