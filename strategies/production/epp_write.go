package production

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"optimize/simcore"
	"optimize/simcore/cluster"
	"optimize/simcore/keys"
	"optimize/simcore/sched"
	"optimize/strategies/settings"
)

// What an EndpointPickerConfig holds beyond the profile: the data
// producers its scorers consume, the data layer that feeds them, and flow
// control. llm-d's loader (ebab68792) adds some of these by itself; the
// export writes every one it would run, so the file says what runs.

// The producer and source types the export writes.
const (
	preciseProducer      = "precise-prefix-cache-producer"
	preciseScorerName    = "precise-prefix-cache-scorer" // the prefix-cache-scorer instance reading it
	prefixScorerType     = "prefix-cache-scorer"
	tokenProducer        = "token-producer"
	notificationSource   = "endpoint-notification-source"
	metricsSource        = "metrics-data-source"
	metricsExtractor     = "core-metrics-extractor"
	kvEventsPort         = 5557
	producerNameParam    = "prefixMatchInfoProducerName"
	hashNothingTokens    = 1 // maxPrefixTokensToMatch below the 64-token block floor: 0 blocks hashed
	flowControlGate      = "flowControl"
	vllmKVEventsArg      = "--kv-events-config"
	tokenProducerVLLMURL = "http://localhost:8000"
)

// eppParam is one parameter line: its name and its YAML value (a scalar,
// or a flow mapping for a nested one).
type eppParam struct{ name, value string }

// eppPlugin is one plugin of the config: its type, its name when it is
// not the type, and its parameters in the order written.
type eppPlugin struct {
	typ, name string
	params    []eppParam
}

func (p *eppPlugin) ref() string {
	if p.name != "" {
		return p.name
	}
	return p.typ
}

// eppFile is the whole config before it is rendered.
type eppFile struct {
	comments     []string
	featureGates []string
	plugins      []*eppPlugin
	dataLayer    bool // precise prefix: KV events through the notification source
	flowControl  []string
	profiles     []eppSchedProfile
}

// eppSchedProfile is one scheduling profile: its name and its plugins,
// filters and the picker first (weight ""), then the scorers.
type eppSchedProfile struct {
	name    string
	plugins []eppWeighted
}

// plugin returns the plugin referred to as ref, adding it of type typ.
func (f *eppFile) plugin(typ, name string) *eppPlugin {
	for _, p := range f.plugins {
		if p.typ == typ && p.name == name {
			return p
		}
	}
	p := &eppPlugin{typ: typ, name: name}
	f.plugins = append(f.plugins, p)
	return p
}

