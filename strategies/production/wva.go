package production

import (
	"fmt"
	"io"
	"strings"

	"optimize/simcore/cluster"
	"optimize/strategies/settings"
)

// The autoscaler in production: llm-d's workload-variant-autoscaler
// (WVA) reads its saturation analyzer's thresholds from the ConfigMap
// wva-saturation-scaling-config, key default (a YAML document); the V2
// token-based analyzer the simulator models is analyzerName: saturation,
// with kvCacheThreshold (the share of a replica's KV tokens that counts
// as its capacity), scaleUpThreshold (demand / capacity above which it
// adds replicas) and scaleDownBoundary (below which it removes them). A
// ConfigMap of that name in the model's namespace overrides the
// controller's. The HPA's windows and bounds, and the WVA's own period,
// are not in it.
const (
	WVAConfigMap    = "wva-saturation-scaling-config"
	wvaAnalyzerName = "saturation"
)

// HasWVAConfig reports whether c runs the autoscaler, whose thresholds
// the export writes as the WVA's ConfigMap.
func HasWVAConfig(c *cluster.Config) bool { return c.Autoscale.IntervalUs > 0 }

// WriteWVAConfig writes the WVA's saturation-scaling ConfigMap with c's
// autoscaler thresholds.
func WriteWVAConfig(w io.Writer, c *cluster.Config, header []string) error {
	var b strings.Builder
	for _, h := range header {
		fmt.Fprintf(&b, "# %s\n", h)
	}
	fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  default: |\n    analyzerName: %s\n", WVAConfigMap, wvaAnalyzerName)
	for _, s := range settings.All() {
		if field, ok := strings.CutPrefix(s.Production.Name, settings.WVASaturation); ok && s.Production.System == settings.SystemAutoscaler {
			fmt.Fprintf(&b, "    %s: %s\n", field, s.Value(c))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
