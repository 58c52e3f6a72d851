package cli

import (
	"fmt"
	"io"
	"strings"

	"optimize/simcore/cluster"
	"optimize/simcore/metrics"
)

// autoscalerNote says, when the autoscaler is on, where it departs from
// BLIS f90a1e3a or reproduces it where BLIS is degenerate: simulate
// prints it on stderr with the other notes.
func autoscalerNote(cfg *cluster.Config) string {
	if !cfg.Autoscale.On() {
		return ""
	}
	pools := ""
	if cfg.PD.Enabled() {
		if cfg.BLISDegenerate() {
			pools = "; with prefill/decode pools, as BLIS: an added instance is in no pool (it serves nothing), the drain takes the smallest names whatever their pool (the only prefill instance may go, and every later request is rejected) and a transfer to a drained decode instance is dropped"
		} else {
			pools = fmt.Sprintf("; each prefill/decode pool role is scaled on its own, as llm-d scales each role's Deployment: its own decision over its instances, at least %d routable each, instances added at the role's TP (BLIS f90a1e3a scales the cluster as one, adds instances in no pool and may drain the only prefill instance)", cfg.MinReplicasInEffect())
		}
	}
	if cfg.BLISDegenerate() {
		return "autoscaler: era f90a1e3a, given, reproduces BLIS where it is degenerate: no minimum replica count (an idle cluster is drained to zero and every later request is rejected), an instance drained while idle stays draining and keeps its GPUs, no instance is added without a node pool; --set autoscaler.min_replicas=1 keeps llm-d's minimum instead" + pools
	}
	return fmt.Sprintf("autoscaler: at least %d instance(s) stay routable (llm-d's minReplicas; BLIS f90a1e3a keeps none and drains an idle cluster to zero) and an instance drained while idle terminates at once (BLIS's stays draining, holding its GPUs); era f90a1e3a given with autoscaler.min_replicas 0 reproduces BLIS%s",
		cfg.MinReplicasInEffect(), pools)
}

// writeScaleText prints, per seed, what the autoscaler did: the
// instances added and drained and the routable instances over time.
func writeScaleText(w io.Writer, seeds []int64, runs []metrics.Summary) {
	for i, r := range runs {
		a := r.Autoscaler
		if a == nil {
			continue
		}
		var steps []string
		for _, p := range a.Replicas {
			s := fmt.Sprintf("%.1fs %d", p.AtMs/1000, p.Routable)
			var more []string
			if len(a.Roles) > 0 {
				more = append(more, fmt.Sprintf("%dP %dD", p.Prefill, p.Decode))
			}
			if p.Loading > 0 {
				more = append(more, fmt.Sprintf("%d loading", p.Loading))
			}
			if p.Draining > 0 {
				more = append(more, fmt.Sprintf("%d draining", p.Draining))
			}
			if len(more) > 0 {
				s += " (" + strings.Join(more, ", ") + ")"
			}
			steps = append(steps, s)
		}
		const most = 12
		if len(steps) > most {
			steps = append(steps[:most-1], fmt.Sprintf("… %d changes, last %s", len(steps)-most+1, steps[len(steps)-1]))
		}
		fmt.Fprintf(w, "seed %d autoscaler: %d added, %d drained, %d could not be placed; routable instances: %s\n",
			seeds[i], a.ScaleUps, a.ScaleDowns, a.FailedScaleUps, strings.Join(steps, " → "))
		if len(a.Roles) > 0 {
			var roles []string
			for _, r := range a.Roles {
				roles = append(roles, fmt.Sprintf("%s %d added, %d drained, %.3f GPU-hours", r.Role, r.ScaleUps, r.ScaleDowns, r.GPUHours))
			}
			fmt.Fprintf(w, "seed %d autoscaler by pool role: %s\n", seeds[i], strings.Join(roles, "; "))
		}
	}
}
