// Package templates embeds the built-in declarative files into the binary:
// workload specs, production traces, the world data (models, GPUs, latency coefficients)
// and strategy templates.
package templates

import "embed"

// Workloads holds the built-in workload specs, as workloads/<name>.yaml.
//
//go:embed workloads/*.yaml
var Workloads embed.FS

// World holds the simulator's world data: models/<model>.yaml (each
// model's architecture and blackbox profiles), hardware/*.yaml (GPUs and
// their prices) and latency/*.yaml (the physics models' coefficients).
//
//go:embed models/*.yaml hardware/*.yaml latency/*.yaml
var World embed.FS

// Strategies holds the built-in strategy templates, as
// strategies/<name>.yaml (see package optimize/strategies).
//
//go:embed strategies/*.yaml
var Strategies embed.FS

// Traces holds the built-in production traces, gzip-compressed, as
// traces/<name>.<format extension>.gz, with their source, licence and
// citation in traces/README.md.
//
//go:embed traces/*.gz traces/README.md
var Traces embed.FS
