package workload

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"optimize/simcore"
	"optimize/simcore/errtext"
)

const (
	// maxTokenCount bounds every token length a spec can ask for (prefix,
	// distribution bounds, empirical bins) and every sampled length: far
	// beyond any model's context, small enough that a typo cannot hang the
	// generator or overflow int32 lengths.
	maxTokenCount = 1 << 20
	// maxSessionRounds bounds max_rounds so accumulated inputs fit in int32.
	maxSessionRounds = 1000
	// defaultPrefixLength is BLIS's shared-prefix length when a group's first
	// client gives none.
	defaultPrefixLength = 50
	// gammaMaxCV is where BLIS silently swaps gamma for Poisson (shape < 0.01);
	// larger values are rejected instead.
	gammaMaxCV = 10.0
)

const (
	arrivalNames  = "poisson, gamma, weibull, constant"
	distTypeNames = "gaussian, exponential, pareto_lognormal, constant, empirical"
	categoryNames = `"", language, multimodal, reasoning`
)

// distParams lists each length distribution's parameters, all required
// (empirical takes token_count: probability pairs instead).
var distParams = map[string][]string{
	"gaussian":         {"mean", "std_dev", "min", "max"},
	"exponential":      {"mean"},
	"pareto_lognormal": {"alpha", "xm", "mu", "sigma", "mix_weight"},
	"constant":         {"value"},
	"empirical":        nil,
}

// Validate checks every field of the spec. The error names the spec, the
// field path and the allowed values.
func (s *Spec) Validate() error {
	v := validator{file: s.Name}
	switch s.Version {
	case "", "1", "2":
	default:
		return v.errf("version", "unknown value %q (allowed: 1, 2)", s.Version)
	}
	switch s.Category {
	case "", "language", "multimodal", "reasoning":
	default:
		return v.errf("category", "unknown value %q (allowed: %s)", s.Category, categoryNames)
	}
	if !(s.AggregateRate > 0) || math.IsInf(s.AggregateRate, 0) {
		return v.errf("aggregate_rate", "must be a finite number > 0 (requests per second), got %s", num(s.AggregateRate))
	}
	if s.NumRequests < 0 {
		return v.errf("num_requests", "must be >= 0 (0 = bounded by horizon), got %d", s.NumRequests)
	}
	if s.Horizon < 0 {
		return v.errf("horizon", "must be >= 0 µs (0 = unlimited), got %d", s.Horizon)
	}
	if len(s.Clients) == 0 {
		return v.errf("clients", "at least one client is required")
	}
	groups := map[string]prefixOwner{}
	for i := range s.Clients {
		if err := v.client(s, i, groups); err != nil {
			return err
		}
	}
	return v.validateTargets(s)
}

// prefixOwner records which client fixed a prefix group's length.
type prefixOwner struct {
	client, length int
}

type validator struct{ file string }

func (v validator) errf(path, format string, args ...any) error {
	return errtext.New(v.file, path, format, args...)
}

