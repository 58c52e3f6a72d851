package workload

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"

	"optimize/simcore/errtext"
)

// maxYAMLNodes bounds the work spent on one document, so that alias bombs
// ("billion laughs") fail fast instead of exhausting memory.
const maxYAMLNodes = 100_000

// unsupportedKeys names keys that BLIS accepts but this simulator does not
// model, keyed by the Go struct that would hold them. They get a clear
// "not supported" error instead of the generic unknown-key one.
var unsupportedKeys = map[reflect.Type]map[string]string{
	reflect.TypeOf(Spec{}): {
		"cohorts":             "cohorts are not supported; list the clients explicitly",
		"servegen_data":       "servegen_data is not supported",
		"inference_perf":      "inference_perf specs are not supported",
		"goodput_slo_targets": "goodput_slo_targets are not supported; give per-class targets in slo_targets",
	},
	reflect.TypeOf(Client{}): {
		"multimodal":    "multimodal clients are not supported",
		"concurrency":   "concurrency clients are not supported; use rate_fraction with reasoning.multi_turn closed-loop sessions",
		"think_time_us": "client-level think_time_us is not supported; use reasoning.multi_turn.think_time_us",
		"timeout":       "client timeouts are not supported",
		"slo_target_us": "per-client slo_target_us is not supported",
		"adapter":       "LoRA adapters are not supported",
	},
	reflect.TypeOf(Distribution{}): {
		"file": "distribution files are not supported; give the empirical PDF inline in params",
	},
	reflect.TypeOf(Window{}): {
		"trace_rate":          "per-window trace_rate is not supported",
		"arrival":             "per-window arrival overrides are not supported",
		"input_distribution":  "per-window distribution overrides are not supported",
		"output_distribution": "per-window distribution overrides are not supported",
	},
	reflect.TypeOf(Arrival{}): {
		"shape": "explicit arrival shape is not supported; give cv",
		"scale": "explicit arrival scale is not supported; give cv",
	},
}

var yamlNodeType = reflect.TypeOf(yaml.Node{})

// decodeStrict parses one YAML document into out (a pointer to struct). Before
// decoding it walks the node tree against out's type so that every unknown
// key, unsupported feature or mistyped scalar is reported with its full field
// path and the allowed values; the final decode uses yaml.v3's KnownFields as
// a second guard.
func decodeStrict(file string, data []byte, out any) error {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return errtext.New(file, "", "%s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return errtext.New(file, "", "empty document")
	}
	w := walker{file: file}
	if err := w.check(root.Content[0], reflect.TypeOf(out).Elem(), ""); err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(out); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			return errtext.New(file, "", "%s", strings.Join(te.Errors, "; "))
		}
		return errtext.New(file, "", "%s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return errtext.New(file, "", "only one YAML document is allowed")
	}
	return nil
}

type walker struct {
	file  string
	nodes int
}

func (w *walker) check(n *yaml.Node, t reflect.Type, path string) error {
	w.nodes++
	if w.nodes > maxYAMLNodes {
		return errtext.New(w.file, path, "document too large or too deeply aliased (more than %d nodes)", maxYAMLNodes)
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return errtext.New(w.file, path, "line %d: dangling alias", n.Line)
		}
		return w.check(n.Alias, t, path)
	}
	if t == yamlNodeType {
		return nil // opaque section, accepted as is
	}
	if isNull(n) {
		return nil // leaves the zero value
	}
	switch t.Kind() {
	case reflect.Pointer:
		return w.check(n, t.Elem(), path)
	case reflect.Struct:
		return w.checkStruct(n, t, path)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return errtext.New(w.file, path, "line %d: expected a list, got %s", n.Line, errtext.Describe(n))
		}
		for i, item := range n.Content {
			if err := w.check(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		return w.checkMap(n, t, path)
	default:
		return w.checkScalar(n, t, path)
	}
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func (w *walker) checkStruct(n *yaml.Node, t reflect.Type, path string) error {
	if n.Kind != yaml.MappingNode {
		return errtext.New(w.file, path, "line %d: expected a mapping, got %s", n.Line, errtext.Describe(n))
	}
	fields := yamlFields(t)
	seen := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return errtext.New(w.file, path, "line %d: keys must be plain names", k.Line)
		}
		keyPath := errtext.Join(path, k.Value)
		if line, dup := seen[k.Value]; dup {
			return errtext.New(w.file, keyPath, "line %d: key repeated (first at line %d)", k.Line, line)
		}
		seen[k.Value] = k.Line
		field, ok := fields.byName[k.Value]
		if !ok {
			if msg, unsupported := unsupportedKeys[t][k.Value]; unsupported {
				return errtext.New(w.file, keyPath, "%s", msg)
			}
			return errtext.New(w.file, keyPath, "line %d: unknown key (allowed: %s)", k.Line, strings.Join(fields.names, ", "))
		}
		if err := w.check(v, field.Type, keyPath); err != nil {
			return err
		}
	}
	return nil
}

func (w *walker) checkMap(n *yaml.Node, t reflect.Type, path string) error {
	if n.Kind != yaml.MappingNode {
		return errtext.New(w.file, path, "line %d: expected a mapping, got %s", n.Line, errtext.Describe(n))
	}
	if t.Key().Kind() != reflect.String {
		return errtext.New(w.file, path, "unsupported map key type %s", t.Key())
	}
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return errtext.New(w.file, path, "line %d: keys must be plain values", k.Line)
		}
		keyPath := errtext.Join(path, k.Value)
		if seen[k.Value] {
			return errtext.New(w.file, keyPath, "line %d: key repeated", k.Line)
		}
		seen[k.Value] = true
		if err := w.check(v, t.Elem(), keyPath); err != nil {
			return err
		}
	}
	return nil
}

func (w *walker) checkScalar(n *yaml.Node, t reflect.Type, path string) error {
	want := scalarNoun(t)
	if n.Kind != yaml.ScalarNode {
		return errtext.New(w.file, path, "line %d: expected %s, got %s", n.Line, want, errtext.Describe(n))
	}
	if err := n.Decode(reflect.New(t).Interface()); err != nil {
		return errtext.New(w.file, path, "line %d: expected %s, got %q", n.Line, want, n.Value)
	}
	return nil
}

func scalarNoun(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	}
	return t.String()
}

type structFields struct {
	byName map[string]reflect.StructField
	names  []string // declaration order, for "allowed:" lists
}

// yamlFields lists the YAML keys a struct accepts, from its yaml tags.
func yamlFields(t reflect.Type) structFields {
	sf := structFields{byName: make(map[string]reflect.StructField, t.NumField())}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		sf.byName[name] = f
		sf.names = append(sf.names, name)
	}
	return sf
}
