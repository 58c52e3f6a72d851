package workload

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"optimize/simcore"
	"optimize/simcore/internal/mix"
)

// TraceWindow is a part of a trace in µs since its first row: [Start, End),
// End 0 = to the end.
type TraceWindow struct{ Start, End int64 }

// String writes the window as ParseTraceWindow reads it.
func (w TraceWindow) String() string {
	end := ""
	if w.End > 0 {
		end = formatDuration(w.End)
	}
	return formatDuration(w.Start) + "-" + end
}

func formatDuration(us int64) string {
	return (time.Duration(us) * time.Microsecond).String()
}

// ParseTraceWindow reads START-END, each a duration since the trace's first row
// ("10m-40m", "90s-1h"; END may be omitted: to the end; "" is the whole
// trace).
func ParseTraceWindow(s string) (TraceWindow, error) {
	if strings.TrimSpace(s) == "" {
		return TraceWindow{}, nil
	}
	lo, hi, ok := strings.Cut(s, "-")
	if !ok {
		return TraceWindow{}, fmt.Errorf("%q is not START-END (durations since the trace's first row, e.g. 10m-40m)", s)
	}
	var w TraceWindow
	for _, part := range []struct {
		text string
		dst  *int64
	}{{lo, &w.Start}, {hi, &w.End}} {
		t := strings.TrimSpace(part.text)
		if t == "" {
			continue
		}
		d, err := time.ParseDuration(t)
		if err != nil || d < 0 {
			return TraceWindow{}, fmt.Errorf("%q: %q is not a duration >= 0 like 90s, 10m or 1h30m", s, t)
		}
		*part.dst = d.Microseconds()
	}
	if w.End != 0 && w.End <= w.Start {
		return TraceWindow{}, fmt.Errorf("%q: the end must be after the start", s)
	}
	return w, nil
}

// SLOMix is the share of each SLO class among rows that carry none.
type SLOMix []SLOShare

// SLOShare is one class's share of a mix.
type SLOShare struct {
	Class simcore.SLOClass
	Share float64
}

// ParseSLOMix reads CLASS=SHARE,… ("critical=0.2,standard=0.5,sheddable=0.3");
// the shares must add up to 1.
func ParseSLOMix(s string) (SLOMix, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var m SLOMix
	for _, item := range strings.Split(s, ",") {
		name, share, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("%q is not CLASS=SHARE (classes: %s)", item, simcore.SLOClassNames)
		}
		c, err := simcore.ParseSLOClass(name)
		if err != nil || c == simcore.SLONone {
			return nil, fmt.Errorf("unknown SLO class %q (allowed: %s)", strings.TrimSpace(name), simcore.SLOClassNames)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(share), 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a number", c, share)
		}
		m = append(m, SLOShare{Class: c, Share: v})
	}
	return m, m.check()
}

// String writes the mix as ParseSLOMix reads it.
func (m SLOMix) String() string {
	parts := make([]string, len(m))
	for i, s := range m {
		parts[i] = s.Class.String() + "=" + strconv.FormatFloat(s.Share, 'g', -1, 64)
	}
	return strings.Join(parts, ",")
}

func (m SLOMix) check() error {
	sum := 0.0
	seen := map[simcore.SLOClass]bool{}
	for _, s := range m {
		if seen[s.Class] {
			return fmt.Errorf("slo mix: %s appears twice", s.Class)
		}
		seen[s.Class] = true
		if !(s.Share >= 0 && s.Share <= 1) {
			return fmt.Errorf("slo mix: %s=%v: a share is in [0, 1]", s.Class, s.Share)
		}
		sum += s.Share
	}
	if len(m) > 0 && math.Abs(sum-1) > 1e-6 {
		return fmt.Errorf("slo mix: the shares add up to %v, not 1", sum)
	}
	return nil
}

// pick returns the class whose cumulative share first exceeds u in [0, 1).
func (m SLOMix) pick(u float64) simcore.SLOClass {
	acc := 0.0
	for _, s := range m {
		if acc += s.Share; u < acc {
			return s.Class
		}
	}
	if len(m) == 0 {
		return simcore.SLONone
	}
	return m[len(m)-1].Class // rounding: the shares add up to just under 1
}

// blockChains turns Mooncake hash ids into the simulator's prefix blocks.
// Two prompts share their first k×512 tokens exactly when their first k
// ids agree, so the identity of token t is the chain of ids up to t's
// Mooncake block: a simulator block j (tokens [jB, (j+1)B)) is named by
// the chained hash of the ids through the Mooncake block holding its last
// token, and its index j. Requests agreeing on k ids thus agree on every
// simulator block inside their first k×512 tokens, whatever B is.
//
// Each distinct chain keeps the hashes computed for it (up to the longest
// prompt seen with it) in an arena that its extensions append to in place
// while they can: a conversation's turns share one array, and the
// simulator's prefix tables, which number slices by identity, grow with
// the distinct blocks rather than with every request's copy.
type blockChains struct {
	blockSize int
	nodes     map[uint64]chainNode
	chain     []uint64 // scratch: chained hashes of a row's ids
}

// chainNode is what is known of a chain: the first n hashes of arena.
type chainNode struct {
	arena *hashArena
	n     int
}

// hashArena is an append-only array of block hashes; entries once
// written never change, so slices of it stay valid.
type hashArena struct{ hashes []uint64 }

func newBlockChains(blockSize int) *blockChains {
	return &blockChains{blockSize: blockSize, nodes: map[uint64]chainNode{}}
}

// chainSeed starts every chain; the multipliers are odd 64-bit constants.
const chainSeed = 0x6a09e667f3bcc909

