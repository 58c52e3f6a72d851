// Package errtext writes the one-line errors a user reads: a problem with
// a field of a file ("file: field.path: problem"), a problem with a
// simulator setting ("key: problem", named by its settings-table key), and
// any multi-line message folded onto one line. It imports nothing of the
// module, so the simulator and every layer above it may use it.
package errtext

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

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

// Setting is a value the simulator does not accept, named by the setting's
// key (the key of templates and `--set`, e.g. "num_instances" or
// "priority.base.critical"). The simulator knows no flags: a caller that
// took the value from a flag finds the flag by the key and says so.
type Setting struct{ Key, Problem string }

func (e *Setting) Error() string { return e.Key + ": " + e.Problem }

// BadSetting returns a Setting error for key.
func BadSetting(key, format string, args ...any) error {
	return &Setting{Key: key, Problem: fmt.Sprintf(format, args...)}
}

// UsageError marks a mistake in the user's request: the CLI exits with
// code 2 for it (1 for any other failure) and the server answers 400. It
// lives here, beside the other errors a user reads, so that every layer
// that checks a request (studies, its reports, the commands) marks its
// mistakes the same way.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usage is a UsageError of a formatted message.
func Usage(format string, args ...any) error { return UsageError{fmt.Errorf(format, args...)} }

// OneLine folds a message onto one line, for messages that may span
// several (yaml.v3 and database drivers report several): each line is
// trimmed, empty lines go, and the lines are joined by "; " — by " " after
// a line ending in ":", which introduces the next ("unmarshal errors:
// line 3: …; line 4: …").
func OneLine(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if b.Len() > 0 {
			if strings.HasSuffix(b.String(), ":") {
				b.WriteString(" ")
			} else {
				b.WriteString("; ")
			}
		}
		b.WriteString(line)
	}
	return b.String()
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

// EchoLimit is the most bytes of a user's input an error quotes back: a
// message must stay one readable line, and a server must not reflect a
// megabyte a client sent (nor any file's contents) into its answer.
const EchoLimit = 120

// Clip is s cut to at most n bytes at a rune boundary, "…" marking a cut.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Quote is s quoted as Go quotes it, cut to EchoLimit bytes first: for
// echoing a name or value a user gave.
func Quote(s string) string { return strconv.Quote(Clip(s, EchoLimit)) }
