package production

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"optimize/search"
	"optimize/simcore"
	"optimize/simcore/cluster"
	"optimize/simcore/flow"
	"optimize/simcore/keys"
	"optimize/strategies/settings"
)

// The simulated gateway queue (flow_control.*) as llm-d's flow control
// (featureGates: [flowControl], the EndpointPickerConfig's flowControl
// block at llm-d-router ebab68792): the saturation detector plugin and
// its thresholds, one priority band per class band — the classes'
// InferenceObjective priorities are the simulator's bands (flow.Priority:
// critical 4, standard 3, batch −1, sheddable −2, background −3), the one
// map objectives.yaml writes — and the bands' template
// (defaultPriorityBand: capacity, fairness and ordering policies), the
// global capacity, the TTL and the usage-limit policy.

const (
	concurrencyDetector = "concurrency-detector"
	staticUsageLimit    = "static-usage-limit-policy"
	// unboundedBand is the per-band capacity written for the simulator's
	// unlimited band: llm-d reads 0 as its default of 5000 requests.
	unboundedBand = math.MaxInt32
)

// gatewayQueueFields are the flowControl fields that say the config runs
// the simulated gateway queue's settings (a flowControl of priority bands
// alone is the class order, OrdersByClass).
var gatewayQueueFields = []string{"defaultPriorityBand", "maxRequests", "defaultRequestTTL", "usageLimitPolicyPluginRef"}

