package production

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"optimize/simcore/cluster"
	"optimize/simcore/keys"
	"optimize/strategies/settings"
)

// Reading llm-d's P/D profiles: the profile handler names the decode and
// prefill profiles and the decider; the decode profile's picker and
// scorers are the routing (the simulator's pools share one routing
// policy, so the prefill profile must weigh the same scorers); the
// decider is pd.decider and its threshold pd.prefix_threshold_tokens.
// The pools' sizes are not in an EndpointPickerConfig: they are the
// world's (pd.prefill_instances, pd.decode_instances), DefaultPools.

// pdHandler is what the import read from a P/D profile handler.
type pdHandler struct {
	plugin           *eppDocPlugin
	decode, prefill  string // profile names
	decider          string // the decider plugin's name, "" none
	deciderDefaulted bool   // pd-profile-handler's default decider name
}

// pdHandlerTypes are the P/D profile handler's types: llm-d's and its
// deprecated name.
var pdHandlerTypes = []string{settings.PDProfileHandler, settings.PDLegacyProfileHandler}

// pdHandlerParams are the handler parameters the import reads, both
// forms (nested, and the deprecated flat one), and pd-profile-handler's
// deprecated ones that change nothing.
var pdHandlerParams = []string{"stageOrder", "profiles", "deciders", "decodeProfile", "prefillProfile", "deciderPluginName", "prefillDeciderPluginName", "prefixPluginType", "prefixPluginName", "primaryPort", "prefixMatchInfoProducerName"}

