package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
)

// UsageError marks errors in the user's request (exit code 2): a bad
// flag value here (an unknown export format) or in package studies.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usage is a UsageError of a formatted message.
func Usage(format string, args ...any) error { return UsageError{fmt.Errorf(format, args...)} }

// WriteJSON writes v as the CLI prints JSON (two-space indent, newline):
// the API serves the same bytes.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Percent renders a fractional Δ as "-69.7%", "–" for NaN.
func Percent(d float64) string {
	if math.IsNaN(d) {
		return "–"
	}
	return fmt.Sprintf("%+.1f%%", 100*d)
}

// Num is a number in report JSON: null when it is not finite (a relative
// change against a baseline of 0).
type Num float64

func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Num(math.NaN())
		return nil
	}
	var f float64
	err := json.Unmarshal(b, &f)
	*n = Num(f)
	return err
}
