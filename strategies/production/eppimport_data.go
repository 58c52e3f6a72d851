package production

import (
	"fmt"
	"maps"
	"optimize/simcore/keys"
	"optimize/simcore/sched"
	"optimize/strategies/settings"
	"slices"
	"strings"
)

// The parts of an EndpointPickerConfig around the profile: flow control
// and its feature gate, the data layer, and the prefix producers'
// parameters.

// flowControl reads the feature gate, the saturation detector and the
// priority bands. Without the gate a detector is accepted only with
// thresholds no endpoint reaches: llm-d's legacy admission would shed
// requests of priority < 0 at saturation, which the simulator does not.
// With it, the gateway queue flow control keeps is not simulated: its
// class order is approximated by the simulator's priority order, noted.
func (im *eppImport) flowControl(doc *eppDoc) error {
	gate := false
	for _, g := range doc.FeatureGates {
		if g != flowControlGate {
			return im.fail("featureGates: %s is not modelled (modelled: %s)", g, flowControlGate)
		}
		gate = true
	}
	for _, name := range im.order {
		p := im.byName[name]
		if p.Type != utilizationDetector {
			continue
		}
		for k, v := range p.Parameters {
			n, ok := numberParam(v)
			switch {
			case gate && (k == "queueDepthThreshold" || k == "kvCacheUtilThreshold") && ok:
			case k == "queueDepthThreshold" && ok && n >= neverQueueDepth, k == "kvCacheUtilThreshold" && ok && n >= 1:
			case k == "queueDepthThreshold" || k == "kvCacheUtilThreshold":
				return im.fail("plugin %s: %s %v: without flow control, llm-d's legacy admission sheds requests of priority < 0 once the pool saturates, which is not modelled; only thresholds no endpoint reaches are (queueDepthThreshold >= %g, kvCacheUtilThreshold >= 1)", name, k, v, neverQueueDepth)
			default:
				return im.fail("plugin %s: parameter %s is not modelled (modelled: queueDepthThreshold, kvCacheUtilThreshold)", name, k)
			}
		}
		if len(p.Parameters) < 2 && !gate {
			return im.fail("plugin %s: without flow control, llm-d's legacy admission sheds requests of priority < 0 once the pool saturates, which is not modelled; give queueDepthThreshold >= %g and kvCacheUtilThreshold >= 1 so that it never does", name, neverQueueDepth)
		}
	}
	fields := slices.Sorted(maps.Keys(doc.FlowControl))
	for _, k := range fields {
		v := doc.FlowControl[k]
		switch k {
		case "saturationDetector":
			m, _ := v.(map[string]any)
			ref, _ := m["pluginRef"].(string)
			if p, ok := im.byName[ref]; !ok || (p.Type != utilizationDetector && p.Type != concurrencyDetector) || len(m) != 1 {
				return im.fail("flowControl.saturationDetector: want pluginRef naming a %s or %s plugin defined in plugins", utilizationDetector, concurrencyDetector)
			}
		case "defaultPriorityBand", "maxRequests", "defaultRequestTTL", "usageLimitPolicyPluginRef":
			// read by gatewayQueue, once the llm-d settings are restored
		case "priorityBands":
			bands, _ := v.([]any)
			for i, b := range bands {
				m, _ := b.(map[string]any)
				queue := slices.ContainsFunc(gatewayQueueFields, func(k string) bool { _, ok := doc.FlowControl[k]; return ok })
				if _, ok := m["priority"].(int); !ok || (len(m) != 1 && !queue) {
					return im.fail("flowControl.priorityBands[%d]: want only an integer priority (the simulator's bands share one template: give capacity and policies in flowControl.defaultPriorityBand)", i)
				}
			}
		default:
			return im.fail("flowControl.%s is not modelled (modelled: saturationDetector, priorityBands, %s)", k, strings.Join(gatewayQueueFields, ", "))
		}
	}
	if gate && !slices.ContainsFunc(gatewayQueueFields, func(k string) bool { _, ok := doc.FlowControl[k]; return ok }) {
		// Flow control serves the InferenceObjectives' priorities as
		// bands, higher first: the simulator's class order, a fixed
		// priority per class (--objectives gives the priorities).
		if err := im.set(mustSetting(keys.Scheduler), sched.PriorityFCFS, "featureGates "+flowControlGate); err != nil {
			return err
		}
		return im.set(mustSetting(keys.PriorityPolicy), sched.ByClass, "featureGates "+flowControlGate)
	}
	return nil
}

// dataLayer checks that every source and extractor names a plugin of a
// type that feeds nothing the simulator does not compute itself.
func (im *eppImport) dataLayer(dl *eppDataLayer) error {
	if dl == nil {
		return nil
	}
	check := func(where, ref string) error {
		if _, ok := im.byName[ref]; !ok {
			return im.fail("dataLayer.%s: pluginRef %s names no plugin of plugins", where, ref)
		}
		return nil
	}
	for i, src := range dl.Sources {
		if err := check(fmt.Sprintf("sources[%d]", i), src.PluginRef); err != nil {
			return err
		}
		for j, ex := range src.Extractors {
			if err := check(fmt.Sprintf("sources[%d].extractors[%d]", i, j), ex.PluginRef); err != nil {
				return err
			}
		}
	}
	return nil
}

// producers reads the prefix producers' parameters: the approximate
// index's through the settings that model them (unless round-robin's
// producer, which is the policy itself); the precise producer's, which
// change nothing simulated but its block size.
func (im *eppImport) producers() error {
	approx := 0
	for _, name := range im.order {
		p := im.byName[name]
		switch p.Type {
		case settings.ApproxPrefixProducer:
			if approx++; approx > 1 {
				return im.fail("plugin %s: a second %s: the simulator keeps one approximate prefix index", name, p.Type)
			}
			if im.c.Routing.Policy == "round-robin" {
				continue
			}
			if err := im.params(p); err != nil {
				return err
			}
		case preciseProducer:
			if err := im.precise(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// preciseParams are the precise producer's parameters; only
// tokenProcessorConfig.blockSize changes what the simulator computes.
var preciseParams = []string{"tokenProcessorConfig", "kvEventsConfig", "indexerConfig", "speculativeIndexing", "speculativeTTL"}

func (im *eppImport) precise(p *eppDocPlugin) error {
	for _, k := range slices.Sorted(maps.Keys(p.Parameters)) {
		if !slices.Contains(preciseParams, k) {
			return im.fail("plugin %s: parameter %s is not modelled (modelled: %s)", nameOf(p), k, strings.Join(preciseParams, ", "))
		}
	}
	tpc, _ := p.Parameters["tokenProcessorConfig"].(map[string]any)
	for _, k := range []string{"blockSize", "blockSizeTokens"} {
		if n, ok := numberParam(tpc[k]); ok && int64(n) != engineBlockSize(im.c) {
			im.res.Notes = append(im.res.Notes, fmt.Sprintf("%s: plugin %s, tokenProcessorConfig.%s %v: the simulator matches the engine's %d-token KV blocks, so its matches are counted in vLLM's blocks, not %v-token ones",
				im.file, nameOf(p), k, tpc[k], engineBlockSize(im.c), tpc[k]))
		}
	}
	if on, _ := p.Parameters["speculativeIndexing"].(bool); on {
		im.res.Notes = append(im.res.Notes, fmt.Sprintf("%s: plugin %s, speculativeIndexing: the simulator's index holds only what the KV events report, not the routing decisions llm-d seeds it with", im.file, nameOf(p)))
	}
	return nil
}
