// Package templates embeds the built-in declarative files into the binary:
// workload specs, model latency profiles and (later) strategy templates.
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
