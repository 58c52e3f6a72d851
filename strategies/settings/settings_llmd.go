package settings

import (
	"fmt"

	"optimize/search"
	"optimize/simcore/cluster"
	"optimize/simcore/keys"
	"optimize/simcore/route"
)

// The llm-d Router's routing settings: the picker, the production
// counterpart of every scorer weight, and the llm-d scorers' parameters,
// keyed routing.<plugin type>.<llm-d's JSON parameter in snake case> with
// llm-d's defaults (llm-d-router ebab68792, 2026-08-21; simcore/route/llmd.go).

// ApproxPrefixProducer is the llm-d plugin that owns the approximate prefix
// index's parameters; prefix-cache-scorer reads what it produces.
const ApproxPrefixProducer = "approx-prefix-cache-producer"

// scorerCounterparts is, for each scorer with no llm-d plugin of exactly
// its arithmetic (route.LLMDPluginType is ""), the nearest llm-d plugin and
// how it differs, or, with no Name, what would have to be built.
var scorerCounterparts = map[string]Counterpart{
	"kv-pressure": {Fidelity: NoCounterpart, Note: "needs an llm-d scorer reading each vLLM instance's pending CPU→GPU KV reload time and " +
		"offload thrashing rate, signals vLLM does not export as metrics"},
	"kv-pressure-slo": {Fidelity: NoCounterpart, Note: "needs what kv-pressure needs, plus the reload penalty scaled by the request's " +
		"InferenceObjective priority class"},
	"load-balance": {System: SystemLLMD, Name: "active-request-scorer", Param: "weight", Fidelity: Approximate,
		Note: "load-balance is 1/(1 + waiting + running + in-flight), absolute; active-request-scorer is (max − in-flight)/max over " +
			"the EPP's in-flight requests only, relative to the busiest instance"},
	"prefix-affinity": {System: SystemLLMD, Name: "prefix-cache-scorer", Param: "weight", Fidelity: Approximate,
		Note: "BLIS's index hashes kv.block_size-token blocks, full blocks only, scores each instance's own leading run and keeps " +
			"routing.prefix_index_capacity blocks per instance; llm-d's hashes blocks of at least 64 tokens including the partial " +
			"last one, counts an instance's blocks up to the first block no instance holds, and keeps the instance's GPU block count"},
	"queue-depth": {System: SystemLLMD, Name: "queue-scorer", Param: "weight", Fidelity: Approximate,
		Note: "queue-depth min-max normalises waiting + running + in-flight requests (BLIS's effective load); queue-scorer the " +
			"waiting queue only"},
	"slo-priority": {Fidelity: NoCounterpart, Note: "needs an llm-d scorer that blends the prefix-cache and queue scores by the " +
		"request's InferenceObjective priority class (routing.slo_priority_blend per class)"},
	"token-load": {System: SystemLLMD, Name: "token-load-scorer", Param: "weight", Fidelity: Approximate,
		Note: "token-load counts the real input + output tokens in flight (threshold routing.token_load.threshold_tokens, default " +
			"131,072); token-load-scorer counts input + 1.5 × input as estimated output, adds the request's own uncached tokens, " +
			"and defaults to 4,194,304"},
}

// scorerWeightCounterpart is the production counterpart of a scorer's
// weight: exact for a scorer computed as an llm-d plugin computes it.
func scorerWeightCounterpart(name string) Counterpart {
	if t := route.LLMDPluginType(name); t != "" {
		return Counterpart{System: SystemLLMD, Name: t, Param: "weight", Fidelity: Exact}
	}
	c, ok := scorerCounterparts[name]
	if !ok {
		panic(fmt.Sprintf("settings table: scorer %s has neither an llm-d plugin type nor an entry in scorerCounterparts", name))
	}
	return c
}