func num(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func (v validator) client(s *Spec, i int, groups map[string]prefixOwner) error {
	c := &s.Clients[i]
	p := fmt.Sprintf("clients[%d]", i)
	if err := v.sloClass(s.Version, p+".slo_class", c.SLOClass); err != nil {
		return err
	}
	if !(c.RateFraction > 0) || math.IsInf(c.RateFraction, 0) {
		return v.errf(p+".rate_fraction", "must be a finite number > 0, got %s", num(c.RateFraction))
	}
	if err := v.arrival(p+".arrival", &c.Arrival); err != nil {
		return err
	}
	if err := v.distribution(p+".input_distribution", &c.Input, 1); err != nil {
		return err
	}
	if err := v.distribution(p+".output_distribution", &c.Output, 1); err != nil {
		return err
	}
	if err := v.prefix(p, i, c, groups); err != nil {
		return err
	}
	if n := c.Network; n != nil {
		if !(n.RTTMs >= 0) || math.IsInf(n.RTTMs, 0) {
			return v.errf(p+".network.rtt_ms", "must be a finite number >= 0, got %s", num(n.RTTMs))
		}
		if !(n.BandwidthMbps >= 0) || math.IsInf(n.BandwidthMbps, 0) {
			return v.errf(p+".network.bandwidth_mbps", "must be a finite number >= 0, got %s", num(n.BandwidthMbps))
		}
	}
	if lc := c.Lifecycle; lc != nil {
		if len(lc.Windows) == 0 {
			return v.errf(p+".lifecycle.windows", "at least one window is required")
		}
		for j, w := range lc.Windows {
			wp := fmt.Sprintf("%s.lifecycle.windows[%d]", p, j)
			if w.StartUs < 0 {
				return v.errf(wp+".start_us", "must be >= 0, got %d", w.StartUs)
			}
			if w.EndUs <= w.StartUs {
				return v.errf(wp+".end_us", "must be > start_us (%d), got %d", w.StartUs, w.EndUs)
			}
		}
	}
	return v.reasoning(p, c)
}

func (v validator) sloClass(version, path, name string) error {
	if version == "2" && (name == "realtime" || name == "interactive") {
		return v.errf(path, "unknown value %q (allowed: %s; v1 names need version 1)", name, simcore.SLOClassNames)
	}
	if _, err := simcore.ParseSLOClass(name); err != nil {
		return v.errf(path, "unknown value %q (allowed: %s)", name, simcore.SLOClassNames)
	}
	return nil
}

func (v validator) arrival(p string, a *Arrival) error {
	switch a.Process {
	case "":
		return v.errf(p+".process", "missing (allowed: %s)", arrivalNames)
	case "poisson", "constant":
		if a.CV != nil {
			return v.errf(p+".cv", "only used by gamma and weibull, not %s", a.Process)
		}
	case "gamma":
		if a.CV != nil && !(*a.CV > 0 && *a.CV <= gammaMaxCV) {
			return v.errf(p+".cv", "must be in (0, %g] for gamma, got %s", gammaMaxCV, num(*a.CV))
		}
	case "weibull":
		if a.CV != nil && !(*a.CV >= 0.01 && *a.CV <= 10.4) {
			return v.errf(p+".cv", "must be in [0.01, 10.4] for weibull, got %s", num(*a.CV))
		}
	default:
		return v.errf(p+".process", "unknown value %q (allowed: %s)", a.Process, arrivalNames)
	}
	return nil
}

// distribution checks a length distribution; minValue is the smallest value
// a bound may take (1 for token lengths, 0 for reason-ratio percentages).
func (v validator) distribution(p string, d *Distribution, minValue int) error {
	required, known := distParams[d.Type]
	switch {
	case d.Type == "":
		return v.errf(p+".type", "missing (allowed: %s)", distTypeNames)
	case !known:
		return v.errf(p+".type", "unknown value %q (allowed: %s)", d.Type, distTypeNames)
	case d.Type == "empirical":
		return v.empirical(p+".params", d.Params)
	}
	names := sortedKeys(d.Params)
	for _, name := range names {
		if !contains(required, name) {
			return v.errf(p+".params."+name, "not a parameter of %s (allowed: %s)", d.Type, strings.Join(required, ", "))
		}
		if x := d.Params[name]; math.IsNaN(x) || math.IsInf(x, 0) {
			return v.errf(p+".params."+name, "must be a finite number, got %s", num(x))
		}
	}
	for _, name := range required {
		if _, ok := d.Params[name]; !ok {
			return v.errf(p+".params", "missing %q (%s requires: %s)", name, d.Type, strings.Join(required, ", "))
		}
	}
	pp := d.Params
	switch d.Type {
	case "gaussian":
		for _, bound := range []string{"min", "max"} {
			if err := v.tokenCount(p+".params."+bound, pp[bound], minValue); err != nil {
				return err
			}
		}
		if pp["min"] > pp["max"] {
			return v.errf(p+".params.min", "must be <= max (%s), got %s", num(pp["max"]), num(pp["min"]))
		}
		if pp["std_dev"] < 0 {
			return v.errf(p+".params.std_dev", "must be >= 0, got %s", num(pp["std_dev"]))
		}
	case "exponential":
		if !(pp["mean"] > 0 && pp["mean"] <= maxTokenCount) {
			return v.errf(p+".params.mean", "must be in (0, %d], got %s", maxTokenCount, num(pp["mean"]))
		}
	case "pareto_lognormal":
		if !(pp["alpha"] > 0) {
			return v.errf(p+".params.alpha", "must be > 0, got %s", num(pp["alpha"]))
		}
		if !(pp["xm"] > 0) {
			return v.errf(p+".params.xm", "must be > 0, got %s", num(pp["xm"]))
		}
		if pp["sigma"] < 0 {
			return v.errf(p+".params.sigma", "must be >= 0, got %s", num(pp["sigma"]))
		}
		if w := pp["mix_weight"]; w < 0 || w > 1 {
			return v.errf(p+".params.mix_weight", "must be in [0, 1], got %s", num(w))
		}
	case "constant":
		return v.tokenCount(p+".params.value", pp["value"], minValue)
	}
	return nil
}

// tokenCount checks a user-given length: a whole number in range (BLIS
// would silently truncate a fractional one).
func (v validator) tokenCount(path string, x float64, minValue int) error {
	if x != math.Trunc(x) || x < float64(minValue) || x > maxTokenCount {
		return v.errf(path, "must be a whole number in [%d, %d], got %s", minValue, maxTokenCount, num(x))
	}
	return nil
}

func (v validator) empirical(p string, params map[string]float64) error {
	if len(params) == 0 {
		return v.errf(p, "empirical needs token_count: probability pairs")
	}
	seen := map[int]string{}
	total := 0.0
	for _, key := range sortedKeys(params) {
		n, err := strconv.Atoi(strings.TrimSpace(key))
		if err != nil || n < 1 || n > maxTokenCount {
			return v.errf(p+"."+key, "token count must be a whole number in [1, %d]", maxTokenCount)
		}
		if other, dup := seen[n]; dup {
			return v.errf(p+"."+key, "same token count as key %q", other)
		}
		seen[n] = key
		prob := params[key]
		if !(prob >= 0) || math.IsInf(prob, 0) {
			return v.errf(p+"."+key, "probability must be a finite number >= 0, got %s", num(prob))
		}
		total += prob
	}
	if !(total > 0) || math.IsInf(total, 0) {
		return v.errf(p, "probabilities must have a finite positive sum, got %s", num(total))
	}
	return nil
}

func (v validator) prefix(p string, i int, c *Client, groups map[string]prefixOwner) error {
	if c.PrefixLength != nil {
		if c.PrefixGroup == "" {
			return v.errf(p+".prefix_length", "needs a prefix_group")
		}
		if n := *c.PrefixLength; n < 1 || n > maxTokenCount {
			return v.errf(p+".prefix_length", "must be in [1, %d], got %d", maxTokenCount, n)
		}
	}
	if c.PrefixGroup == "" {
		return nil
	}
	owner, seen := groups[c.PrefixGroup]
	if !seen {
		length := defaultPrefixLength
		if c.PrefixLength != nil {
			length = *c.PrefixLength
		}
		groups[c.PrefixGroup] = prefixOwner{client: i, length: length}
		return nil
	}
	// BLIS silently keeps the first client's length; a different one is a
	// mistake worth reporting.
	if c.PrefixLength != nil && *c.PrefixLength != owner.length {
		return v.errf(p+".prefix_length", "%d conflicts with the length %d that clients[%d] gives prefix_group %q",
			*c.PrefixLength, owner.length, owner.client, c.PrefixGroup)
	}
	return nil
}

func (v validator) reasoning(p string, c *Client) error {
	mt := c.multiTurn()
	if c.ClosedLoop != nil && mt == nil {
		return v.errf(p+".closed_loop", "only applies to multi-turn clients (reasoning.multi_turn)")
	}
	if c.Reasoning == nil {
		return nil
	}
	rp := p + ".reasoning"
	if rr := &c.Reasoning.ReasonRatio; rr.Type != "" || len(rr.Params) > 0 {
		if err := v.distribution(rp+".reason_ratio_distribution", rr, 0); err != nil {
			return err
		}
	}
	if mt == nil {
		return nil
	}
	mp := rp + ".multi_turn"
	if mt.MaxRounds < 1 || mt.MaxRounds > maxSessionRounds {
		return v.errf(mp+".max_rounds", "must be in [1, %d], got %d", maxSessionRounds, mt.MaxRounds)
	}
	if mt.ThinkTimeUs < 0 {
		return v.errf(mp+".think_time_us", "must be >= 0, got %d", mt.ThinkTimeUs)
	}
	switch mt.ContextGrowth {
	case "", "accumulate":
	default:
		return v.errf(mp+".context_growth", "unknown value %q (allowed: accumulate, or omit it)", mt.ContextGrowth)
	}
	if c.ClosedLoop != nil && mt.ClosedLoop != nil {
		return v.errf(p+".closed_loop", "also given as reasoning.multi_turn.closed_loop; give it once")
	}
	return nil
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
