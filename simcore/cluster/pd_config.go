package cluster

import (
	"fmt"
	"math"
	"strings"

	"optimize/simcore/errtext"
	"optimize/simcore/keys"
	"optimize/simcore/latency"
	"optimize/simcore/route"
)

// PDConfig is prefill/decode disaggregation as BLIS f90a1e3a models it:
// pools of instances by index (the first Prefill instances prefill, the
// next Decode decode, the next Shared do both, any others serve nothing),
// a decider that sends a request's prefill to a prefill instance and its
// KV over a link to the decode instance chosen first, and the link's
// speed. All zero instance counts leave it off.
type PDConfig struct {
	Prefill, Decode, Shared int
	// Decider is one of PDDeciderNames; "" is never (every request is
	// served whole by the decode instance chosen for it).
	Decider string
	// PrefixThreshold (tokens): prefix-threshold disaggregates a request
	// whose input tokens not cached on the chosen decode instance exceed it.
	PrefixThreshold int64
	// TransferBandwidth is the link's rate in GB/s (10⁹ bytes);
	// TransferBaseLatency its fixed cost per transfer in ms.
	TransferBandwidth   float64
	TransferBaseLatency float64
	// TransferContention shares the bandwidth among the transfers in
	// flight when a transfer starts (the share is fixed for its duration).
	TransferContention bool
	// PrefillScorers and DecodeScorers give a pool a weighted policy of
	// its own (its own random stream); nil: the pool routes with the
	// cluster's routing policy.
	PrefillScorers, DecodeScorers []route.ScorerWeight
	// PrefillTP and DecodeTP are the pools' tensor parallelism (0 = tp):
	// their latency model and KV capacity; the prefill TP also divides the
	// KV bytes a transfer carries.
	PrefillTP, DecodeTP int
}

// The deciders.
const (
	PDNever           = "never"
	PDAlways          = "always"
	PDPrefixThreshold = "prefix-threshold"
)

// PDDeciderNames lists the deciders, the default first.
func PDDeciderNames() []string { return []string{PDNever, PDAlways, PDPrefixThreshold} }

// PD defaults, BLIS f90a1e3a's.
const (
	DefaultPDPrefixThreshold     = 16
	DefaultPDTransferBandwidth   = 25.0 // GB/s
	DefaultPDTransferBaseLatency = 0.05 // ms
)

// Enabled reports whether pools are configured.
func (p *PDConfig) Enabled() bool { return p.Prefill > 0 || p.Decode > 0 || p.Shared > 0 }

// pool roles of an instance, as bits: a shared instance has both.
const (
	rolePrefill uint8 = 1 << iota
	roleDecode
)

// role returns instance i's pool bits (0: in no pool).
func (p *PDConfig) role(i int) uint8 {
	switch {
	case i < p.Prefill:
		return rolePrefill
	case i < p.Prefill+p.Decode:
		return roleDecode
	case i < p.Prefill+p.Decode+p.Shared:
		return rolePrefill | roleDecode
	}
	return 0
}

// tpOf returns the TP of a pool with bits role: a prefill instance the
// prefill TP, a decode or shared one the decode TP, others tp.
func (p *PDConfig) tpOf(role uint8, tp int) int {
	switch {
	case role&roleDecode != 0 && p.DecodeTP > 0:
		return p.DecodeTP
	case role == rolePrefill && p.PrefillTP > 0:
		return p.PrefillTP
	}
	return tp
}

