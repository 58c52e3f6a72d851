package workloads

import (
	"path/filepath"
	"slices"
	"strings"

	"optimize/strategies/datasets"
)

// Ref is a workload name taken apart around the file it reads:
// Prefix + File + Suffix is the name. Builtin is set for a name that
// reads no file of the user's (a built-in workload or trace, at any
// regime and with any replay controls); otherwise File is the spec file
// or the trace file (after "trace:") the name would open, perhaps "". A
// server that may open only some files checks File, and With puts the
// file it resolved back in its place.
type Ref struct {
	Prefix, File, Suffix string
	Builtin              bool
}

// ParseRef takes a workload name apart as Resolve reads
// it: "BASE@REGIME", BASE being "trace:FILE?CONTROLS", a built-in trace's
// "NAME?CONTROLS", a built-in workload's name, or else a spec file.
func ParseRef(name string) Ref {
	base, regime, hasRegime := strings.Cut(name, "@")
	suffix := ""
	if hasRegime {
		suffix = "@" + regime
	}
	traceBase, controls, hasControls := strings.Cut(base, "?")
	if hasControls {
		controls = "?" + controls
	}
	if file, isFile := strings.CutPrefix(traceBase, tracePrefix); isFile {
		return Ref{Prefix: tracePrefix, File: file, Suffix: controls + suffix}
	}
	if slices.Contains(datasets.Names(), traceBase) || slices.Contains(Builtins().Names(), base) {
		return Ref{Prefix: name, Builtin: true}
	}
	return Ref{File: base, Suffix: suffix}
}

// ReadsFile reports whether Resolve would open File: a trace
// file, or a spec file (.yaml or .yml). Any other name that is not a
// built-in is an unknown built-in's name to it.
func (r Ref) ReadsFile() bool {
	ext := filepath.Ext(r.File)
	return !r.Builtin && (r.Prefix == tracePrefix || ext == ".yaml" || ext == ".yml")
}

// With is the name with file in place of r.File.
func (r Ref) With(file string) string { return r.Prefix + file + r.Suffix }
