package settings

import (
	"fmt"
	"strconv"
	"strings"

	"optimize/simcore/cluster"
	"optimize/simcore/latency"
)

// WorldMarkdown lists the built-in world in Markdown, for docs/models-and-hardware.md's
// "Models and hardware" section: every model (its architecture, the world
// it runs in when named alone and the KV blocks per instance derived
// there, its blackbox profiles, licence and source) and every GPU (its
// figures and their source), read from the embedded world data, so that
// the guide cannot drift from what ships.
func WorldMarkdown() (string, error) {
	cat, err := WorldData()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d models (`--model NAME`; the KV blocks are derived from memory at the model's default GPU and TP, trained-physics, gpu_memory_utilization %g):\n\n",
		len(cat.Models()), cluster.Defaults().GPUMemoryUtilization)
	b.WriteString("| model | architecture | default GPU, TP | KV blocks per instance | blackbox profiles | licence | source |\n|---|---|---|--:|---|---|---|\n")
	for _, name := range cat.Models() {
		m, _ := cat.Model(name)
		blocks, err := defaultBlocks(m, cat)
		if err != nil {
			return "", fmt.Errorf("model %s: %v", name, err)
		}
		profiles := strings.Join(m.ProfileNames(), ", ")
		if profiles == "" {
			profiles = "–"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s, TP%d | %s | %s | %s | %s |\n", m.Name, archWords(m.Arch), m.DefaultGPU, m.DefaultTP,
			thousands(blocks), profiles, m.Licence, m.Source)
	}
	fmt.Fprintf(&b, "\n%d GPUs (`--hardware NAME`; TFLOP/s dense, without sparsity; MFU: the model FLOPS utilisation a prefill and a decode reach):\n\n", len(cat.GPUs()))
	b.WriteString("| GPU | BF16 TFLOP/s | FP8 TFLOP/s | HBM TB/s | memory GiB | MFU prefill | MFU decode | source |\n|---|--:|--:|--:|--:|--:|--:|---|\n")
	for _, name := range cat.GPUs() {
		g, _ := cat.GPU(name)
		fp8 := "–"
		if g.TFlopsFP8 > 0 {
			fp8 = formatNumber(g.TFlopsFP8)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s | %s | %s |\n", g.Name, formatNumber(g.TFlopsPeak), fp8, formatNumber(g.BwPeakTBs),
			formatNumber(g.MemoryGiB), formatNumber(g.MfuPrefill), formatNumber(g.MfuDecode), g.Source)
	}
	fmt.Fprintf(&b, "\nThe trained-physics coefficients: %s.\n", cat.CoefficientSource())
	return b.String(), nil
}

// defaultBlocks is the KV blocks per instance m gets on its default GPU
// at its default TP under trained-physics, as a run derives them.
func defaultBlocks(m *latency.ModelEntry, cat *latency.Catalog) (int64, error) {
	c := cluster.Defaults()
	c.Model, c.GPU, c.TP, c.LatencyModel, c.Data = m.Name, m.DefaultGPU, m.DefaultTP, latency.KindTrainedPhysics, cat
	w, err := c.Resolve()
	if err != nil {
		return 0, err
	}
	return c.KVBlocks(w)
}

// archWords says an architecture in a few words: "dense, 32 layers" or
// "MoE 8 experts (2 per token), 32 layers".
func archWords(a latency.Arch) string {
	kind := "dense"
	if a.MoE() {
		kind = fmt.Sprintf("MoE, %d experts (%d per token)", a.Experts, a.ExpertsPerToken)
	}
	return fmt.Sprintf("%s, %d layers", kind, a.Layers)
}

// thousands writes n with commas between groups of three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