// flowPluginTypes are the plugin types flow control's settings name.
func flowPluginTypes() []string {
	out := []string{staticUsageLimit}
	for _, s := range llmdFlowSettings() {
		for _, v := range s.Production.Values {
			if strings.HasSuffix(v.Production, "-detector") || strings.HasSuffix(v.Production, "-policy") {
				out = append(out, v.Production)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func llmdFlowSettings() []*settings.Setting {
	var out []*settings.Setting
	for _, s := range llmdCounterparts() {
		if s.Production.Name == settings.LLMDFlowControl {
			out = append(out, s)
		}
	}
	return out
}

// gatewayQueue writes c's gateway queue.
func (f *eppFile) gatewayQueue(c *cluster.Config) {
	fc := c.FlowControl.WithDefaults()
	prod := func(key string) string { return Carry(mustSetting(key), c).Production }
	f.featureGates = append(f.featureGates, flowControlGate)
	detector := utilizationDetector
	switch fc.Detector {
	case flow.DetectNever:
		d := f.plugin(utilizationDetector, "")
		d.params = []eppParam{{"queueDepthThreshold", fmt.Sprint(int64(neverQueueDepth))}, {"kvCacheUtilThreshold", "1.0"}}
	case flow.DetectUtilization:
		d := f.plugin(utilizationDetector, "")
		d.params = []eppParam{{"queueDepthThreshold", prod(keys.FlowQueueDepth)}, {"kvCacheUtilThreshold", prod(keys.FlowKVUtil)}}
	case flow.DetectConcurrency:
		detector = concurrencyDetector
		d := f.plugin(concurrencyDetector, "")
		d.params = []eppParam{{"maxConcurrency", strconv.Itoa(fc.MaxConcurrency)}}
	}
	fair, order := prod(keys.FlowFairness), prod(keys.FlowDispatchOrder)
	f.plugin(fair, "")
	f.plugin(order, "")
	capacity := fc.PerBandCapacity
	if capacity == 0 {
		capacity = unboundedBand
	}
	if fc.MaxQueueDepth > 0 {
		f.flowControl = append(f.flowControl, fmt.Sprintf("maxRequests: %d", fc.MaxQueueDepth))
	}
	f.flowControl = append(f.flowControl, "defaultRequestTTL: "+ttlText(fc.RequestTTL))
	if fc.UsageLimit != flow.DefaultUsageLimit {
		u := f.plugin(staticUsageLimit, "")
		u.params = []eppParam{{"threshold", search.FormatNumber(fc.UsageLimit)}}
		f.flowControl = append(f.flowControl, "usageLimitPolicyPluginRef: "+staticUsageLimit)
	}
	// A band listed in priorityBands takes llm-d's defaults (5000
	// requests, global-strict, FCFS), not defaultPriorityBand's, which
	// serves only priorities not listed (0, a request naming no
	// objective): every band says its policies.
	policies := fmt.Sprintf("maxRequests: %d, fairnessPolicyRef: %s, orderingPolicyRef: %s", capacity, fair, order)
	f.flowControl = append(f.flowControl, "defaultPriorityBand: {"+policies+"}")
	f.flowControl = append(f.flowControl, "priorityBands:")
	for _, band := range priorityBands(flowBands()) {
		f.flowControl = append(f.flowControl, fmt.Sprintf("- {priority: %d, %s}  # %s", band.priority, policies, strings.Join(band.classes, ", ")))
	}
	f.flowControl = append(f.flowControl, "saturationDetector:", "  pluginRef: "+detector)
}

// flowBands is the simulator's class → band map.
func flowBands() map[simcore.SLOClass]int {
	out := map[simcore.SLOClass]int{}
	for class := simcore.SLOCritical; class < simcore.NumSLOClasses; class++ {
		out[class] = flow.Priority(class)
	}
	return out
}

// ttlText is a TTL in µs as the Kubernetes duration llm-d reads ("0s":
// no limit).
func ttlText(us simcore.Tick) string {
	return (time.Duration(us) * time.Microsecond).String()
}

// flowSets are the class priorities a re-run restates when flow control
// is on: objectives.yaml then carries the bands, not priority.base.*.
func flowSets(c *cluster.Config) []string {
	if !c.FlowControl.Enabled {
		return nil
	}
	var out []string
	for _, cr := range CarriedSettings(c) {
		if cr.Name == settings.LLMDObjective && cr.Via == "" && cr.Fidelity == settings.Exact {
			out = append(out, cr.Setting.Key+"="+cr.Value)
		}
	}
	return out
}

// gatewayQueue reads the flowControl block's gateway-queue fields into
// flow_control.* (after the llm-d settings took their standard values).
func (im *eppImport) gatewayQueue(doc *eppDoc) error {
	if !slices.ContainsFunc(gatewayQueueFields, func(k string) bool { _, ok := doc.FlowControl[k]; return ok }) {
		return nil
	}
	if !slices.Contains(doc.FeatureGates, flowControlGate) {
		return im.fail("flowControl holds the gateway queue's settings but featureGates does not list %s: llm-d runs no flow control without it", flowControlGate)
	}
	set := func(key, text, where string) error { return im.set(mustSetting(key), text, "flowControl."+where) }
	if err := set(keys.FlowControl, "true", "defaultPriorityBand"); err != nil {
		return err
	}
	if m, _ := doc.FlowControl["saturationDetector"].(map[string]any); m != nil {
		ref, _ := m["pluginRef"].(string)
		p := im.byName[ref]
		if err := set(keys.FlowDetector, p.Type, "saturationDetector.pluginRef"); err != nil {
			return err
		}
		params := map[string]string{"queueDepthThreshold": keys.FlowQueueDepth, "kvCacheUtilThreshold": keys.FlowKVUtil, "maxConcurrency": keys.FlowMaxConcurrency}
		for _, k := range slices.Sorted(maps.Keys(p.Parameters)) {
			text, _ := scalarParam(p.Parameters[k])
			if err := im.set(mustSetting(params[k]), text, "plugin "+nameOf(p)+", parameter "+k); err != nil {
				return err
			}
		}
	}
	if v, ok := doc.FlowControl["maxRequests"]; ok {
		text, _ := scalarParam(v)
		if err := set(keys.FlowMaxQueueDepth, text, "maxRequests"); err != nil {
			return err
		}
	}
	if v, ok := doc.FlowControl["defaultRequestTTL"].(string); ok {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return im.fail("flowControl.defaultRequestTTL %q: want a duration such as 60s or 0s", v)
		}
		if err := set(keys.FlowRequestTTL, strconv.FormatInt(d.Microseconds(), 10), "defaultRequestTTL"); err != nil {
			return err
		}
	}
	if ref, ok := doc.FlowControl["usageLimitPolicyPluginRef"].(string); ok {
		p, found := im.byName[ref]
		if !found || p.Type != staticUsageLimit {
			return im.fail("flowControl.usageLimitPolicyPluginRef %s: want a %s plugin defined in plugins", ref, staticUsageLimit)
		}
		text, _ := scalarParam(p.Parameters["threshold"])
		if err := set(keys.FlowUsageLimit, text, "usageLimitPolicyPluginRef"); err != nil {
			return err
		}
	}
	band, _ := doc.FlowControl["defaultPriorityBand"].(map[string]any)
	bands, _ := doc.FlowControl["priorityBands"].([]any)
	for i, b := range bands {
		m, _ := b.(map[string]any)
		for k, v := range m {
			if k != "priority" && fmt.Sprint(v) != fmt.Sprint(band[k]) {
				return im.fail("flowControl.priorityBands[%d].%s %v: the simulator's bands share one template, flowControl.defaultPriorityBand's (%s %v)", i, k, v, k, band[k])
			}
		}
	}
	if band != nil {
		for _, k := range slices.Sorted(maps.Keys(band)) {
			text, _ := scalarParam(band[k])
			var err error
			switch k {
			case "maxRequests":
				if text == strconv.Itoa(unboundedBand) {
					text = "0"
				}
				err = set(keys.FlowPerBandCapacity, text, "defaultPriorityBand.maxRequests")
			case "fairnessPolicyRef":
				err = set(keys.FlowFairness, im.typeOf(text), "defaultPriorityBand.fairnessPolicyRef")
			case "orderingPolicyRef":
				err = set(keys.FlowDispatchOrder, im.typeOf(text), "defaultPriorityBand.orderingPolicyRef")
			default:
				err = im.fail("flowControl.defaultPriorityBand.%s is not modelled (modelled: maxRequests, fairnessPolicyRef, orderingPolicyRef)", k)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// typeOf is the type of the plugin named ref (ref itself when no plugin
// has that name: llm-d's default policies are named after their types).
func (im *eppImport) typeOf(ref string) string {
	if p, ok := im.byName[ref]; ok {
		return p.Type
	}
	return ref
}
