package workloads

import (
	"optimize/simcore/workload"
	"optimize/templates"
)

// Default is the workload a template, a study or a simulation runs
// when it names none: three SLO classes that differ only by class, at 2000
// sessions/s.
const Default = "orthogonal-slo"

// Builtins are the workload specs embedded from templates/workloads.
func Builtins() workload.Library {
	return workload.Library{FS: templates.Workloads, Dir: "workloads"}
}
