package production

import (
	"bytes"
	"fmt"

	"optimize/simcore/cluster"
	"optimize/strategies/settings"
)

// What production gets of a configuration: its exported vLLM arguments
// and EndpointPickerConfig read back as simulate --vllm-args --epp-config
// reads them, in its world. A setting the two files do not carry takes
// the value of the configuration they are read onto (the standard one,
// or a study's base); an approximated one takes the value the file reads
// back as (an llm-d scorer for a BLIS one, the class priorities of
// objectives.yaml none, since simulate reads no InferenceObjective).

// KeepWorld copies the world of src onto dst: every setting of the
// cluster (instances, KV capacity, model, GPU, TP, latency model, GPU
// prices) and every one the production column calls the world (the host
// link, latency targets, the horizon). A production config never sets
// them: they are the hardware and the measurement.
func KeepWorld(dst, src *cluster.Config) {
	for _, s := range settings.All() {
		if isWorld(s) {
			s.Restore(dst, src)
		}
	}
}

// isWorld reports whether KeepWorld keeps s.
func isWorld(s *settings.Setting) bool {
	return s.Component == settings.CompCluster || s.Production.Fidelity == settings.WorldFact
}

// WorldSets are the `KEY=VALUE` settings simulate needs with --set,
// beside c's exported EndpointPickerConfig and vLLM arguments, to run
// what production gets of c (Deployed): the world's settings in effect
// that the files do not carry exactly.
func WorldSets(c *cluster.Config) []string {
	var sets []string
	for _, cr := range CarriedSettings(c) {
		if cr.Via == "" && isWorld(cr.Setting) && cr.Fidelity != settings.Exact {
			sets = append(sets, cr.Setting.Key+"="+cr.Value)
		}
	}
	return sets
}

// ProductionFile is one exported file as production reads it: its name
// and its text (nil when the export has none).
type ProductionFile struct {
	Name string
	Data []byte
}

// Deployed is the configuration production gets from exported files:
// vllm (the vLLM arguments), then epp (the EndpointPickerConfig), then
// objectives (the InferenceObjectives, when written) read onto base, with
// world's world kept (KeepWorld) and resolved again.
func Deployed(base, world cluster.Config, vllm, epp, objectives ProductionFile) (cluster.Config, error) {
	c := base
	if _, err := ApplyVLLMArgs(vllm.Name, vllm.Data, &c); err != nil {
		return cluster.Config{}, err
	}
	if _, err := ApplyEPPConfig(epp.Name, epp.Data, &c); err != nil {
		return cluster.Config{}, err
	}
	if objectives.Data != nil {
		if _, err := ApplyObjectives(objectives.Name, objectives.Data, &c); err != nil {
			return cluster.Config{}, err
		}
	}
	KeepWorld(&c, &world)
	if err := settings.CheckConfig(&c); err != nil {
		return cluster.Config{}, fmt.Errorf("as its files carry it, in its world: %v", err)
	}
	return c, nil
}

// AsDeployed is c as production gets it: its vLLM arguments,
// EndpointPickerConfig and InferenceObjectives, as the llm-d export
// writes them, read onto base in c's world (Deployed). A second pass
// changes nothing: what the files carry, they carry exactly.
func AsDeployed(base, c cluster.Config) (cluster.Config, error) {
	var epp, vllm, obj bytes.Buffer
	if err := WriteVLLMArgs(&vllm, &c, nil); err != nil {
		return cluster.Config{}, err
	}
	if err := WriteEPPConfig(&epp, &c, nil); err != nil {
		return cluster.Config{}, err
	}
	objectives := ProductionFile{Name: "objectives.yaml"}
	if _, used := ClassPriorities(&c); used {
		if err := WriteObjectives(&obj, &c, "pool", nil); err != nil {
			return cluster.Config{}, err
		}
		objectives.Data = obj.Bytes()
	}
	return Deployed(base, c, ProductionFile{"vllm-args.txt", vllm.Bytes()}, ProductionFile{"epp-config.yaml", epp.Bytes()}, objectives)
}
