package cli

import (
	"fmt"

	"github.com/spf13/pflag"

	"optimize/simcore/cluster"
	"optimize/simcore/latency"
	"optimize/simcore/route"
)

// simFlags are the policy and cluster flags, named as in BLIS. Only flags
// the user set override the base configuration.
type simFlags struct {
	model, hardware string
	tp              int

	numInstances       int
	totalKVBlocks      int64
	blockSize          int64
	maxRunning         int
	maxScheduledTokens int64
	prefillThreshold   int64
	alpha, beta        []float64
	routingPolicy      string
	routingScorers     string
	prefixIndexCap     int
	scheduler          string
	priorityPolicy     string
	admissionPolicy    string
	bucketCapacity     float64
	bucketRefill       float64
	snapshotRefresh    int64
	horizon            int64
}

func (f *simFlags) bind(fs *pflag.FlagSet) {
	d := cluster.Defaults()
	fs.StringVar(&f.model, "model", defaultModel, "model whose latency profile to use")
	fs.StringVar(&f.hardware, "hardware", "", "GPU of the latency profile (default: the model's, H100)")
	fs.IntVar(&f.tp, "tp", 0, "tensor parallelism of the latency profile (default: the model's, 2)")
	fs.IntVar(&f.numInstances, "num-instances", d.NumInstances, "number of serving instances")
	fs.Int64Var(&f.totalKVBlocks, "total-kv-blocks", 0, "GPU KV blocks per instance (default: the profile's)")
	fs.Int64Var(&f.blockSize, "block-size-in-tokens", d.BlockSize, "tokens per KV block")
	fs.IntVar(&f.maxRunning, "max-num-running-reqs", d.MaxRunning, "running requests per instance")
	fs.Int64Var(&f.maxScheduledTokens, "max-num-scheduled-tokens", d.MaxScheduledTokens, "token budget per step")
	fs.Int64Var(&f.prefillThreshold, "long-prefill-token-threshold", d.PrefillThreshold, "prefill chunk cap per step (0 = no chunking)")
	fs.Float64SliceVar(&f.alpha, "alpha-coeffs", nil, "α0,α1,α2 in µs (override the profile)")
	fs.Float64SliceVar(&f.beta, "beta-coeffs", nil, "β0,β1,β2 in µs (override the profile)")
	fs.StringVar(&f.routingPolicy, "routing-policy", d.Routing.Policy, "round-robin, least-loaded or weighted")
	fs.StringVar(&f.routingScorers, "routing-scorers", "", "weighted scorers, e.g. prefix-affinity:3,queue-depth:2,kv-utilization:2")
	fs.IntVar(&f.prefixIndexCap, "prefix-index-capacity", d.Routing.PrefixIndexCapacity, "blocks per instance in the router's approximate prefix index")
	fs.StringVar(&f.scheduler, "scheduler", d.Scheduler, "fcfs, priority-fcfs or sjf")
	fs.StringVar(&f.priorityPolicy, "priority-policy", d.Priority, "constant or slo-based (age)")
	fs.StringVar(&f.admissionPolicy, "admission-policy", d.Admission.Policy, "always-admit, token-bucket or reject-all")
	fs.Float64Var(&f.bucketCapacity, "token-bucket-capacity", d.Admission.BucketCapacity, "token-bucket capacity in tokens")
	fs.Float64Var(&f.bucketRefill, "token-bucket-refill-rate", d.Admission.RefillRate, "token-bucket refill in tokens per second")
	fs.Int64Var(&f.snapshotRefresh, "snapshot-refresh-interval", d.SnapshotRefresh, "µs between refreshes of routing signals (0 = always fresh)")
	fs.Int64Var(&f.horizon, "horizon", 0, "simulated µs after which the run stops (0 = until done)")
}

const defaultModel = "meta-llama/llama-3.1-8b-instruct"

// apply overlays the flags the user set on base and resolves the latency
// profile: model/hardware/tp choose it, explicit coefficients override it.
func (f *simFlags) apply(fs *pflag.FlagSet, base cluster.Config, catalog *latency.Catalog) (cluster.Config, error) {
	c := base
	p, err := catalog.Find(f.model, f.hardware, f.tp)
	if err != nil {
		return c, err
	}
	c.Latency, c.TotalKVBlocks = p.Coeffs, p.TotalKVBlocks
	if changed(fs, "alpha-coeffs") {
		if len(f.alpha) != 3 {
			return c, fmt.Errorf("--alpha-coeffs: need exactly 3 values α0,α1,α2, got %d", len(f.alpha))
		}
		copy(c.Latency.Alpha[:], f.alpha)
	}
	if changed(fs, "beta-coeffs") {
		if len(f.beta) != 3 {
			return c, fmt.Errorf("--beta-coeffs: need exactly 3 values β0,β1,β2, got %d", len(f.beta))
		}
		copy(c.Latency.Beta[:], f.beta)
	}
	set := func(name string, apply func()) {
		if changed(fs, name) {
			apply()
		}
	}
	set("num-instances", func() { c.NumInstances = f.numInstances })
	set("total-kv-blocks", func() { c.TotalKVBlocks = f.totalKVBlocks })
	set("block-size-in-tokens", func() { c.BlockSize = f.blockSize })
	set("max-num-running-reqs", func() { c.MaxRunning = f.maxRunning })
	set("max-num-scheduled-tokens", func() { c.MaxScheduledTokens = f.maxScheduledTokens })
	set("long-prefill-token-threshold", func() { c.PrefillThreshold = f.prefillThreshold })
	set("routing-policy", func() { c.Routing.Policy = f.routingPolicy })
	set("prefix-index-capacity", func() { c.Routing.PrefixIndexCapacity = f.prefixIndexCap })
	set("scheduler", func() { c.Scheduler = f.scheduler })
	set("priority-policy", func() { c.Priority = f.priorityPolicy })
	set("admission-policy", func() { c.Admission.Policy = f.admissionPolicy })
	set("token-bucket-capacity", func() { c.Admission.BucketCapacity = f.bucketCapacity })
	set("token-bucket-refill-rate", func() { c.Admission.RefillRate = f.bucketRefill })
	set("snapshot-refresh-interval", func() { c.SnapshotRefresh = f.snapshotRefresh })
	set("horizon", func() { c.Horizon = f.horizon })
	if changed(fs, "routing-scorers") {
		scorers, err := route.ParseScorers(f.routingScorers)
		if err != nil {
			return c, fmt.Errorf("--routing-scorers: %v", err)
		}
		c.Routing.Scorers = scorers
	}
	return c, c.Validate()
}
