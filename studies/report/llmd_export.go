package report

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"optimize/simcore/cluster"
	"optimize/simcore/errtext"
	"optimize/strategies/production"
	"optimize/strategies/settings"
)

// The llm-d export of one trial (`study export NAME --format llm-d -o
// DIR`): the trial's configuration as the files a deployment takes — an
// llm-d Router EndpointPickerConfig, the vLLM engine arguments, the
// InferenceObjectives when the strategy uses class priority — and
// MAPPING.md, which says for every setting in effect how it carried over.
// All four are generated from the settings table's production column.

// LLMDFormat is the export format of one trial as llm-d and vLLM configs.
const LLMDFormat = "llm-d"

// The files an llm-d export writes, in the order written.
const (
	EPPConfigFile = "epp-config.yaml"
	VLLMArgsFile  = "vllm-args.txt"
	// Under P/D, one vLLM arguments file per role replaces VLLMArgsFile.
	VLLMArgsPrefillFile = "vllm-args-prefill.txt"
	VLLMArgsDecodeFile  = "vllm-args-decode.txt"
	ObjectivesFile      = "objectives.yaml"
	KustomizeFile       = "kustomization.yaml"
	WVAConfigFile       = "wva-config.yaml"
	MappingFile         = "MAPPING.md"
)

// LLMDRouterCommit is the llm-d Router commit whose plugin types and
// parameters the export and import follow; plugin names drift.
const LLMDRouterCommit = "ebab68792 (2026-08-21)"

// ExportFile is one file of a multi-file export.
type ExportFile struct {
	Name string
	Data []byte
}

// ExportLLMD builds trial n's llm-d export (the best trial's when n is
// not given). Nothing is written: the caller writes the files, so a
// mistake leaves no half-written directory.
func (r *Report) ExportLLMD(n int, given bool) ([]ExportFile, error) {
	if !given {
		best, ok := r.BestTrial()
		if !ok {
			return nil, errtext.Usage("--format %s: study %s has no complete trial yet", LLMDFormat, r.Study.Name)
		}
		n = best
	}
	c := r.ByNumber(n)
	if c == nil {
		return nil, errtext.Usage("--trial: study %s has no complete trial %d", r.Study.Name, n)
	}
	cfg, err := r.TrialConfig(c)
	if err != nil {
		return nil, err
	}
	header := []string{
		fmt.Sprintf("Trial %d of study %s (template %s), exported by optimize study export --format %s.", n, r.Study.Name, r.Study.Template, LLMDFormat),
		"MAPPING.md says how each setting carries over (exact, approximated, no counterpart, or the world).",
	}
	var epp, args, objectives, mapping bytes.Buffer
	eppHeader := append(header, "For the llm-d Router (EPP) at commit "+LLMDRouterCommit+" or newer: mount it as the EPP's config file.")
	if err := production.WriteEPPConfig(&epp, &cfg, eppHeader); err != nil {
		return nil, err
	}
	files := []ExportFile{{EPPConfigFile, epp.Bytes()}}
	if cfg.PD.Enabled() {
		for _, role := range []struct{ role, file, deployment string }{
			{production.RolePrefill, VLLMArgsPrefillFile, production.VLLMPrefillDeployment},
			{production.RoleDecode, VLLMArgsDecodeFile, production.VLLMDeployment},
		} {
			var b bytes.Buffer
			h := append(slices.Clone(header), fmt.Sprintf("vLLM engine arguments of the %s pods (Deployment %s, label llm-d.ai/role: %s), one a line: append them to `vllm serve` in the model server's container args.", role.role, role.deployment, role.role))
			if err := production.WriteVLLMRoleArgs(&b, &cfg, role.role, h); err != nil {
				return nil, err
			}
			files = append(files, ExportFile{role.file, b.Bytes()})
		}
	} else {
		argsHeader := append(slices.Clone(header), "vLLM engine arguments, one a line: append them to `vllm serve` in the model server's container args.")
		if err := production.WriteVLLMArgs(&args, &cfg, argsHeader); err != nil {
			return nil, err
		}
		files = append(files, ExportFile{VLLMArgsFile, args.Bytes()})
	}
	objName := ""
	if _, used := production.ClassPriorities(&cfg); used {
		objHeader := append(header, "One InferenceObjective per SLO class: a request names its class with the header x-llm-d-inference-objective: <class>.",
			"Set poolRef.name to your InferencePool's name.")
		if err := production.WriteObjectives(&objectives, &cfg, "my-inference-pool", objHeader); err != nil {
			return nil, err
		}
		files = append(files, ExportFile{ObjectivesFile, objectives.Bytes()})
		objName = ObjectivesFile
	}
	wvaName := ""
	if production.HasWVAConfig(&cfg) {
		var wva bytes.Buffer
		h := append(slices.Clone(header), "The autoscaler's thresholds for llm-d's workload-variant-autoscaler: a ConfigMap of this name in the model's namespace overrides the controller's defaults. The HPA's windows and replica bounds are not in it (MAPPING.md).")
		if err := production.WriteWVAConfig(&wva, &cfg, h); err != nil {
			return nil, err
		}
		files = append(files, ExportFile{WVAConfigFile, wva.Bytes()})
		wvaName = WVAConfigFile
	}
	var kust bytes.Buffer
	kustHeader := append(header, "kubectl apply -k on this directory deploys the strategy: the EPP's config, the vLLM arguments and the InferenceObjectives.")
	if err := production.WriteKustomization(&kust, &cfg, kustHeader, EPPConfigFile, objName, wvaName); err != nil {
		return nil, err
	}
	files = append(files, ExportFile{KustomizeFile, kust.Bytes()})
	r.writeMapping(&mapping, n, &cfg, files)
	return append(files, ExportFile{MappingFile, mapping.Bytes()}), nil
}

