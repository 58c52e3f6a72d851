package studies

import (
	"sync"
	"sync/atomic"

	"optimize/simcore/workload"
)

// workloadCache keeps an evaluator's workload draws, one workload.Draws per
// seed, so that a study draws each seed's workload once and every trial
// replays it. A study has one workload (its regime folded into the spec),
// so the cache holds at most one entry per seed. The draws also depend on
// the block size and horizon, which a template may tune: an entry is
// replaced when a run asks for other values, which keeps the bound (a study
// that tunes them draws afresh as often as they change, as without cache).
//
// Memory, measured by TestWorkloadCacheMemory as the heap the cache keeps
// alive: the slo-cascade study (3 seeds × orthogonal-slo, 1,000 requests
// each) holds 171 KB, 57 bytes per request. Of that, the arrivals take 32
// bytes each (a time and three round lengths; 3,136 arrivals, the batches
// drawn ahead included) with up to a quarter more of slice room, and each
// of the 9 client streams ~5.4 KB of random-generator state.
type workloadCache struct {
	mu     sync.Mutex
	bySeed map[int64]*cachedDraws
	// builds counts the Draws made, for the test that they are reused.
	builds atomic.Int64
}

// drawsKey is what a seed's draws depend on besides the study's spec (the
// request cap is the spec's own: simulateOn passes none).
type drawsKey struct {
	blockSize int
	horizon   int64
}

// cachedDraws is one seed's draws, made once by whichever run asks first.
type cachedDraws struct {
	key   drawsKey
	once  sync.Once
	draws *workload.Draws
	err   error
}

// source returns a replay of spec's workload for seed, block size and
// horizon, drawing it on first use.
func (c *workloadCache) source(spec *workload.Spec, seed int64, blockSize int, horizon int64) (*workload.Generator, error) {
	key := drawsKey{blockSize: blockSize, horizon: horizon}
	c.mu.Lock()
	e := c.bySeed[seed]
	if e == nil || e.key != key {
		e = &cachedDraws{key: key}
		if c.bySeed == nil {
			c.bySeed = map[int64]*cachedDraws{}
		}
		c.bySeed[seed] = e
	}
	c.mu.Unlock()
	e.once.Do(func() {
		c.builds.Add(1)
		e.draws, e.err = workload.NewDraws(spec, workload.Options{Seed: seed, BlockSize: blockSize, Horizon: horizon})
	})
	if e.err != nil {
		return nil, e.err
	}
	return e.draws.Generator(), nil
}
