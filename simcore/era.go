package simcore

import (
	"slices"
	"strings"

	"optimize/simcore/errtext"
	"optimize/simcore/keys"
)

// Era names the BLIS behaviour the simulator reproduces where BLIS changed
// the mechanics between the two commits it is checked against. Every
// difference is small and lives where the mechanic does; the era only
// switches it:
//
//   - event order: in the August era an instance's queued request reaches
//     the wait queue before a step due at the same microsecond forms its
//     batch (BLIS orders an instance's events by time, then kind, then
//     schedule order; the March era keeps schedule order alone);
//   - preemption: the August era drops the victim's inter-token latencies,
//     so its E2E is its last TTFT plus the ITLs after its re-prefill (the
//     March era keeps the first attempt's too);
//   - output tokens: the August era counts a completed request's output
//     tokens when it completes, all of them (the prefill's first token
//     included), and nothing for a request that never completes; the March
//     era counts one per decode step (output − 1 per request);
//   - KV allocation is check-then-act in the August era: a failed
//     admission changes nothing, where the March era's rollback moved the
//     idle cached blocks it had committed to the LRU tail;
//   - routing signals: unless an interval is given, the August era
//     refreshes the queue, batch and KV signals routing and admission read
//     every 50 ms (SnapshotRefresh), the March era reads them fresh.
type Era string

// The eras, named by the BLIS commit whose behaviour they reproduce.
const (
	// EraMarch2026 is BLIS 7fd7a88d (2026-03-11), the blackbox-latency
	// world every earlier reproduction was checked against.
	EraMarch2026 Era = "7fd7a88d"
	// EraAugust2026 is BLIS f90a1e3a (2026-08-22), the trained-physics
	// world.
	EraAugust2026 Era = "f90a1e3a"
)

// EraNames lists the accepted eras, the default first.
func EraNames() []string { return []string{string(EraMarch2026), string(EraAugust2026)} }

// Resolve returns the era itself, or the March era for "" (the caller
// that knows the latency model picks the default: cluster.Config.EffectiveEra).
func (e Era) Resolve() Era {
	if e == "" {
		return EraMarch2026
	}
	return e
}

// August reports whether e is the August 2026 era.
func (e Era) August() bool { return e.Resolve() == EraAugust2026 }

// SnapshotRefresh is the era's default interval, in µs, between refreshes
// of an instance's queue, batch and KV signals as routing and admission
// read them: 50,000 in the August era (BLIS f90a1e3a's
// --snapshot-refresh-interval default, llm-d's metrics refresh interval),
// 0 (always fresh) in the March era.
func (e Era) SnapshotRefresh() int64 {
	if e.August() {
		return 50_000
	}
	return 0
}

// Validate checks the name; the error is one line naming the setting.
func (e Era) Validate() error {
	if e != "" && !slices.Contains(EraNames(), string(e)) {
		return errtext.BadSetting(keys.Era, "unknown value %q (allowed: %s)", string(e), strings.Join(EraNames(), ", "))
	}
	return nil
}
