// Package flow is the gateway's flow control as llm-d's EPP has it and
// BLIS f90a1e3a models it: admitted requests wait in a queue of priority
// bands, one per class priority, each holding one FIFO flow per tenant,
// and leave it for routing one at a time while a saturation detector
// reads the pool below the band's ceiling. The engine (package cluster)
// owns the clock and the events; this package holds the queue, the
// detectors and their settings, and draws no random numbers.
package flow

import (
	"math"
	"strings"

	"optimize/simcore"
	"optimize/simcore/errtext"
	"optimize/simcore/keys"
)

// Saturation detectors.
const (
	DetectNever       = "never"       // always 0: the queue passes every request through
	DetectUtilization = "utilization" // mean over instances of max(queue / qdT, KV / kvT)
	DetectConcurrency = "concurrency" // Σ in-flight / (instances × max concurrency)
)

// Dispatch orders inside a flow.
const (
	OrderFIFO     = "fifo"
	OrderPriority = "priority"
	// OrderSLODeadline takes the flow's entry whose enqueue time plus its
	// class's target (Config.SLOTargets) is the earliest.
	OrderSLODeadline = "slo-deadline"
)

// Fairness policies: which tenant's flow of a band goes next.
const (
	FairGlobalStrict = "global-strict" // the flow whose head was enqueued first
	FairRoundRobin   = "round-robin"   // the next tenant by name after the last one served
)

// DetectorNames lists the detectors, BLIS's default first.
func DetectorNames() []string { return []string{DetectNever, DetectUtilization, DetectConcurrency} }

// OrderNames lists the dispatch orders, BLIS's default first.
func OrderNames() []string { return []string{OrderFIFO, OrderPriority, OrderSLODeadline} }

// FairnessNames lists the fairness policies, BLIS's default first.
func FairnessNames() []string { return []string{FairGlobalStrict, FairRoundRobin} }

// BLIS's defaults for the settings whose zero value means "default".
const (
	DefaultQueueDepthThreshold = 5
	DefaultKVUtilThreshold     = 0.8
	DefaultMaxConcurrency      = 100
	DefaultUsageLimit          = 1
	DefaultTick                = 1000 // µs
)

// Config is flow control's settings; the zero value is flow control off.
// A zero threshold, concurrency, usage limit or tick, and an empty name,
// mean the default.
type Config struct {
	Enabled             bool
	Detector            string
	QueueDepthThreshold float64 // utilization: wait-queue length that counts as saturated
	KVUtilThreshold     float64 // utilization: GPU KV use that counts as saturated
	MaxConcurrency      int     // concurrency: in-flight requests per instance that count as saturated
	DispatchOrder       string
	SLOTargets          simcore.PerClass // µs per class, for OrderSLODeadline
	Fairness            string
	PerBandCapacity     int          // requests queued per band (0 = unlimited)
	MaxQueueDepth       int          // requests queued in all (0 = unlimited)
	UsageLimit          float64      // (0, 1]: the lowest band's saturation ceiling
	RequestTTL          simcore.Tick // µs a request may wait (0 = forever)
	QueueShedding       bool         // a full queue sheds a lower sheddable entry instead of rejecting
	DispatchTick        simcore.Tick // µs between dispatch attempts while requests wait
	InFlightEviction    bool         // saturated, evict a sheddable running request for a waiting non-sheddable one
}

// WithDefaults returns c with its zero values replaced by the defaults.
func (c Config) WithDefaults() Config {
	if c.Detector == "" {
		c.Detector = DetectNever
	}
	if c.QueueDepthThreshold == 0 {
		c.QueueDepthThreshold = DefaultQueueDepthThreshold
	}
	if c.KVUtilThreshold == 0 {
		c.KVUtilThreshold = DefaultKVUtilThreshold
	}
	if c.MaxConcurrency == 0 {
		c.MaxConcurrency = DefaultMaxConcurrency
	}
	if c.DispatchOrder == "" {
		c.DispatchOrder = OrderFIFO
	}
	if c.Fairness == "" {
		c.Fairness = FairGlobalStrict
	}
	if c.UsageLimit == 0 {
		c.UsageLimit = DefaultUsageLimit
	}
	if c.DispatchTick == 0 {
		c.DispatchTick = DefaultTick
	}
	return c
}