// WriteEPPConfig writes c's routing and admission as an llm-d
// EndpointPickerConfig: the plugins with their parameters and the
// producers their scorers consume, the data layer and flow control where
// they are needed, and one scheduling profile with the scorers' weights
// and the picker. header lines are written as comments first.
func WriteEPPConfig(w io.Writer, c *cluster.Config, header []string) error {
	f := buildEPPFile(c)
	var b strings.Builder
	for _, h := range append(slices.Clone(header), f.comments...) {
		fmt.Fprintf(&b, "# %s\n", h)
	}
	// section writes a top-level field of lines, each after prefix.
	section := func(name, prefix string, lines []string) {
		if len(lines) > 0 {
			b.WriteString(name + ":\n")
			for _, l := range lines {
				b.WriteString(prefix + l + "\n")
			}
		}
	}
	fmt.Fprintf(&b, "apiVersion: %s\nkind: %s\n", EPPAPIVersions[0], EPPKind)
	section("featureGates", "- ", f.featureGates)
	b.WriteString("plugins:\n")
	for _, p := range f.plugins {
		fmt.Fprintf(&b, "- type: %s\n", p.typ)
		if p.name != "" {
			fmt.Fprintf(&b, "  name: %s\n", p.name)
		}
		if len(p.params) > 0 {
			b.WriteString("  parameters:\n")
			for _, pr := range p.params {
				fmt.Fprintf(&b, "    %s: %s\n", pr.name, pr.value)
			}
		}
	}
	if f.dataLayer {
		fmt.Fprintf(&b, "dataLayer:\n  sources:\n  - pluginRef: %s\n    extractors:\n    - pluginRef: %s\n  - pluginRef: %s\n    extractors:\n    - pluginRef: %s\n",
			metricsSource, metricsExtractor, notificationSource, preciseProducer)
	}
	section("flowControl", "  ", f.flowControl)
	b.WriteString("schedulingProfiles:\n")
	for _, pr := range f.profiles {
		fmt.Fprintf(&b, "- name: %s\n  plugins:\n", pr.name)
		for _, s := range pr.plugins {
			fmt.Fprintf(&b, "  - pluginRef: %s\n", s.typ)
			if s.weight != "" {
				fmt.Fprintf(&b, "    weight: %s\n", s.weight)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// buildEPPFile lays out c's config: producers first (what the scorers
// read), then the scorers, the picker, the admitter and its detector, the
// profile handler, and the parameters of plugins outside the profile.
func buildEPPFile(c *cluster.Config) *eppFile {
	carried := CarriedSettings(c)
	p := eppOf(carried)
	f := &eppFile{}
	if p.note != "" {
		f.comments = append(f.comments, p.note)
	}
	roundRobin := len(p.scorers) == 1 && p.scorers[0].typ == settings.RoundRobinScorer && settingValue(c, keys.RoutingPolicy) == "round-robin"
	var scorerRefs []eppWeighted
	for _, s := range p.scorers {
		switch s.typ {
		case preciseScorerName:
			// At ebab68792 precise-prefix-cache-scorer is deprecated for its
			// two parts: the producer of KV-event matches, which needs the
			// real token ids (a token-producer of the vLLM backend) and the
			// pods' KV events, and a prefix-cache-scorer reading it.
			tok := f.plugin(tokenProducer, "")
			tok.params = []eppParam{{"modelName", Carry(mustSetting("model"), c).Production}, {"vllm", "{url: " + tokenProducerVLLMURL + "}"}}
			f.plugin(notificationSource, "")
			f.plugin(metricsSource, "")
			f.plugin(metricsExtractor, "")
			pr := f.plugin(preciseProducer, "")
			pr.params = []eppParam{
				{"tokenProcessorConfig", fmt.Sprintf("{blockSize: %d}", engineBlockSize(c))},
				{"kvEventsConfig", fmt.Sprintf("{discoverPods: true, podDiscoveryConfig: {socketPort: %d}}", kvEventsPort)},
			}
			f.dataLayer = true
			sc := f.plugin(prefixScorerType, preciseScorerName)
			sc.params = []eppParam{{producerNameParam, preciseProducer}}
			scorerRefs = append(scorerRefs, eppWeighted{preciseScorerName, s.weight})
			continue
		case prefixScorerType, settings.RoundRobinScorer:
			// Both read the approximate prefix index; llm-d's loader adds
			// its producer when the config names none, so it is written.
			f.plugin(settings.ApproxPrefixProducer, "")
		}
		for _, pr := range eppProducers {
			if pr.scorer == s.typ {
				f.plugin(pr.producer, "")
			}
		}
		f.plugin(s.typ, "")
		scorerRefs = append(scorerRefs, s)
	}
	if roundRobin {
		// Round-robin: a producer that hashes no block, so every request
		// is cold and no-hit-lru-scorer cycles through the endpoints.
		pr := f.plugin(settings.ApproxPrefixProducer, "")
		pr.params = append(pr.params, eppParam{"maxPrefixTokensToMatch", fmt.Sprint(hashNothingTokens)})
	}
	f.plugin(p.picker, "")
	if p.admit != "" {
		f.plugin(p.admit, "")
	}
	profile := append([]eppWeighted{{p.picker, ""}}, scorerRefs...)
	if c.PD.Enabled() {
		f.pdProfiles(p, profile)
	} else {
		f.plugin(singleProfileHandler, "")
		f.profiles = []eppSchedProfile{{defaultProfile, profile}}
	}
	for _, cr := range carried {
		if cr.System != settings.SystemLLMD || cr.Production == "" || cr.Name == settings.LLMDObjective || cr.Name == settings.LLMDFlowControl || slices.Contains([]string{settings.ParamWeight, settings.ParamType, settings.ParamProfile}, cr.Param) {
			continue
		}
		// A parameter of a plugin outside the profile (the prefix
		// producer, whose index prefix-cache-scorer reads) adds it.
		pl := f.plugin(cr.Name, "")
		pl.params = append(pl.params, eppParam{cr.Param, cr.Production})
	}
	f.admission(c, p)
	return f
}

// admission writes what keeps llm-d's admission what the simulator
// computes. Without flow control the EPP's legacy admission controller
// sheds every request of priority < 0 while its saturation detector
// (utilization-detector: a waiting queue of 5, KV use 0.8) reports the
// pool saturated; the simulator sheds nothing so, so an admitter or
// InferenceObjectives get a detector that never reports saturation. When
// the simulated order is class priority, flow control is turned on
// instead: one priority band per class, FCFS within a band (its default
// ordering), strictly higher bands first, with llm-d's default detector,
// so requests wait at the gateway in class order while the pool is
// saturated.
func (f *eppFile) admission(c *cluster.Config, p eppProfile) {
	if c.FlowControl.Enabled {
		f.gatewayQueue(c)
		return
	}
	prio, objectives := ClassPriorities(c)
	if ok, _ := OrdersByClass(c); ok && p.admit == "" {
		f.featureGates = append(f.featureGates, flowControlGate)
		f.flowControl = append(f.flowControl, "priorityBands:")
		for _, band := range priorityBands(prio) {
			f.flowControl = append(f.flowControl, fmt.Sprintf("- priority: %d  # %s", band.priority, strings.Join(band.classes, ", ")))
		}
		return
	}
	if p.admit == "" && !objectives {
		return
	}
	d := f.plugin(utilizationDetector, "")
	d.params = []eppParam{{"queueDepthThreshold", fmt.Sprint(int64(neverQueueDepth))}, {"kvCacheUtilThreshold", "1.0"}}
	f.flowControl = append(f.flowControl, "saturationDetector:", "  pluginRef: "+utilizationDetector)
}

// OrdersByClass reports whether c's simulated wait-queue order starts
// from a fixed priority per class (priority-fcfs under slo-class, or
// slo-tiered and slo-adaptive, whose class bases then grow with the wait
// or the queue), which llm-d's flow control reproduces with one priority
// band per class — the growth has no counterpart and its settings say
// so; why says what flow control cannot reproduce otherwise, when c
// orders by priority at all.
func OrdersByClass(c *cluster.Config) (ok bool, why string) {
	if settingValue(c, keys.Scheduler) != sched.PriorityFCFS {
		return false, ""
	}
	switch policy := settingValue(c, keys.PriorityPolicy); {
	case policy != sched.ByClass && policy != sched.SLOTiered && policy != sched.SLOAdaptive:
		return false, "priority.policy " + policy + " gives no class a priority of its own; flow control's bands are fixed per InferenceObjective"
	case hasAdmitter(c):
		return false, "flow control orders only while its saturation detector reports saturation, and the admitter needs a detector that never does (else llm-d's legacy admission sheds every request of priority < 0): the class order has no counterpart beside the probabilistic admitter"
	}
	return true, ""
}

func hasAdmitter(c *cluster.Config) bool {
	return eppOf(CarriedSettings(c)).admit != ""
}

// priorityBand is one flow-control band: a priority and the classes
// whose InferenceObjective has it.
type priorityBand struct {
	priority int
	classes  []string
}

// priorityBands are the distinct class priorities, highest first, as
// flow control serves them (it refuses a priority level given twice).
func priorityBands(prio map[simcore.SLOClass]int) []priorityBand {
	var out []priorityBand
	for class := simcore.SLOCritical; class < simcore.NumSLOClasses; class++ {
		i := slices.IndexFunc(out, func(b priorityBand) bool { return b.priority == prio[class] })
		if i < 0 {
			out = append(out, priorityBand{priority: prio[class]})
			i = len(out) - 1
		}
		out[i].classes = append(out[i].classes, class.String())
	}
	slices.SortStableFunc(out, func(a, b priorityBand) int { return b.priority - a.priority })
	return out
}

func settingValue(c *cluster.Config, key string) string {
	return mustSetting(key).Value(c)
}

func mustSetting(key string) *settings.Setting {
	s, ok := settings.Lookup(key)
	if !ok {
		panic("production: no setting " + key) // the table declares every key used here
	}
	return s
}

// engineBlockSize is vLLM's tokens per KV block in c, which the precise
// producer's recomputed block keys must share for its matches to be the
// engine's blocks.
func engineBlockSize(c *cluster.Config) int64 {
	if c.BlockSize > 0 {
		return c.BlockSize
	}
	return 16
}
