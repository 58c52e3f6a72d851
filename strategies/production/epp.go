package production

import (
	"slices"
	"strings"

	"optimize/strategies/settings"
)

// The llm-d Router's EndpointPickerConfig, written from a configuration
// (WriteEPPConfig) and read onto one (ApplyEPPConfig, eppimport.go); both
// go through the production column: a setting whose counterpart is an
// llm-d plugin's weight, parameter or type is where it is written and
// what it is read into.

// EPPAPIVersions are the apiVersions an EndpointPickerConfig may carry:
// llm-d's, and the Gateway API Inference Extension's it started from.
// The first is the one written.
var EPPAPIVersions = []string{"llm-d.ai/v1alpha1", "inference.networking.x-k8s.io/v1alpha1"}

// EPPKind is the config's kind.
const EPPKind = "EndpointPickerConfig"

// eppNoOps are plugin types an EndpointPickerConfig may hold that change
// nothing the simulator computes, and why.
var eppNoOps = []struct{ typ, why string }{
	{singleProfileHandler, "the simulator runs one scheduling profile"},
	{settings.PDDecodeFilter, "with no prefill/decode pools every endpoint decodes; with them the profile routes among the decode pool"},
	{metricsSource, "the simulator reads the instances' metrics itself"},
	{metricsExtractor, "the simulator reads the instances' metrics itself"},
	{notificationSource, "the simulator's instances report their KV events themselves"},
	{tokenProducer, "the simulator's requests carry their token counts and blocks"},
	// Its parameters are settings (routing.prefix-cache-scorer.*); with it
	// a request can be a hit, so a profile of no-hit-lru-scorer alone is
	// round-robin only when it hashes nothing.
	{settings.ApproxPrefixProducer, "prefix-cache-scorer's and no-hit-lru-scorer's approximate prefix index is the simulator's own"},
	{preciseProducer, "the KV-event index precise-prefix-cache-scorer reads is the simulator's own"},
	{inflightLoadProducer, "the simulator counts each endpoint's requests and tokens in flight itself"},
	{topologyTypes[0], topologyWhy},
	{topologyTypes[1], topologyWhy},
	{topologyTypes[2], topologyWhy},
}

// eppUnmodelled are llm-d plugin types the simulator does not model, each
// with why: an import stops at the first with that one line.
var eppUnmodelled = []struct{ types, why string }{
	{"encode-filter always-disagg-multimodal-decider",
		"encode disaggregation (multimodal encoders on their own pods) is not modelled: the simulator serves text"},
	{"mm-embeddings-cache-producer mm-embeddings-cache-scorer",
		"multimodal embedding caches are not modelled: the simulator serves text"},
	{"data-parallel-profile-handler",
		"routing to vLLM's data-parallel ranks behind one pod is not modelled: a simulated instance is one engine"},
	{"burst-prefix-cache-producer",
		"burst co-location (grouping requests that arrive within a window) is not modelled"},
	{"dcgm-data-source dcgm-extractor endpoint-attribute-filter endpoint-attribute-scorer",
		"scoring by GPU attributes scraped from NVIDIA DCGM is not modelled: the simulated GPU reports no utilisation"},
	{"program-aware-fairness",
		"flow control's fairness between programs is not modelled (the simulator's flow control has global-strict and round-robin between tenants)"},
	{"soft-reflective-ceiling-policy",
		"flow control's adaptive usage-limit policies are not modelled (the simulator's is a static threshold, flow_control.usage_limit_threshold)"},
}

// unmodelledWhy is why plugin type typ is not modelled, if it is listed.
func unmodelledWhy(typ string) (string, bool) {
	for _, u := range eppUnmodelled {
		if slices.Contains(strings.Fields(u.types), typ) {
			return u.why, true
		}
	}
	return "", false
}

// inflightLoadProducer is llm-d's producer of each endpoint's in-flight
// load (its UncachedRequestTokensDataKey among others).
const inflightLoadProducer = "inflight-load-producer"

// eppProducers are the data producers a scorer consumes that llm-d's
// loader does not add by itself: at llm-d-router ebab68792 it refuses a
// config with token-load-scorer and no inflight-load-producer ("no
// default producer found for missing data key
// UncachedRequestTokensDataKey/inflight-load-producer"), so the export
// writes it beside the scorer.
var eppProducers = []struct{ scorer, producer string }{
	{"token-load-scorer", inflightLoadProducer},
}

// utilizationDetector is the flow-control saturation detector; its queue
// is not simulated, so it is accepted only with thresholds no endpoint
// reaches (as llm-d's sample configs give it to leave admission to an
// admitter): a waiting queue of neverQueueDepth, KV utilisation 1.
const (
	utilizationDetector = "utilization-detector"
	neverQueueDepth     = 1e6
)

