package production

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"optimize/simcore"
	"optimize/simcore/cluster"
	"optimize/simcore/errtext"
	"optimize/simcore/keys"
)

// ObjectiveAPIVersions are the apiVersions an InferenceObjective may
// carry: llm-d's, and the Gateway API Inference Extension's it started
// from. The first is the one written.
var ObjectiveAPIVersions = []string{ObjectiveAPIVersion, "inference.networking.x-k8s.io/v1alpha2"}

// objectiveDoc is one InferenceObjective as the simulator reads it: the
// class it names and the priority it gives.
type objectiveDoc struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name      string `yaml:"name"`
		Namespace string `yaml:"namespace"`
	} `yaml:"metadata"`
	Spec struct {
		Priority *int `yaml:"priority"`
		PoolRef  struct {
			Group string `yaml:"group"`
			Kind  string `yaml:"kind"`
			Name  string `yaml:"name"`
		} `yaml:"poolRef"`
	} `yaml:"spec"`
}

// ApplyObjectives reads InferenceObjectives (one YAML document each, as
// objectives.yaml holds them) onto c: an objective named after an SLO
// class gives that class its priority, priority.base.<class>, which the
// simulator's class order reads (llm-d's flow control serves it as that
// class's band). A class no objective names keeps priority 0, llm-d's
// default for a request naming no objective. An objective naming no SLO
// class, or a field the simulator does not model, is a one-line error.
func ApplyObjectives(file string, data []byte, c *cluster.Config) (res ImportResult, err error) {
	defer func() {
		if r := recover(); r != nil { // yaml.v3 has panicked on hostile input
			err = errtext.New(file, "", "malformed YAML (%v)", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	seen := map[simcore.SLOClass]bool{}
	for n := 1; ; n++ {
		var doc objectiveDoc
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return res, errtext.New(file, "", "document %d: %s (modelled fields: apiVersion, kind, metadata.name, metadata.namespace, spec.priority, spec.poolRef)", n, oneLineYAML(err))
		}
		if !slices.Contains(ObjectiveAPIVersions, doc.APIVersion) || doc.Kind != ObjectiveKind {
			return res, errtext.New(file, "", "document %d: apiVersion %q, kind %q: want %s of %s", n, doc.APIVersion, doc.Kind, ObjectiveKind, strings.Join(ObjectiveAPIVersions, " or "))
		}
		class, err := simcore.ParseSLOClass(doc.Metadata.Name)
		if err != nil || class == simcore.SLONone {
			return res, errtext.New(file, "", "document %d: InferenceObjective %q names no SLO class (want one of %s): requests name their class by the objective", n, doc.Metadata.Name, simcore.SLOClassNames)
		}
		if seen[class] {
			return res, errtext.New(file, "", "document %d: InferenceObjective %s is given twice", n, doc.Metadata.Name)
		}
		seen[class] = true
		priority := 0
		if doc.Spec.Priority != nil {
			priority = *doc.Spec.Priority
		}
		s := mustSetting(keys.PriorityBase + "." + class.String())
		if err := setImported(&res, file, c, s, strconv.Itoa(priority), fmt.Sprintf("InferenceObjective %s, spec.priority", doc.Metadata.Name)); err != nil {
			return res, err
		}
	}
	if len(seen) == 0 {
		return res, errtext.New(file, "", "empty; want one %s per SLO class", ObjectiveKind)
	}
	if !mustSetting(keys.PriorityBase + "." + simcore.SLOCritical.String()).Active.Holds(c) {
		res.Notes = append(res.Notes, file+": the classes' priorities order nothing unless the class order is on: llm-d's flow control (featureGates: [flowControl] in --epp-config), or --scheduler priority-fcfs under a class priority policy")
	}
	for class := simcore.SLOCritical; class < simcore.NumSLOClasses; class++ {
		if !seen[class] {
			s := mustSetting(keys.PriorityBase + "." + class.String())
			if err := setImported(&res, file, c, s, "0", "no InferenceObjective named "+class.String()+" (llm-d's priority 0)"); err != nil {
				return res, err
			}
		}
	}
	return res, nil
}