// llmdSettings declares routing.picker and the llm-d scorers' parameters;
// weighted is the rule of the weighted policy and scorer(name) the rule
// "weighted and name's weight > 0".
func llmdSettings(weighted Rule, scorer func(names ...string) Rule) []*Setting {
	var out []*Setting
	add := func(s *Setting) *Setting {
		out = append(out, s)
		return s
	}
	add(choiceField(keys.RoutingPicker, "routing-picker", route.PickerNames(),
		"how the weighted policy picks from the scores: blis (BLIS: weights normalised to sum 1, argmax, ties at random), "+
			"or llm-d's max-score-picker (raw weighted sum, argmax, ties at random), random-picker (uniform, scores ignored) or "+
			"weighted-random-picker (probability proportional to the weighted sum)", CompRouting,
		func(c *cluster.Config) *string { return &c.Routing.Picker }).when(weighted).
		production(pickerCounterpart()))

	param := func(scorerType, jsonName string, s *Setting) *Setting {
		return add(s.production(Counterpart{System: SystemLLMD, Name: scorerType, Param: jsonName, Fidelity: Exact}))
	}
	prefix := func(c *cluster.Config) *route.LLMDPrefixParams { return &c.Routing.LLMD.Prefix }
	const pcs = "prefix-cache-scorer"
	onPrefix := scorer(pcs)
	// The approximate prefix index (approx-prefix-cache-producer) serves
	// both scorers that read prefix matches; llm-d's loader adds it for
	// either when the config names none.
	onProducer := scorer(pcs, RoundRobinScorer)
	const producer = "approx-prefix-cache-producer (the prefix index prefix-cache-scorer and no-hit-lru-scorer read): "
	autoTune := param(ApproxPrefixProducer, "autoTune", optBool("routing.prefix-cache-scorer.auto_tune", "prefix-cache-scorer-auto-tune",
		producer+"take the hashed block size (at least 64) and each instance's index capacity from the instances' "+
			"kv.block_size and kv.total_blocks, as llm-d's autoTune does", true,
		func(c *cluster.Config) **bool { return &prefix(c).AutoTune })).when(onProducer)
	manual := allOf(onProducer, oneOf(autoTune, "false"))
	param(ApproxPrefixProducer, "blockSizeTokens", intField("routing.prefix-cache-scorer.block_size_tokens", "prefix-cache-scorer-block-size-tokens",
		1, maxInt32, "tokens", producer+"tokens per hashed block without auto-tuning; llm-d raises it to at least 64", CompRouting,
		func(c *cluster.Config) *int { return &prefix(c).BlockSizeTokens }).zeroMeans(route.DefaultLLMDPrefixBlockSizeTokens).when(manual))
	param(ApproxPrefixProducer, "lruCapacityPerServer", intField("routing.prefix-cache-scorer.lru_capacity_per_server", "prefix-cache-scorer-lru-capacity-per-server",
		1, maxInt32, "blocks", producer+"hashed blocks the index keeps per instance (LRU) without auto-tuning", CompRouting,
		func(c *cluster.Config) *int { return &prefix(c).LRUCapacityPerServer }).zeroMeans(route.DefaultLLMDLRUCapacityPerServer).when(manual))
	maxTokens := param(ApproxPrefixProducer, "maxPrefixTokensToMatch", optInt("routing.prefix-cache-scorer.max_prefix_tokens_to_match",
		"prefix-cache-scorer-max-prefix-tokens-to-match", 0, maxInt32, "tokens",
		producer+"prompt tokens hashed and matched per request, in whole blocks, so a cap below the block size (1-63 at the 64-token floor) hashes nothing and no request is ever a hit (0 = use max_prefix_blocks_to_match)",
		route.DefaultLLMDMaxPrefixTokensToMatch, func(c *cluster.Config) **int { return &prefix(c).MaxPrefixTokensToMatch })).when(onProducer)
	param(ApproxPrefixProducer, "maxPrefixBlocksToMatch", optInt("routing.prefix-cache-scorer.max_prefix_blocks_to_match",
		"prefix-cache-scorer-max-prefix-blocks-to-match", 0, maxInt32, "blocks",
		producer+"blocks hashed and matched per request when max_prefix_tokens_to_match is 0 (0 = the whole prompt)",
		route.DefaultLLMDMaxPrefixBlocksToMatch, func(c *cluster.Config) **int { return &prefix(c).MaxPrefixBlocksToMatch })).
		when(allOf(onProducer, isZero(maxTokens)))
	lengthWeight := param(pcs, "matchLengthWeight", floatField(keys.PrefixMatchLengthWeight, "prefix-cache-scorer-match-length-weight",
		0, 1, "fraction", "prefix-cache-scorer: share of the score given to the matched length (min(1, matched tokens / scale)²) "+
			"rather than the matched fraction of the prompt", CompRouting, 0,
		func(c *cluster.Config) *float64 { return &prefix(c).MatchLengthWeight })).when(onPrefix)
	param(pcs, "matchLengthScaleTokens", intField("routing.prefix-cache-scorer.match_length_scale_tokens", "prefix-cache-scorer-match-length-scale-tokens",
		1, maxInt32, "tokens", "prefix-cache-scorer: matched length that scores fully", CompRouting,
		func(c *cluster.Config) *int { return &prefix(c).MatchLengthScaleTokens }).zeroMeans(route.DefaultLLMDMatchLengthScaleTokens).
		when(allOf(onPrefix, positive(lengthWeight))))

	const ars = "active-request-scorer"
	param(ars, "idleThreshold", intField("routing.active-request-scorer.idle_threshold", "active-request-scorer-idle-threshold",
		0, maxInt32, "requests", "active-request-scorer: in-flight requests at or below which an instance scores 1", CompRouting,
		func(c *cluster.Config) *int { return &c.Routing.LLMD.ActiveIdleThreshold }).when(scorer(ars)))
	param(ars, "maxBusyScore", optFloat("routing.active-request-scorer.max_busy_score", "active-request-scorer-max-busy-score",
		0, 1, "", "active-request-scorer: score of a busy instance with the fewest in-flight requests ((max − n)/max × this)", 1,
		func(c *cluster.Config) **float64 { return &c.Routing.LLMD.ActiveMaxBusyScore })).when(scorer(ars))
	param("load-aware-scorer", "threshold", intField("routing.load-aware-scorer.threshold", "load-aware-scorer-threshold",
		1, maxInt32, "requests", "load-aware-scorer: waiting requests at which an instance scores 0 (an empty queue scores 0.5)", CompRouting,
		func(c *cluster.Config) *int { return &c.Routing.LLMD.LoadAwareThreshold }).zeroMeans(route.DefaultLoadAwareThreshold).
		when(scorer("load-aware-scorer")))
	param("no-hit-lru-scorer", "lruSize", intField("routing.no-hit-lru-scorer.lru_size", "no-hit-lru-scorer-lru-size",
		1, maxInt32, "instances", "no-hit-lru-scorer: instances its LRU of cold-request targets remembers", CompRouting,
		func(c *cluster.Config) *int { return &c.Routing.LLMD.NoHitLRUSize }).zeroMeans(route.DefaultNoHitLRUSize).
		when(scorer("no-hit-lru-scorer")))
	return out
}