// Validate checks every field, whether or not flow control is on.
func (c Config) Validate() error {
	d := c.WithDefaults()
	finitePositive := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) }
	switch {
	case !oneOf(d.Detector, DetectorNames()):
		return errtext.BadSetting(keys.FlowDetector, "unknown detector %q (allowed: %s)", c.Detector, strings.Join(DetectorNames(), ", "))
	case !finitePositive(d.QueueDepthThreshold):
		return errtext.BadSetting(keys.FlowQueueDepth, "must be a finite number > 0, got %v", c.QueueDepthThreshold)
	case !finitePositive(d.KVUtilThreshold):
		return errtext.BadSetting(keys.FlowKVUtil, "must be a finite number > 0, got %v", c.KVUtilThreshold)
	case d.MaxConcurrency < 1:
		return errtext.BadSetting(keys.FlowMaxConcurrency, "must be ≥ 1, got %d", c.MaxConcurrency)
	case !oneOf(d.DispatchOrder, OrderNames()):
		return errtext.BadSetting(keys.FlowDispatchOrder, "unknown order %q (allowed: %s)", c.DispatchOrder, strings.Join(OrderNames(), ", "))
	case !oneOf(d.Fairness, FairnessNames()):
		return errtext.BadSetting(keys.FlowFairness, "unknown policy %q (allowed: %s)", c.Fairness, strings.Join(FairnessNames(), ", "))
	case c.PerBandCapacity < 0:
		return errtext.BadSetting(keys.FlowPerBandCapacity, "must be ≥ 0 (0 = unlimited), got %d", c.PerBandCapacity)
	case c.MaxQueueDepth < 0:
		return errtext.BadSetting(keys.FlowMaxQueueDepth, "must be ≥ 0 (0 = unlimited), got %d", c.MaxQueueDepth)
	case !(d.UsageLimit > 0 && d.UsageLimit <= 1):
		return errtext.BadSetting(keys.FlowUsageLimit, "must be in (0, 1], got %v", c.UsageLimit)
	case c.RequestTTL < 0:
		return errtext.BadSetting(keys.FlowRequestTTL, "must be ≥ 0 µs (0 = no limit), got %d", c.RequestTTL)
	case d.DispatchTick < 1:
		return errtext.BadSetting(keys.FlowDispatchTick, "must be ≥ 1 µs (0 = 1000), got %d", c.DispatchTick)
	}
	for cl := simcore.SLOClass(1); cl < simcore.NumSLOClasses; cl++ {
		if v, ok := c.SLOTargets.Get(cl); ok && !(v >= 1 && v <= math.MaxInt64/4 && v == math.Trunc(v)) {
			return errtext.BadSetting(keys.Member(keys.FlowSLOTarget, cl.String()), "must be a whole number of µs ≥ 1, got %v", v)
		}
	}
	return nil
}

func oneOf(v string, names []string) bool {
	for _, n := range names {
		if v == n {
			return true
		}
	}
	return false
}

// Priority is the class's band: BLIS's and llm-d's default class
// priorities (critical 4, standard 3, batch −1, sheddable −2, background
// −3; no class is standard's 3).
func Priority(c simcore.SLOClass) int {
	switch c {
	case simcore.SLOCritical:
		return 4
	case simcore.SLOBatch:
		return -1
	case simcore.SLOSheddable:
		return -2
	case simcore.SLOBackground:
		return -3
	}
	return 3
}

// Sheddable reports whether a band's requests may be shed or evicted: a
// priority below 0.
func Sheddable(priority int) bool { return priority < 0 }