// eppProfile is what a configuration's routing and admission become in
// llm-d: the profile's scorers with their weights, the picker, and the
// plugins outside the profile (the admitter).
type eppProfile struct {
	scorers []eppWeighted
	picker  string
	admit   string
	decider string // the P/D decider plugin, "" none
	note    string // why the profile is not the configuration's routing, if it is not
}

type eppWeighted struct {
	typ    string
	weight string
}

// eppOf reads the profile from the carried settings.
func eppOf(carried []Carried) eppProfile {
	p := eppProfile{picker: settings.DefaultPicker}
	var weights []eppWeighted
	single := ""
	for _, c := range carried {
		if c.System != settings.SystemLLMD {
			continue
		}
		switch c.Param {
		case settings.ParamProfile:
			single = c.Production
			if c.Fidelity == settings.NoCounterpart {
				p.note = c.Setting.Key + " " + c.Value + " has no llm-d counterpart: " + c.Note
			}
		case settings.ParamWeight:
			if c.Production != "" && c.Fidelity != settings.NoCounterpart {
				weights = append(weights, eppWeighted{c.Name, c.Production})
			}
		case settings.ParamType:
			switch c.Name {
			case "picker":
				if c.Production != "" {
					p.picker = c.Production
				}
			case "admitter":
				p.admit = c.Production
			case settings.PDDeciderRole:
				p.decider = c.Production
			}
		}
	}
	if single != "" {
		p.scorers = []eppWeighted{{single, "1"}}
		return p
	}
	p.scorers = weights
	if len(weights) == 0 && p.note == "" {
		p.note = "no scorer of the weighted profile has an llm-d plugin: the profile holds the picker alone"
	}
	return p
}

// llmdCounterparts are the settings whose counterpart is in llm-d, in table
// order.
func llmdCounterparts() []*settings.Setting {
	var out []*settings.Setting
	for _, s := range settings.All() {
		if s.Production.System == settings.SystemLLMD {
			out = append(out, s)
		}
	}
	return out
}

// roleSetting is the ParamType setting of a role ("picker", "admitter"),
// if the table has one.
func roleSetting(role string) (*settings.Setting, bool) {
	for _, s := range llmdCounterparts() {
		if s.Production.Param == settings.ParamType && s.Production.Name == role {
			return s, true
		}
	}
	return nil, false
}

// roleTypes are the plugin types a role's setting can be given.
func roleTypes(role string) []string {
	var out []string
	if role == "picker" {
		out = append(out, settings.DefaultPicker)
	}
	if s, ok := roleSetting(role); ok {
		for _, v := range s.Production.Values {
			if v.Production != "" && !slices.Contains(out, v.Production) {
				out = append(out, v.Production)
			}
		}
	}
	return out
}

// weightSetting is the setting that is plugin typ's weight in the
// profile: of the scorers whose weight is typ's, the one that computes
// exactly what typ does, the llm-d scorer of that name first (a BLIS
// scorer of the same arithmetic, or one approximated by typ, exports as
// typ and imports as the llm-d scorer).
func weightSetting(typ string) (*settings.Setting, bool) {
	var best *settings.Setting
	rank := func(s *settings.Setting) int {
		switch {
		case s.Production.Fidelity == settings.Exact && s.Item == typ:
			return 3
		case s.Production.Fidelity == settings.Exact:
			return 2
		}
		return 1
	}
	for _, s := range llmdCounterparts() {
		if s.Production.Param == settings.ParamWeight && s.Production.Name == typ && (best == nil || rank(s) > rank(best)) {
			best = s
		}
	}
	return best, best != nil
}

// paramSettings are plugin typ's parameters the table models.
func paramSettings(typ string) []*settings.Setting {
	var out []*settings.Setting
	for _, s := range llmdCounterparts() {
		if s.Production.Name == typ && !slices.Contains([]string{settings.ParamWeight, settings.ParamType, settings.ParamProfile}, s.Production.Param) {
			out = append(out, s)
		}
	}
	return out
}

// EPPPluginTypes lists every plugin type --epp-config accepts, sorted.
func EPPPluginTypes() []string {
	var out []string
	add := func(t string) {
		if t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	for _, s := range llmdCounterparts() {
		switch s.Production.Param {
		case settings.ParamWeight:
			add(s.Production.Name)
		case settings.ParamType, settings.ParamProfile:
			for _, v := range s.Production.Values {
				if v.Fidelity == settings.Exact || s.Production.Param == settings.ParamType {
					add(v.Production)
				}
			}
		}
	}
	add(settings.DefaultPicker)
	for _, n := range eppNoOps {
		add(n.typ)
	}
	add(utilizationDetector)
	for _, t := range flowPluginTypes() {
		add(t)
	}
	add(settings.PDPrefillFilter)
	for _, h := range pdHandlerTypes {
		add(h)
	}
	slices.Sort(out)
	return out
}
