// Package data embeds the built-in declarative files into the binary:
// workload specs, the world data (models, GPUs, latency coefficients),
// world files fitted to real runs and strategy templates. Public traces are not among them: they are datasets
// fetched on demand (package strategies/datasets).
package data

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

// Worlds holds the built-in world files, as worlds/<name>.yaml: worlds
// fitted to public runs of real servers (optimize calibrate --fit), each
// naming its runs and their source; --world-file NAME reads one.
//
//go:embed worlds/*.yaml
var Worlds embed.FS

// Strategies holds the built-in strategy templates, as
// strategies/<name>.yaml (see package optimize/strategies).
//
//go:embed strategies/*.yaml
var Strategies embed.FS
