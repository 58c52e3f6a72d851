package workloads

import (
	"optimize/data"
	"optimize/simcore/workload"
)

// Default is the workload a template, a study or a simulation runs
// when it names none: three SLO classes that differ only by class, at 2000
// sessions/s.
const Default = "orthogonal-slo"

// Builtins are the workload specs embedded from data/workloads.
func Builtins() workload.Library {
	return workload.Library{FS: data.Workloads, Dir: "workloads"}
}