// pickerCounterpart is routing.picker's: the value is the picker
// plugin's type; blis, which has no llm-d picker, is exported as
// max-score-picker, whose argmax of the raw weighted sum picks the
// instance BLIS's argmax of the normalised sum does but for float
// rounding and the tie-break's random stream.
func pickerCounterpart() Counterpart {
	c := Counterpart{System: SystemLLMD, Name: "picker", Param: ParamType, Fidelity: Exact}
	for _, name := range route.PickerNames() {
		v := ValueCounterpart{Value: name, Production: name, Fidelity: Exact}
		if name == route.PickerNames()[0] {
			v.Production, v.Fidelity = DefaultPicker, Approximate
			v.Note = "BLIS's picker (weights normalised to sum 1, argmax, ties at random) has no llm-d plugin; max-score-picker takes the argmax of the raw weighted sum, the same instance but for float rounding and the tie-break's random stream"
		}
		c.Values = append(c.Values, v)
	}
	return c
}

// isZero holds while numeric setting s is 0.
func isZero(s *Setting) Rule {
	return Rule{
		Text:    s.Key + " is 0",
		subject: s.Key,
		holds: func(c *cluster.Config) bool {
			v, ok := s.get(c)
			return ok && v == 0
		},
		state: func(c *cluster.Config) string { return s.Key + " is " + orUnset(s.Value(c)) },
	}
}

// optInt, optFloat and optBool declare settings stored as pointers, nil
// meaning def: llm-d parameters whose 0 (or false) means something other
// than their default. set stores a fresh pointer, since bases are shared
// by trials.
func optInt(key, flag string, low, high float64, unit, doc string, def int, field func(*cluster.Config) **int) *Setting {
	return &Setting{Key: key, Flag: flag, Kind: search.Int, Low: low, High: high, Unit: unit, Doc: doc, Component: CompRouting,
		get: func(c *cluster.Config) (float64, bool) {
			if p := *field(c); p != nil {
				return float64(*p), true
			}
			return float64(def), true
		},
		set:  func(c *cluster.Config, v float64) { n := int(v); *field(c) = &n },
		copy: func(dst, src *cluster.Config) { *field(dst) = clonePtr(*field(src)) }}
}

func optFloat(key, flag string, low, high float64, unit, doc string, def float64, field func(*cluster.Config) **float64) *Setting {
	return &Setting{Key: key, Flag: flag, Kind: search.Float, Low: low, High: high, Unit: unit, Doc: doc, Component: CompRouting,
		get: func(c *cluster.Config) (float64, bool) {
			if p := *field(c); p != nil {
				return *p, true
			}
			return def, true
		},
		set:  func(c *cluster.Config, v float64) { *field(c) = &v },
		copy: func(dst, src *cluster.Config) { *field(dst) = clonePtr(*field(src)) }}
}

func optBool(key, flag, doc string, def bool, field func(*cluster.Config) **bool) *Setting {
	return &Setting{Key: key, Flag: flag, Kind: search.Categorical, Choices: []string{"false", "true"}, Doc: doc, Component: CompRouting,
		get: func(c *cluster.Config) (float64, bool) {
			v := def
			if p := *field(c); p != nil {
				v = *p
			}
			if v {
				return 1, true
			}
			return 0, true
		},
		set:  func(c *cluster.Config, v float64) { b := v == 1; *field(c) = &b },
		copy: func(dst, src *cluster.Config) { *field(dst) = clonePtr(*field(src)) }}
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
