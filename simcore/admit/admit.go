// Package admit decides, before routing, whether the cluster accepts a
// request, as BLIS's admission policies do. A rejected request is counted
// and dropped; it never reaches an instance.
package admit

import (
	"fmt"
	"math"
	"math/rand"
	"strings"

	"optimize/simcore"
	"optimize/simcore/errtext"
	"optimize/simcore/keys"
	"optimize/simcore/route"
)

// Policy admits or rejects each arriving request. Admit is called once per
// request, in arrival order, with a non-decreasing now.
type Policy interface {
	// Admit reports whether r is accepted at time now, given the
	// cluster's load as routing sees it. No policy at the BLIS reference
	// commit read the load; slo-gated and probabilistic do.
	Admit(r *simcore.Request, now simcore.Tick, load *Load) bool
}

// Load is what the admission policies read of the cluster at an arrival.
type Load struct {
	// QueueDepthTotal is the sum of the instances' wait-queue lengths.
	QueueDepthTotal int64
	// Instances are the per-instance snapshots routing reads, refreshed as
	// often as routing's.
	Instances []route.Snapshot
}

// Defaults of BLIS's --token-bucket-capacity and --token-bucket-refill-rate.
const (
	DefaultBucketCapacity = 10000 // tokens
	DefaultRefillRate     = 1000  // tokens per second
)

// Config selects and parameterises a policy. Zero values mean defaults.
type Config struct {
	Policy         string  // one of PolicyNames; "" means always-admit
	BucketCapacity float64 // token-bucket size in input tokens; 0 means DefaultBucketCapacity
	RefillRate     float64 // token-bucket refill in tokens per second; 0 means DefaultRefillRate
	// SLOGate is slo-gated's per-class threshold on the cluster's total
	// queue depth: a request of a listed class is rejected while the depth
	// exceeds its threshold; unlisted classes are always admitted.
	SLOGate simcore.PerClass
	// Probabilistic parameterises the probabilistic policy.
	Probabilistic ProbabilisticConfig
}

// policyKind is one row of the policy table.
type policyKind struct {
	name  string
	build func(cfg Config) Policy
}

// Names of the class-shedding policies.
const (
	SLOGated      = "slo-gated"
	Probabilistic = "probabilistic"
)

// policyKinds is the one place where policy names are defined; the first
// row is the default.
func policyKinds() []policyKind {
	return []policyKind{
		{"always-admit", func(Config) Policy { return alwaysAdmit{} }},
		{"token-bucket", func(cfg Config) Policy { return newTokenBucket(cfg.BucketCapacity, cfg.RefillRate) }},
		{"reject-all", func(Config) Policy { return rejectAll{} }},
		{SLOGated, func(cfg Config) Policy { return newSLOGate(cfg.SLOGate) }},
		{Probabilistic, func(cfg Config) Policy { return newProbabilistic(cfg.Probabilistic) }},
	}
}

// PolicyNames lists the accepted policy names, the default first.
func PolicyNames() []string {
	kinds := policyKinds()
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.name
	}
	return names
}

// Validate checks cfg as New does, without building a policy.
func Validate(cfg Config) error {
	_, err := build(cfg)
	return err
}

// New builds the policy cfg describes. rng is the policy's own random
// stream (probabilistic draws from it; the others never touch it).
// Parameters are validated whatever the policy, so that a bad value is
// never silently ignored.
func New(cfg Config, rng *rand.Rand) (Policy, error) {
	p, err := build(cfg)
	if err != nil {
		return nil, err
	}
	if pr, ok := p.(*probabilistic); ok {
		if rng == nil {
			return nil, fmt.Errorf("admission policy %s needs a random stream", Probabilistic)
		}
		pr.rng = rng
	}
	return p, nil
}

func build(cfg Config) (Policy, error) {
	if cfg.BucketCapacity == 0 {
		cfg.BucketCapacity = DefaultBucketCapacity
	}
	if cfg.RefillRate == 0 {
		cfg.RefillRate = DefaultRefillRate
	}
	// BLIS requires both to be finite and > 0 (0 here means the default).
	if !(cfg.BucketCapacity > 0) || math.IsInf(cfg.BucketCapacity, 0) {
		return nil, errtext.BadSetting(keys.BucketCapacity, "must be a finite number > 0, got %v", cfg.BucketCapacity)
	}
	if !(cfg.RefillRate > 0) || math.IsInf(cfg.RefillRate, 0) {
		return nil, errtext.BadSetting(keys.BucketRefillRate, "must be a finite number > 0 tokens/s, got %v", cfg.RefillRate)
	}
	if err := validateSLOGate(cfg); err != nil {
		return nil, err
	}
	if err := cfg.Probabilistic.validate(); err != nil {
		return nil, err
	}
	name := cfg.Policy
	if name == "" {
		name = policyKinds()[0].name
	}
	for _, k := range policyKinds() {
		if k.name == name {
			return k.build(cfg), nil
		}
	}
	return nil, errtext.BadSetting(keys.AdmissionPolicy, "unknown value %q (allowed: %s)", cfg.Policy, strings.Join(PolicyNames(), ", "))
}

type alwaysAdmit struct{}

func (alwaysAdmit) Admit(*simcore.Request, simcore.Tick, *Load) bool { return true }

// rejectAll is BLIS's pathological policy, useful as a sanity bound.
type rejectAll struct{}

func (rejectAll) Admit(*simcore.Request, simcore.Tick, *Load) bool { return false }

// tokenBucket rate-limits by input tokens: the bucket starts full, refills
// continuously up to its capacity, and a request is admitted, and charged
// its input length, only if that many tokens are available. A request longer
// than the capacity is never admitted.
type tokenBucket struct {
	capacity   float64
	refillRate float64 // tokens per second
	tokens     float64
	lastRefill simcore.Tick
}

func newTokenBucket(capacity, refillRate float64) *tokenBucket {
	return &tokenBucket{capacity: capacity, refillRate: refillRate, tokens: capacity}
}

func (b *tokenBucket) Admit(r *simcore.Request, now simcore.Tick, _ *Load) bool {
	// Same arithmetic, in the same order, as BLIS, so that the admitted set
	// is identical: elapsed µs × rate / 1e6, capped, and the refill clock
	// moves only when time has passed.
	if elapsed := now - b.lastRefill; elapsed > 0 {
		b.tokens = min(b.capacity, b.tokens+float64(elapsed)*b.refillRate/1e6)
		b.lastRefill = now
	}
	cost := float64(r.InputLen)
	if b.tokens < cost {
		return false
	}
	b.tokens -= cost
	return true
}
