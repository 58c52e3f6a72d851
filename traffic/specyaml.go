package traffic

import (
	"bytes"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"optimize/simcore/workload"
)

// The spec as written: BLIS's keys, empty fields left out.
type specFile struct {
	Version       string       `yaml:"version"`
	Seed          int64        `yaml:"seed"`
	AggregateRate float64      `yaml:"aggregate_rate"`
	Horizon       int64        `yaml:"horizon"`
	Clients       []clientFile `yaml:"clients"`
}

type clientFile struct {
	ID           string                `yaml:"id"`
	SLOClass     string                `yaml:"slo_class"`
	RateFraction float64               `yaml:"rate_fraction"`
	Arrival      workload.Arrival      `yaml:"arrival"`
	Input        workload.Distribution `yaml:"input_distribution"`
	Output       workload.Distribution `yaml:"output_distribution"`
	PrefixGroup  string                `yaml:"prefix_group,omitempty"`
	PrefixLength *int                  `yaml:"prefix_length,omitempty"`
	Lifecycle    *workload.Lifecycle   `yaml:"lifecycle,omitempty"`
}

// SpecYAML writes a fitted spec as YAML under a header comment. A length
// distribution repeated across clients is written once, with a YAML
// anchor, and referred to by alias after that.
func SpecYAML(spec *workload.Spec, header string) ([]byte, error) {
	out := specFile{Version: spec.Version, Seed: spec.Seed, AggregateRate: spec.AggregateRate, Horizon: spec.Horizon}
	for _, c := range spec.Clients {
		out.Clients = append(out.Clients, clientFile{ID: c.ID, SLOClass: c.SLOClass, RateFraction: c.RateFraction, Arrival: c.Arrival,
			Input: c.Input, Output: c.Output, PrefixGroup: c.PrefixGroup, PrefixLength: c.PrefixLength, Lifecycle: c.Lifecycle})
	}
	var doc yaml.Node
	if err := doc.Encode(out); err != nil {
		return nil, err
	}
	shareDistributions(&doc)
	doc.HeadComment = header
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// shareDistributions replaces every distribution node equal to an earlier
// one by an alias of it.
func shareDistributions(doc *yaml.Node) {
	first := map[string]*yaml.Node{}
	clients := mapValue(doc, "clients")
	if clients == nil {
		return
	}
	for _, client := range clients.Content {
		for i := 0; i+1 < len(client.Content); i += 2 {
			key := client.Content[i].Value
			if key != "input_distribution" && key != "output_distribution" {
				continue
			}
			node := client.Content[i+1]
			text, err := yaml.Marshal(node)
			if err != nil {
				continue
			}
			if prev, ok := first[string(text)]; ok {
				client.Content[i+1] = &yaml.Node{Kind: yaml.AliasNode, Alias: prev, Value: prev.Anchor}
				continue
			}
			node.Anchor = fmt.Sprintf("%s%d", strings.TrimSuffix(key, "_distribution"), len(first)+1)
			first[string(text)] = node
		}
	}
}

func mapValue(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