// writeMapping writes MAPPING.md: a summary line, one table row per
// setting in effect, and the simulate command that runs the trial again
// from the files.
func (r *Report) writeMapping(b *bytes.Buffer, n int, cfg *cluster.Config, files []ExportFile) {
	carried := production.CarriedSettings(cfg)
	fmt.Fprintf(b, "# Trial %d of study %s in production\n\n", n, r.Study.Name)
	fmt.Fprintf(b, "Template %s, workload %s, seeds %s. Files: ", r.Study.Template, r.Study.Workload, seedList(r.Seeds))
	names := make([]string, 0, len(files))
	for _, f := range files {
		names = append(names, "`"+f.Name+"`")
	}
	fmt.Fprintf(b, "%s. Plugin types follow the llm-d Router at commit %s.\n\n", strings.Join(names, ", "), LLMDRouterCommit)
	if cfg.PD.Enabled() {
		fmt.Fprintf(b, "P/D: %s runs llm-d's P/D profile handler over the prefill and decode pods (their llm-d.ai/role labels); %s and %s are the two vLLM Deployments' arguments. The pools' sizes (%d prefill, %d decode, %d both), their TP and the NIXL link are the world: the pods you deploy and measure.\n\n",
			EPPConfigFile, VLLMArgsPrefillFile, VLLMArgsDecodeFile, cfg.PD.Prefill, cfg.PD.Decode, cfg.PD.Shared)
	}
	if cfg.FlowControl.Enabled {
		b.WriteString("Flow control: the simulated gateway queue is llm-d's flow control (featureGates: flowControl): its detector, capacities, TTL, fairness and ordering policies in epp-config.yaml's flowControl, and one band per class band. One class map serves both: each class's InferenceObjective priority in objectives.yaml is its band (critical 4, standard 3, batch −1, sheddable −2, background −3), so a request naming its class's objective waits in the band the simulator puts it in.\n\n")
	} else if ok, why := production.OrdersByClass(cfg); ok {
		b.WriteString("Class order: the simulated wait queue serves classes by priority, so epp-config.yaml turns on llm-d's flow control (featureGates: flowControl) with one priority band per class priority of objectives.yaml, FCFS within a band, higher bands first; it holds requests at the gateway only while the pool is saturated (utilization-detector: a waiting queue of 5 or KV use 0.8).\n\n")
	} else if why != "" {
		fmt.Fprintf(b, "Class order: no counterpart: %s.\n\n", why)
	}
	fmt.Fprintf(b, "Deploy: `kubectl apply -k` on this directory, with llm-d's deployment in `%s/` (%s says what it patches).\n\n", production.KustomizeBaseDir, KustomizeFile)
	writeMappingTable(b, carried)
	b.WriteString("\nExact: production computes what the simulator computes. Approximated: production does something close, as the note says. No counterpart: nothing in llm-d or vLLM does it; the note says what would have to be built. World: the cluster the strategy runs in, not strategy.\n\n")
	command, inOrder := r.ReproduceCommand(cfg)
	b.WriteString("## Run it again\n\nThe files, plus `--set` for every setting they do not carry exactly, reproduce the trial's simulation")
	if !inOrder {
		b.WriteString(" up to the float rounding of the weighted sum, whose terms come out in another order")
	}
	fmt.Fprintf(b, ":\n\n```\n%s\n```\n", strings.Join(command, " "))
}

