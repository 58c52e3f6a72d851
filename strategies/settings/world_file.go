package settings

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"optimize/data"
	"optimize/simcore/cluster"
	"optimize/simcore/errtext"
	"optimize/simcore/keys"
)

// A world file is a deployment's world as data: the settings that place
// a run in it (model, GPU, TP, latency model, KV blocks per instance, the
// latency model's coefficients) under `world:`, and under `provenance:`
// where they came from (optimize calibrate --fit writes the runs, the
// date and the fit's errors there). --world-file reads it wherever a
// world is given; its settings apply before a settings file's and the
// flags', which override them.
//
//	world:
//	  model: qwen/qwen3-14b
//	  gpu: H100
//	  latency.physics.beta.1a: 1.31
//	provenance: {...}

// WorldFile is a world file's content.
type WorldFile struct {
	// World are the settings, key → value text, in the order written.
	World []WorldSetting
	// Provenance is said about the world, whatever its shape.
	Provenance any
}

// WorldSetting is one `key: value` line under world:.
type WorldSetting struct{ Key, Value string }

// WorldFileKey reports whether a world file may give the setting of key:
// the world's own and kv.total_blocks (WorldKeys, less the cluster's
// instance count: a world is one instance's), and every latency
// coefficient.
func WorldFileKey(key string) bool {
	if key == keys.NumInstances {
		return false
	}
	return slices.Contains(WorldKeys(), key) || CoefficientKey(key)
}

// coefficientFamilies are the latency models' coefficient families.
var coefficientFamilies = []string{keys.LatencyAlpha, keys.LatencyBeta, keys.PhysicsAlpha, keys.PhysicsBeta}

// CoefficientKey reports whether key is a latency coefficient's (a
// member of latency.alpha, latency.beta, latency.physics.alpha or
// latency.physics.beta).
func CoefficientKey(key string) bool {
	return slices.ContainsFunc(coefficientFamilies, func(f string) bool { return strings.HasPrefix(key, f+".") })
}

// worldFileAllowed lists the keys for errors.
func worldFileAllowed() string {
	var out []string
	for _, k := range WorldKeys() {
		if k != keys.NumInstances {
			out = append(out, k)
		}
	}
	for _, f := range coefficientFamilies {
		out = append(out, f+".*")
	}
	return strings.Join(out, ", ")
}

// ApplyWorldFile reads a world file and sets its world onto c: strict
// YAML (two sections, world settings only, each once), one-line errors
// naming the file, line and key. It returns the settings the file gives.
func ApplyWorldFile(file string, data []byte, c *cluster.Config) (given []Given, err error) {
	root, err := oneDocument(file, data, "empty (want world: and provenance:)")
	if err != nil {
		return nil, err
	}
	if root.Kind != yaml.MappingNode {
		return nil, errtext.New(file, "", "line %d: expected world: and provenance:, got %s", root.Line, errtext.Describe(root))
	}
	var world *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := FollowAlias(root.Content[i])
		switch k.Value {
		case "world":
			if world != nil {
				return nil, errtext.New(file, "world", "line %d: given twice", k.Line)
			}
			world = FollowAlias(root.Content[i+1])
		case "provenance":
		default:
			return nil, errtext.New(file, "", "line %d: unknown section %q (allowed: world, provenance)", k.Line, k.Value)
		}
	}
	if world == nil || world.Kind != yaml.MappingNode || len(world.Content) == 0 {
		return nil, errtext.New(file, "world", "missing or empty: want the world's settings, key: value")
	}
	for i := 0; i+1 < len(world.Content); i += 2 {
		if k := FollowAlias(world.Content[i]); !WorldFileKey(k.Value) {
			return nil, errtext.New(file, "world", "line %d: %s is not a world setting (allowed: %s)", k.Line, k.Value, worldFileAllowed())
		}
	}
	before := *c
	if given, err = readSettingsNode(file, world, c); err != nil {
		return nil, err
	}
	return given, checkApplied(file, given, c, before)
}

// WriteWorldFile writes w as a world file, headed by a comment.
func WriteWorldFile(out io.Writer, comment string, w WorldFile) error {
	var world yaml.Node
	world.Kind = yaml.MappingNode
	for _, s := range w.World {
		if _, ok := Lookup(s.Key); !ok || !WorldFileKey(s.Key) {
			return fmt.Errorf("world file: %s is not a world setting", s.Key)
		}
		world.Content = append(world.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Value: s.Key},
			&yaml.Node{Kind: yaml.ScalarNode, Value: s.Value})
	}
	var prov yaml.Node
	if err := prov.Encode(w.Provenance); err != nil {
		return err
	}
	doc := yaml.Node{Kind: yaml.MappingNode, HeadComment: comment, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Value: "world"}, &world,
		{Kind: yaml.ScalarNode, Value: "provenance"}, &prov,
	}}
	enc := yaml.NewEncoder(out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return err
	}
	return enc.Close()
}

// BuiltinWorlds are the names of the built-in world files (data/worlds),
// sorted.
func BuiltinWorlds() []string {
	names, _ := fs.Glob(data.Worlds, "worlds/*.yaml")
	for i, n := range names {
		names[i] = strings.TrimSuffix(path.Base(n), ".yaml")
	}
	return names
}

// ErrNoWorld is what ReadWorldFile's error is (errors.Is) when its
// argument names no file and no built-in world.
var ErrNoWorld = errors.New("no such world")

type noWorld struct{ text string }

func (e noWorld) Error() string        { return e.text }
func (e noWorld) Is(target error) bool { return target == ErrNoWorld }

// ReadWorldFile reads --world-file's argument: a file, or else the name
// of a built-in world. It returns the name the world is known by (the
// path, or the built-in's name) and its text.
func ReadWorldFile(pathOrName string) (string, []byte, error) {
	text, err := os.ReadFile(pathOrName)
	if err == nil {
		return pathOrName, text, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", nil, err
	}
	if text, berr := data.Worlds.ReadFile("worlds/" + pathOrName + ".yaml"); berr == nil && !strings.ContainsAny(pathOrName, "/\\") {
		return pathOrName, text, nil
	}
	return "", nil, noWorld{fmt.Sprintf("%s: no such file, nor a built-in world (built in: %s)", pathOrName, strings.Join(BuiltinWorlds(), ", "))}
}

// WorldFileSettings are the settings a world file gives, in its order,
// each with its value's text as the settings table writes it.
func WorldFileSettings(name string, text []byte) ([]WorldSetting, error) {
	c, err := StandardConfig()
	if err != nil {
		return nil, err
	}
	given, err := ApplyWorldFile(name, text, &c)
	if err != nil {
		return nil, err
	}
	out := make([]WorldSetting, len(given))
	for i, g := range given {
		out[i] = WorldSetting{Key: g.Setting.Key, Value: g.Setting.Value(&c)}
	}
	return out, nil
}