// handler finds the P/D profile handler, if any, and reads its
// parameters.
func (im *eppImport) handler() (*pdHandler, error) {
	var h *pdHandler
	for _, name := range im.order {
		p := im.byName[name]
		if !slices.Contains(pdHandlerTypes, p.Type) {
			continue
		}
		if h != nil {
			return nil, im.fail("plugin %s: a second P/D profile handler (%s is one)", name, nameOf(h.plugin))
		}
		h = &pdHandler{plugin: p, decode: decodeProfile, prefill: prefillProfile}
		for _, k := range slices.Sorted(maps.Keys(p.Parameters)) {
			if !slices.Contains(pdHandlerParams, k) {
				return nil, im.fail("plugin %s: parameter %s is not modelled (modelled: %s)", name, k, strings.Join(pdHandlerParams, ", "))
			}
		}
		str := func(v any) string { s, _ := v.(string); return s }
		sub := func(k string) map[string]any { m, _ := p.Parameters[k].(map[string]any); return m }
		if o := str(p.Parameters["stageOrder"]); o != "" && !slices.Contains([]string{"decode-first", "decode", "decodeFirst"}, o) {
			return nil, im.fail("plugin %s: stageOrder %s: the simulator picks the decode instance first (BLIS f90a1e3a), llm-d's decode-first", name, o)
		}
		if n, ok := numberParam(p.Parameters["primaryPort"]); ok && n != 0 {
			return nil, im.fail("plugin %s: primaryPort %v: routing to vLLM's data-parallel ranks behind one pod is not modelled", name, n)
		}
		for _, k := range slices.Sorted(maps.Keys(sub("profiles"))) {
			v := sub("profiles")[k]
			switch k {
			case "decode":
				h.decode = str(v)
			case "prefill":
				h.prefill = str(v)
			default:
				return nil, im.fail("plugin %s: profiles.%s: encode disaggregation (multimodal encoders on their own pods) is not modelled: the simulator serves text", name, k)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(sub("deciders"))) {
			v := sub("deciders")[k]
			if k != "prefill" {
				return nil, im.fail("plugin %s: deciders.%s: encode disaggregation (multimodal encoders on their own pods) is not modelled: the simulator serves text", name, k)
			}
			h.decider = str(v)
		}
		if v := str(p.Parameters["decodeProfile"]); v != "" {
			h.decode = v
		}
		if v := str(p.Parameters["prefillProfile"]); v != "" {
			h.prefill = v
		}
		for _, k := range []string{"deciderPluginName", "prefillDeciderPluginName"} {
			if v := str(p.Parameters[k]); v != "" && h.decider == "" {
				h.decider = v
			}
		}
		if h.decider == "" && p.Type == settings.PDLegacyProfileHandler {
			// pd-profile-handler's decider defaults to the plugin of
			// prefix-based-pd-decider's name.
			h.decider, h.deciderDefaulted = settings.PDPrefixDecider, true
		}
	}
	return h, nil
}

// pdProfiles picks, from a P/D config's profiles, the refs the routing
// reads: the decode profile's, without its filters; the prefill profile
// must weigh the same scorers with the same picker.
func (im *eppImport) pdProfiles(doc *eppDoc, h *pdHandler) ([]eppRef, error) {
	var decode, prefill []eppRef
	haveDecode, havePrefill := false, false
	for i, sp := range doc.SchedulingProfiles {
		refs, err := im.profileRefs(doc, i)
		if err != nil {
			return nil, err
		}
		if err := im.topologyScores(i, refs); err != nil {
			return nil, err
		}
		switch sp.Name {
		case h.decode:
			decode, haveDecode = pdRouting(refs), true
		case h.prefill:
			prefill, havePrefill = pdRouting(refs), true
		default:
			return nil, im.fail("schedulingProfiles[%d]: profile %s is neither the P/D handler's decode profile (%s) nor its prefill one (%s)", i, sp.Name, h.decode, h.prefill)
		}
	}
	if !haveDecode {
		return nil, im.fail("plugin %s: no scheduling profile %s, the decode profile it runs first", nameOf(h.plugin), h.decode)
	}
	if havePrefill && !slices.EqualFunc(decode, prefill, func(a, b eppRef) bool { return a.plugin == b.plugin && a.weight == b.weight }) {
		return nil, im.fail("profiles %s and %s weigh different plugins (%s; %s): the simulator's prefill and decode pools route with one profile", h.prefill, h.decode, refsText(prefill), refsText(decode))
	}
	if !havePrefill {
		h.decider = "" // nothing to split to
	}
	return decode, nil
}

// pdRouting drops a P/D profile's filters and the topology plugins (no
// simulated instance is nearer than another) from its refs.
func pdRouting(refs []eppRef) []eppRef {
	return slices.DeleteFunc(slices.Clone(refs), func(r eppRef) bool {
		return r.plugin.Type == settings.PDPrefillFilter || r.plugin.Type == settings.PDDecodeFilter || slices.Contains(topologyTypes, r.plugin.Type)
	})
}

func refsText(refs []eppRef) string {
	var out []string
	for _, r := range refs {
		out = append(out, fmt.Sprintf("%s:%v", nameOf(r.plugin), r.weight))
	}
	return strings.Join(out, ",")
}

// pdDecider sets pd.decider, and the threshold, from the handler's
// decider plugin.
func (im *eppImport) pdDecider(h *pdHandler) error {
	decider := mustSetting(keys.PDDecider)
	where := "plugin " + nameOf(h.plugin)
	if h.decider == "" {
		return im.set(decider, cluster.PDNever, where+", no prefill decider")
	}
	p, ok := im.byName[h.decider]
	if !ok {
		if h.deciderDefaulted {
			return im.fail("plugin %s: its decider, %s by default, names no plugin of plugins", nameOf(h.plugin), h.decider)
		}
		return im.fail("plugin %s: decider %s names no plugin of plugins", nameOf(h.plugin), h.decider)
	}
	if p.Type == settings.PDPrefixDecider {
		if n, ok := numberParam(p.Parameters[settings.PDNonCachedTokens]); !ok || n == 0 {
			im.res.Notes = append(im.res.Notes, fmt.Sprintf("%s: plugin %s: nonCachedTokens 0 (or not given) turns llm-d's decider off: no request is split (pd.decider=%s)", im.file, nameOf(p), cluster.PDNever))
			return im.set(decider, cluster.PDNever, where+", decider "+nameOf(p)+" off")
		}
	}
	if err := im.set(decider, p.Type, where+", decider "+nameOf(p)); err != nil {
		return err
	}
	return im.params(p)
}

// DefaultPools sizes the P/D pools an imported EndpointPickerConfig
// disaggregates over when nothing else did: the first half of the
// instances (rounded down) prefill, the rest decode. It returns the note
// that says so, "" when the pools were given.
func DefaultPools(c *cluster.Config) (string, error) {
	if c.PD.Enabled() {
		return "", nil
	}
	n := c.NumInstances
	if n < 2 {
		return "", fmt.Errorf("P/D profiles need a prefill and a decode pool: give --num-instances ≥ 2, or --prefill-instances and --decode-instances (%s=%d)", keys.NumInstances, n)
	}
	c.PD.Prefill, c.PD.Decode = n/2, n-n/2
	return fmt.Sprintf("an EndpointPickerConfig does not size the P/D pools (--prefill-instances, --decode-instances give them): the first half of the %d instances prefill, the rest decode (pd.prefill_instances=%d, pd.decode_instances=%d)", n, c.PD.Prefill, c.PD.Decode), nil
}

// weightedRandomPicker is llm-d's picker that draws an endpoint with
// probability proportional to its weighted score (route.PickerNames).
const weightedRandomPicker = "weighted-random-picker"

// topologyScores refuses a topology-affinity-scorer in a profile a
// weighted-random-picker picks from: the same score added to every
// endpoint changes the draw's odds, which taking it as changing nothing
// would hide.
func (im *eppImport) topologyScores(i int, refs []eppRef) error {
	scorer := slices.IndexFunc(refs, func(r eppRef) bool { return r.plugin.Type == topologyTypes[2] && r.weight != 0 })
	if scorer < 0 {
		return nil
	}
	for _, name := range im.order {
		if im.byName[name].Type == weightedRandomPicker {
			return im.fail("schedulingProfiles[%d]: %s with a %s: its score, the same for every simulated endpoint, changes the picker's odds, which is not modelled", i, nameOf(refs[scorer].plugin), weightedRandomPicker)
		}
	}
	return nil
}
