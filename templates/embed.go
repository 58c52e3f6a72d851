// Package templates embeds the built-in declarative files into the binary:
// workload specs, model latency profiles and strategy templates.
package templates

import "embed"

// Workloads holds the built-in workload specs, as workloads/<name>.yaml.
//
//go:embed workloads/*.yaml
var Workloads embed.FS

// Models holds the model latency profiles, as models/<model>.yaml.
//
//go:embed models/*.yaml
var Models embed.FS

// Strategies holds the built-in strategy templates, as
// strategies/<name>.yaml (see package optimize/strategies).
//
//go:embed strategies/*.yaml
var Strategies embed.FS