// prefix returns the hashes of the full simulator blocks of an input of
// the given length that ids name (nil without ids).
func (b *blockChains) prefix(ids []uint64, input int) []uint64 {
	bs := b.blockSize
	need := min(input, len(ids)*MooncakeBlockTokens) / bs
	if need == 0 {
		return nil
	}
	b.chain = b.chain[:0]
	c := uint64(chainSeed)
	for _, id := range ids {
		c = mix.Splitmix64(c*0x9e3779b97f4a7c15 ^ id)
		b.chain = append(b.chain, c)
	}
	// The deepest chain already known starts this prompt's hashes.
	var from chainNode
	for k := len(ids) - 1; k >= 0; k-- {
		if n, ok := b.nodes[b.chain[k]]; ok {
			from = n
			break
		}
	}
	a := from.arena
	if from.n < need {
		if a == nil || len(a.hashes) != from.n {
			// Another prompt extended the arena differently: copy.
			fresh := &hashArena{hashes: make([]uint64, from.n, 2*need)}
			if a != nil {
				copy(fresh.hashes, a.hashes[:from.n])
			}
			a = fresh
		}
		for j := from.n; j < need; j++ {
			m := ((j+1)*bs - 1) / MooncakeBlockTokens // Mooncake block of block j's last token
			a.hashes = append(a.hashes, mix.Splitmix64(b.chain[m]^uint64(j+1)*0xd1b54a32d192ed03)|1)
		}
	}
	for k, c := range b.chain {
		n := min(need, min(input, (k+1)*MooncakeBlockTokens)/bs)
		if old, ok := b.nodes[c]; !ok || old.n < n {
			b.nodes[c] = chainNode{arena: a, n: n}
		}
	}
	return a.hashes[:need:need]
}

// ReplayControl is one replay option settable by name: a flag of the
// command line (Flag, "" when another flag sets it) and a key of a trace
// workload's name (NAME?KEY=VALUE&…).
type ReplayControl struct {
	Key, Flag, Usage string
	set              func(o *ReplayOptions, value string) error
}

// ReplayControls lists the replay options settable by name.
func ReplayControls() []ReplayControl {
	return []ReplayControl{
		{"scale", "trace-scale", "multiply the trace's times by this factor (2 = half its rate)", func(o *ReplayOptions, v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || !(f > 0) || math.IsInf(f, 0) {
				return fmt.Errorf("%q is not a factor > 0", v)
			}
			o.TimeScale = f
			return nil
		}},
		{"rate", "trace-rate", "scale the trace's times to this mean rate, requests/s (replaces the scale)", func(o *ReplayOptions, v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || !(f > 0) || math.IsInf(f, 0) {
				return fmt.Errorf("%q is not a rate > 0", v)
			}
			o.TargetRate = f
			return nil
		}},
		{"window", "trace-window", "replay START-END of the trace only, durations since its first row (e.g. 10m-40m)", func(o *ReplayOptions, v string) (err error) {
			o.Window, err = ParseTraceWindow(v)
			return err
		}},
		{"client-cap", "trace-client-cap", "cap the requests in flight, as the recording client did (BLIS observe's --max-concurrency): a request due while that many are in flight is sent when one completes; a real run then replays at its due times (arrival_time_us), not its send times (0 = no cap)", func(o *ReplayOptions, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("%q is not a count >= 0", v)
			}
			o.MaxConcurrency = n
			return nil
		}},
		{"seed-window", "", "for a study: the length of the window each seed replays, a duration on the trace's clock (default: the first half of the studied part cut into 10, or into as many as the study has seeds)", func(o *ReplayOptions, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return fmt.Errorf("%q is not a duration > 0 like 90s or 5m", v)
			}
			o.SeedWindow = d.Microseconds()
			return nil
		}},
		{"max-requests", "", "replay at most this many requests", func(o *ReplayOptions, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("%q is not a count >= 0", v)
			}
			o.MaxRequests = n
			return nil
		}},
		{"slo-mix", "slo-mix", "SLO classes for trace rows that carry none, CLASS=SHARE,… adding up to 1 (drawn from the seed), e.g. critical=0.2,standard=0.5,sheddable=0.3", func(o *ReplayOptions, v string) (err error) {
			o.SLOMix, err = ParseSLOMix(v)
			return err
		}},
		{"sessions", "trace-sessions", "carry the trace's sessions, where it has them (true or false)", func(o *ReplayOptions, v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("%q is not true or false", v)
			}
			o.NoSessions = !b
			return nil
		}},
	}
}

// SetControl sets the replay option named key (a ReplayControl's Key).
func (o *ReplayOptions) SetControl(key, value string) error {
	var keys []string
	for _, c := range ReplayControls() {
		if c.Key == key {
			if err := c.set(o, strings.TrimSpace(value)); err != nil {
				return fmt.Errorf("trace %s: %v", key, err)
			}
			return nil
		}
		keys = append(keys, c.Key)
	}
	return fmt.Errorf("unknown trace control %q (allowed: %s)", key, strings.Join(keys, ", "))
}

// ParseReplayControls reads KEY=VALUE&… into o.
func (o *ReplayOptions) ParseReplayControls(s string) error {
	for _, item := range strings.Split(s, "&") {
		if strings.TrimSpace(item) == "" {
			continue
		}
		key, value, ok := strings.Cut(item, "=")
		if !ok {
			return fmt.Errorf("trace control %q is not KEY=VALUE", item)
		}
		if err := o.SetControl(strings.TrimSpace(key), value); err != nil {
			return err
		}
	}
	return nil
}
