// Package workload turns BLIS v2 workload specs and TraceV2 traces into the
// lazy request streams the simulator pulls (simcore.Source).
//
// Generation reproduces BLIS (commit 7fd7a88d) draw for draw: the same
// partitioned math/rand streams, samplers and draw order, so a single-turn
// spec yields the same arrival times, lengths and SLO classes as BLIS for the
// same seed. Token ids are never stored: they are fed into a block hasher as
// they are drawn and only the chained block hashes are kept.
package workload

import (
	"fmt"
	"os"
)

// Spec is a BLIS v2 workload specification (the YAML given to
// `blis run --workload-spec`). Field names follow BLIS's keys.
type Spec struct {
	Version       string   `yaml:"version"`        // "", "1" or "2"
	Seed          int64    `yaml:"seed"`           // workload seed
	Category      string   `yaml:"category"`       // label only: "", language, multimodal, reasoning
	AggregateRate float64  `yaml:"aggregate_rate"` // requests (or sessions) per second, all clients together
	NumRequests   int64    `yaml:"num_requests"`   // 0 = bounded by the horizon only
	Horizon       int64    `yaml:"horizon"`        // µs; 0 = unlimited
	Clients       []Client `yaml:"clients"`
	// SLOTargets are the workload's latency targets per SLO class: the
	// defaults of a run's slo.*_target_ms settings (see FillTargets).
	SLOTargets map[string]SLOTarget `yaml:"slo_targets"`

	// Name is where the spec came from (file path or built-in name); it
	// prefixes every error message.
	Name string `yaml:"-"`
}

// SLOTarget is one class's latency targets in ms, each optional: TTFT,
// mean inter-token latency ((E2E − TTFT) / (output tokens − 1)) and
// end-to-end latency.
type SLOTarget struct {
	TTFTMs *float64 `yaml:"ttft_ms"`
	ITLMs  *float64 `yaml:"itl_ms"`
	E2EMs  *float64 `yaml:"e2e_ms"`
}

// Client is one traffic source of a spec.
type Client struct {
	ID           string       `yaml:"id"`
	TenantID     string       `yaml:"tenant_id"` // flow control's flow of the client's requests
	SLOClass     string       `yaml:"slo_class"`
	Model        string       `yaml:"model"` // carried by BLIS, unused here
	RateFraction float64      `yaml:"rate_fraction"`
	Arrival      Arrival      `yaml:"arrival"`
	Input        Distribution `yaml:"input_distribution"`
	Output       Distribution `yaml:"output_distribution"`
	PrefixGroup  string       `yaml:"prefix_group"`
	PrefixLength *int         `yaml:"prefix_length"` // nil = the group's length (default 50)
	Streaming    bool         `yaml:"streaming"`     // unused by the simulator, as in BLIS
	Network      *Network     `yaml:"network"`       // validated, then ignored, as in BLIS's simulator
	Lifecycle    *Lifecycle   `yaml:"lifecycle"`
	Reasoning    *Reasoning   `yaml:"reasoning"`
	// ClosedLoop is newer BLIS's client-level switch; it may equally be given
	// as reasoning.multi_turn.closed_loop. Default: true for multi-turn clients.
	ClosedLoop *bool `yaml:"closed_loop"`
}

// Arrival configures a client's inter-arrival process.
type Arrival struct {
	Process string   `yaml:"process"` // poisson, gamma, weibull, constant
	CV      *float64 `yaml:"cv"`      // gamma and weibull only; default 1
}

// Distribution parameterises a token-length distribution.
type Distribution struct {
	Type   string             `yaml:"type"`
	Params map[string]float64 `yaml:"params"`
}

// Network is BLIS's client network model; the simulator ignores it.
type Network struct {
	RTTMs         float64 `yaml:"rtt_ms"`
	BandwidthMbps float64 `yaml:"bandwidth_mbps"`
}

// Lifecycle limits a client to activity windows.
type Lifecycle struct {
	Windows []Window `yaml:"windows"`
}

// Window is an active period [StartUs, EndUs).
type Window struct {
	StartUs int64 `yaml:"start_us"`
	EndUs   int64 `yaml:"end_us"`
}

// Reasoning holds BLIS's reasoning-model options; only multi_turn matters
// to the simulator, the reason ratio is drawn (to keep BLIS's draw order)
// and discarded.
type Reasoning struct {
	ReasonRatio Distribution `yaml:"reason_ratio_distribution"`
	MultiTurn   *MultiTurn   `yaml:"multi_turn"`
}

// MultiTurn makes each arrival of the client start a session of rounds.
type MultiTurn struct {
	MaxRounds     int    `yaml:"max_rounds"`
	ThinkTimeUs   int64  `yaml:"think_time_us"`
	ContextGrowth string `yaml:"context_growth"` // "" or accumulate
	SingleSession bool   `yaml:"single_session"`
	ClosedLoop    *bool  `yaml:"closed_loop"` // default true
}

// ParseSpec parses and validates a spec; name prefixes error messages.
func ParseSpec(name string, data []byte) (*Spec, error) {
	spec := &Spec{}
	if err := decodeStrict(name, data, spec); err != nil {
		return nil, err
	}
	spec.Name = name
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	return spec, nil
}

// LoadSpecFile reads, parses and validates a spec file.
func LoadSpecFile(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading workload spec: %w", err)
	}
	return ParseSpec(path, data)
}

// multiTurn returns the client's multi-turn options, or nil.
func (c *Client) multiTurn() *MultiTurn {
	if c.Reasoning == nil {
		return nil
	}
	return c.Reasoning.MultiTurn
}

// closedLoop reports whether the client's sessions wait for each round to
// complete before issuing the next (the default for multi-turn clients).
func (c *Client) closedLoop() bool {
	mt := c.multiTurn()
	if mt == nil {
		return false
	}
	if c.ClosedLoop != nil {
		return *c.ClosedLoop
	}
	if mt.ClosedLoop != nil {
		return *mt.ClosedLoop
	}
	return true
}
