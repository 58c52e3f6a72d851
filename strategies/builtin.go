package strategies

import (
	"optimize/simcore/cluster"
	"optimize/simcore/latency"
	"optimize/simcore/workload"
	"optimize/templates"
)

// The binary's built-in data — workload specs and model latency profiles,
// embedded by package templates — is read here and handed to the
// simulator, which parses what it is given and embeds nothing. The CLI,
// the server and the studies reach the built-ins through these functions.

// DefaultModel is the model whose profile the simulator runs on when no
// model is named: the one the baseline figures were measured on.
const DefaultModel = "meta-llama/llama-3.1-8b-instruct"

// DefaultWorkload is the workload a template, a study or a simulation runs
// when it names none: three SLO classes that differ only by class, at 2000
// sessions/s.
const DefaultWorkload = "orthogonal-slo"

// BuiltinWorkloads are the workload specs embedded from templates/workloads.
func BuiltinWorkloads() workload.Library {
	return workload.Library{FS: templates.Workloads, Dir: "workloads"}
}

// ModelCatalog reads the model profiles embedded from templates/models.
func ModelCatalog() (*latency.Catalog, error) {
	return latency.ReadCatalog(templates.Models, "models")
}

// Standard is the simulator's defaults on the default model's default
// profile (llama-3.1-8b on H100 at TP2): its latency coefficients and GPU
// KV capacity. Templates and studies start from it.
func Standard() (cluster.Config, error) {
	cat, err := ModelCatalog()
	if err != nil {
		return cluster.Config{}, err
	}
	p, err := cat.Find(DefaultModel, "", 0)
	if err != nil {
		return cluster.Config{}, err
	}
	c := cluster.Defaults()
	c.UseProfile(p)
	return c, nil
}
