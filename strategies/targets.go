package strategies

import (
	"fmt"
	"slices"
	"strings"

	"optimize/simcore"
	"optimize/simcore/cluster"
)

// CheckTargets reports an objective or constraint of the template that
// reads a latency target c does not give (per_slo.<class>.ttft_attainment
// needs the class's TTFT target; .attainment and .goodput any of its
// TTFT, ITL or E2E targets), so that a study says so before its baseline
// runs rather than at its first trial. c is a run's configuration with
// the workload's targets filled in.
func (t *Template) CheckTargets(c *cluster.Config) error {
	var paths []string
	for _, o := range t.Objectives {
		paths = append(paths, o.Metric)
	}
	for _, k := range t.Constraints {
		paths = append(paths, k.Metric)
	}
	for _, path := range paths {
		rest, ok := strings.CutPrefix(path, "per_slo.")
		if !ok {
			continue
		}
		name, field, _ := strings.Cut(rest, ".")
		class, err := simcore.ParseSLOClass(name)
		if err != nil {
			continue
		}
		_, ttft := c.SLOTTFT.Get(class)
		_, itl := c.SLOITL.Get(class)
		_, e2e := c.SLOE2E.Get(class)
		switch {
		case field == "ttft_attainment" && !ttft:
			return fmt.Errorf("template %s reads %s, which needs a TTFT target for %s: give --slo-ttft %s=MS (or --set slo.ttft_target_ms.%s=MS, or a workload spec with slo_targets)", t.Name, path, name, name, name)
		case (field == "attainment" || field == "goodput") && !ttft && !itl && !e2e:
			return fmt.Errorf("template %s reads %s, which needs a latency target for %s: give --slo-ttft %s=MS (or --slo-itl, --slo-e2e, --set slo.ttft_target_ms.%s=MS, or a workload spec with slo_targets)", t.Name, path, name, name, name)
		}
	}
	return nil
}

// ClassesRead are the SLO classes the template's objectives and
// constraints read (per_slo.<class>.…), in their order, each once.
func (t *Template) ClassesRead() []string {
	var out []string
	add := func(path string) {
		rest, ok := strings.CutPrefix(path, "per_slo.")
		if !ok {
			return
		}
		name, _, _ := strings.Cut(rest, ".")
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	for _, o := range t.Objectives {
		add(o.Metric)
	}
	for _, k := range t.Constraints {
		add(k.Metric)
	}
	return out
}