// check validates the pools against n instances, with one-line errors
// naming the setting.
func (p *PDConfig) check(n int) error {
	switch {
	case p.Prefill < 0:
		return errtext.BadSetting(keys.PDPrefillInstances, "must be ≥ 0, got %d", p.Prefill)
	case p.Decode < 0:
		return errtext.BadSetting(keys.PDDecodeInstances, "must be ≥ 0, got %d", p.Decode)
	case p.Shared < 0:
		return errtext.BadSetting(keys.PDSharedInstances, "must be ≥ 0, got %d", p.Shared)
	case p.PrefixThreshold < 0:
		return errtext.BadSetting(keys.PDPrefixThreshold, "must be ≥ 0 tokens, got %d", p.PrefixThreshold)
	case !(p.TransferBandwidth >= 0) || math.IsInf(p.TransferBandwidth, 0):
		return errtext.BadSetting(keys.PDTransferBandwidth, "must be a finite number > 0 GB/s (0 = %v), got %v", DefaultPDTransferBandwidth, p.TransferBandwidth)
	case !(p.TransferBaseLatency >= 0) || math.IsInf(p.TransferBaseLatency, 0):
		return errtext.BadSetting(keys.PDTransferBaseLatency, "must be a finite number ≥ 0 ms, got %v", p.TransferBaseLatency)
	case p.PrefillTP < 0:
		return errtext.BadSetting(keys.PDPrefillTP, "must be ≥ 1 (0 = tp), got %d", p.PrefillTP)
	case p.DecodeTP < 0:
		return errtext.BadSetting(keys.PDDecodeTP, "must be ≥ 1 (0 = tp), got %d", p.DecodeTP)
	}
	if p.Decider != "" && !contains(PDDeciderNames(), p.Decider) {
		return errtext.BadSetting(keys.PDDecider, "unknown value %q (allowed: %s)", p.Decider, strings.Join(PDDeciderNames(), ", "))
	}
	if !p.Enabled() {
		return nil
	}
	if p.Shared == 0 && (p.Prefill == 0 || p.Decode == 0) {
		if p.Prefill == 0 {
			return errtext.BadSetting(keys.PDDecodeInstances, "%d decode instances need a prefill pool: pd.prefill_instances or pd.shared_instances ≥ 1, got 0", p.Decode)
		}
		return errtext.BadSetting(keys.PDPrefillInstances, "%d prefill instances need a decode pool: pd.decode_instances or pd.shared_instances ≥ 1, got 0", p.Prefill)
	}
	if sum := p.Prefill + p.Decode + p.Shared; sum > n {
		return errtext.BadSetting(keys.NumInstances, "must be ≥ the pools' %d instances (%d prefill + %d decode + %d shared), got %d", sum, p.Prefill, p.Decode, p.Shared, n)
	}
	for _, s := range []struct {
		pool string
		list []route.ScorerWeight
	}{{"prefill", p.PrefillScorers}, {"decode", p.DecodeScorers}} {
		if s.list == nil {
			continue
		}
		if len(s.list) == 0 {
			return fmt.Errorf("the %s pool's routing scorers: give at least one with weight > 0", s.pool)
		}
		cfg := route.Config{Policy: "weighted", Scorers: s.list}
		if err := cfg.Validate(); err != nil {
			return fmt.Errorf("the %s pool's routing scorers: %v", s.pool, err)
		}
	}
	return nil
}

// bandwidth is the transfer bandwidth in GB/s (0 = the default).
func (p *PDConfig) bandwidth() float64 {
	if p.TransferBandwidth == 0 {
		return DefaultPDTransferBandwidth
	}
	return p.TransferBandwidth
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// transferDuration is BLIS f90a1e3a's KV transfer time in µs: a fixed
// base latency plus the prompt's KV — every block of it, ceil(input /
// block size), at bytesPerToken per token — over the bandwidth, which a
// transfer starting among active ones (contention on) gets 1/active of.
// Rounded up, at least 1 µs. Bandwidth is GB/s, base latency ms.
func transferDuration(blocks, blockSize int64, bytesPerToken, gbps, baseMs float64, active int) int64 {
	bytes := float64(blocks) * (float64(blockSize) * bytesPerToken)
	bw := gbps * 1000.0 // bytes per µs
	if active > 1 {
		bw /= float64(active)
	}
	d := int64(math.Ceil(baseMs*1000.0 + bytes/bw))
	return max(d, 1)
}

// pdBytesPerToken is the KV bytes per token a transfer carries: the
// prefill instances' share at the prefill TP.
func pdBytesPerToken(a latency.Arch, tp int) (float64, error) {
	b, err := latency.KVBytesPerToken(a, tp)
	if err != nil {
		return 0, errtext.BadSetting(keys.PDPrefillTP, "the KV bytes per token a transfer carries: %v", err)
	}
	return b, nil
}