// writeMappingTable writes the verdict and one row per setting in
// effect, led by what the files write (what changes production), then
// what has no counterpart, then the world; the scorers at weight 0, which
// write nothing, share one line after the table.
func writeMappingTable(b *bytes.Buffer, carried []production.Carried) {
	fmt.Fprintf(b, "%s\n\n", MappingSummary(carried))
	b.WriteString("| setting | value | production | carried |\n|---|---|---|---|\n")
	var idle []string
	rank := func(c production.Carried) int {
		switch {
		case c.Fidelity == settings.WorldFact:
			return 2
		case c.Fidelity == settings.NoCounterpart:
			return 1
		}
		return 0
	}
	ordered := slices.Clone(carried)
	slices.SortStableFunc(ordered, func(a, b production.Carried) int { return rank(a) - rank(b) })
	for _, c := range ordered {
		if zeroWeightScorer(c) {
			idle = append(idle, "`"+c.Setting.Key+"`")
			continue
		}
		how := c.Fidelity.String()
		if c.Note != "" {
			how += ": " + c.Note
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", c.Setting.Key, mdCell(c.Value), mdCell(productionText(c)), mdCell(how))
	}
	if idle != nil {
		fmt.Fprintf(b, "\n%s %s.\n", zeroWeightLine, strings.Join(idle, ", "))
	}
}

// zeroWeightLine opens MAPPING.md's line of the scorers at weight 0.
const zeroWeightLine = "Scorers at weight 0 (exact: no plugin is written for them):"

// zeroWeightScorer reports whether c is a scorer's weight of 0 that
// carries exactly (nothing written).
func zeroWeightScorer(c production.Carried) bool {
	return c.Setting.Family() == settings.Scorers && c.Value == "0" && c.Fidelity == settings.Exact
}

// MappingSummary is MAPPING.md's verdict: "Exported exactly." or how many
// settings block exactness and which.
func MappingSummary(carried []production.Carried) string {
	var blockers []string
	for _, c := range carried {
		if c.Blocks() {
			blockers = append(blockers, c.Setting.Key)
		}
	}
	if len(blockers) == 0 {
		return "Exported exactly: every setting in effect has a production counterpart that computes what the simulator computes (the world aside)."
	}
	return fmt.Sprintf("%d settings block exactness: %s.", len(blockers), strings.Join(blockers, ", "))
}

// ReproduceCommand is the simulate command line that runs the trial whose
// configuration is cfg again from the exported files, and whether it
// gives the weighted profile in the trial's order (production.ReproduceSets).
func (r *Report) ReproduceCommand(cfg *cluster.Config) ([]string, bool) {
	out := simulateFiles(cfg)
	if _, used := production.ClassPriorities(cfg); used {
		out = append(out, "--objectives", ObjectivesFile)
	}
	out = append(out, "--workload", r.Study.Workload, "--seeds", seedList(r.Seeds))
	sets, inOrder := production.ReproduceSets(cfg)
	sets = append(sets, production.PDTPSets(cfg)...)
	for _, kv := range sets {
		out = append(out, "--set", kv)
	}
	return out, inOrder
}

// simulateFiles is simulate's command line up to the exported files it
// reads: the EndpointPickerConfig and the vLLM arguments (under P/D the
// decode pods' with --vllm-args, the prefill pods' with
// --vllm-args-prefill).
func simulateFiles(cfg *cluster.Config) []string {
	out := []string{"optimize", "simulate", "--epp-config", EPPConfigFile}
	if cfg.PD.Enabled() {
		return append(out, "--vllm-args", VLLMArgsDecodeFile, "--vllm-args-prefill", VLLMArgsPrefillFile)
	}
	return append(out, "--vllm-args", VLLMArgsFile)
}

// productionText says where a setting's value goes in production.
func productionText(c production.Carried) string {
	switch {
	case c.Via != "":
		return "as " + c.Via
	case c.Fidelity == settings.WorldFact || c.System == "":
		return "—"
	case c.System == settings.SystemVLLM && c.Name == "":
		return "vLLM default"
	case c.System == settings.SystemVLLM && c.Production == "":
		return "vLLM default (no " + c.Name + ")"
	case c.System == settings.SystemVLLM:
		return "vLLM `" + c.Name + "=" + c.Production + "`"
	case c.System == settings.SystemAutoscaler:
		if field, ok := strings.CutPrefix(c.Name, settings.WVASaturation); ok {
			return fmt.Sprintf("%s `%s: %s`", WVAConfigFile, field, c.Production)
		}
		return c.Name + " (not exported)"
	}
	switch c.Param {
	case settings.ParamWeight:
		if c.Production == "" {
			return fmt.Sprintf("llm-d `%s` (not in the profile)", c.Name)
		}
		return fmt.Sprintf("llm-d `%s`, weight %s", c.Name, c.Production)
	case settings.ParamType:
		if c.Production == "" {
			return "llm-d: no " + c.Name
		}
		return fmt.Sprintf("llm-d %s `%s`", c.Name, c.Production)
	case settings.ParamProfile:
		if c.Production == "" {
			return "llm-d scheduling profile (the weights below)"
		}
		return fmt.Sprintf("llm-d profile of `%s` alone", c.Production)
	}
	return fmt.Sprintf("llm-d `%s` %s %s", c.Name, c.Param, c.Production)
}

// mdCell escapes a Markdown table cell.
func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func seedList(seeds []int64) string {
	return strings.Trim(strings.ReplaceAll(fmt.Sprint(seeds), " ", ","), "[]")
}
