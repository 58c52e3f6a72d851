// Package fielderr formats the one-line errors that strict YAML loaders
// report: "file: field.path: problem", naming the field and what is allowed.
package fielderr

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// Error is a problem with a named field of a named file.
type Error struct{ File, Path, Problem string }

func (e *Error) Error() string {
	parts := make([]string, 0, 3)
	for _, s := range []string{e.File, e.Path, e.Problem} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return OneLine(strings.Join(parts, ": "))
}

// New returns an Error for field path of file.
func New(file, path, format string, args ...any) error {
	return &Error{File: file, Path: path, Problem: fmt.Sprintf(format, args...)}
}

// OneLine folds a multi-line message (yaml.v3 reports several) into one.
func OneLine(s string) string {
	s = strings.ReplaceAll(s, "\r", "")
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ; ")), " ")
}

// Join appends key to a dotted field path.
func Join(path, key string) string {
	if path == "" || key == "" {
		return path + key
	}
	return path + "." + key
}

// Describe names what a YAML node holds, for "expected X, got Y" messages.
func Describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "an unexpected node"
}
