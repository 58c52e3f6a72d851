package cluster

import (
	"fmt"
	"math"

	"optimize/simcore/admit"
	"optimize/simcore/latency"
	"optimize/simcore/route"
)

// Config is a complete cluster configuration. Field errors name the
// `optimize simulate` flag that sets the field.
type Config struct {
	NumInstances       int
	TotalKVBlocks      int64
	BlockSize          int64
	MaxRunning         int
	MaxScheduledTokens int64
	PrefillThreshold   int64 // --long-prefill-token-threshold; 0 = no chunking
	Latency            latency.Coeffs
	Routing            route.Config
	Scheduler          string
	Priority           string
	Admission          admit.Config
	SnapshotRefresh    int64 // µs; 0 = signals always fresh
	Horizon            int64 // µs; 0 = run until every request is done
	Seed               int64
}

// Defaults returns BLIS's defaults with the llama-3.1-8b H100 TP2 profile's
// coefficients left for the caller to fill in.
func Defaults() Config {
	return Config{
		NumInstances:       1,
		BlockSize:          16,
		MaxRunning:         256,
		MaxScheduledTokens: 2048,
		Routing:            route.Config{Policy: "round-robin", PrefixIndexCapacity: 10000},
		Scheduler:          "fcfs",
		Priority:           "constant",
		Admission:          admit.Config{Policy: "always-admit", BucketCapacity: 10000, RefillRate: 1000},
		Seed:               42,
	}
}

// Validate checks the numeric fields; policies are checked by their
// constructors in New.
func (c *Config) Validate() error {
	switch {
	case c.NumInstances < 1:
		return fmt.Errorf("--num-instances: must be ≥ 1, got %d", c.NumInstances)
	case c.TotalKVBlocks < 1:
		return fmt.Errorf("--total-kv-blocks: must be ≥ 1, got %d", c.TotalKVBlocks)
	case c.TotalKVBlocks > math.MaxInt32:
		return fmt.Errorf("--total-kv-blocks: must be < 2^31, got %d", c.TotalKVBlocks)
	case c.BlockSize < 1:
		return fmt.Errorf("--block-size-in-tokens: must be ≥ 1, got %d", c.BlockSize)
	case c.MaxRunning < 1:
		return fmt.Errorf("--max-num-running-reqs: must be ≥ 1, got %d", c.MaxRunning)
	case c.MaxScheduledTokens < 1:
		return fmt.Errorf("--max-num-scheduled-tokens: must be ≥ 1, got %d", c.MaxScheduledTokens)
	case c.PrefillThreshold < 0:
		return fmt.Errorf("--long-prefill-token-threshold: must be ≥ 0 (0 = no chunking), got %d", c.PrefillThreshold)
	case c.SnapshotRefresh < 0:
		return fmt.Errorf("--snapshot-refresh-interval: must be ≥ 0 µs, got %d", c.SnapshotRefresh)
	case c.Horizon < 0:
		return fmt.Errorf("--horizon: must be ≥ 0 µs (0 = unlimited), got %d", c.Horizon)
	}
	if _, err := latency.New(c.Latency); err != nil {
		return err
	}
	return nil
}
