package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"optimize/simcore/errtext"
)

// ExportFormats are the formats of study export: the tables (csv, json)
// every export of trials or evidence writes, one trial's settings
// (SettingsFormat) or llm-d and vLLM configs (LLMDFormat, a directory),
// and the whole study as Optuna's journal (OptunaFormat).
var ExportFormats = []string{"csv", "json", SettingsFormat, OptunaFormat, LLMDFormat}

// CheckFormat is nil for one of ExportFormats and else the one usage
// error every export gives.
func CheckFormat(format string) error {
	if slices.Contains(ExportFormats, format) {
		return nil
	}
	return errtext.Usage("--format: unknown value %q (allowed: %s)", format, strings.Join(ExportFormats, ", "))
}

// tableFormat is the error of an export of a table (trials, evidence)
// asked for a format that is not a table: CheckFormat's for an unknown
// one, else that this export writes csv or json.
func tableFormat(format, what string) error {
	if err := CheckFormat(format); err != nil {
		return err
	}
	return errtext.Usage("--format %s: %s export only as csv or json", format, what)
}

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

// Human renders a number for a person to read: four significant digits,
// in plain decimals between 0.001 and 10⁹ (17684, 303.3, 0.9973; never
// 1.768e+04), trailing zeros dropped; beyond that range in scientific
// notation; "–" when it is not finite. The dashboard's num() follows the
// same rule.
func Human(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "–"
	case v == 0:
		return "0"
	case a < 1e-3 || a >= 1e9:
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
	decimals := max(0, 3-int(math.Floor(math.Log10(a))))
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if decimals > 0 {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// CSVDigits is the number of significant digits of every number a CSV
// export writes (521.856, not 521.8557799999999).
const CSVDigits = 6

// CSVNumber renders v rounded to CSVDigits significant digits, in plain
// decimals between 0.001 and 10⁹ (a whole number, a count, in full); ""
// when it is not finite (an empty cell).
func CSVNumber(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64) // a count: every digit is exact
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', CSVDigits, 64), 64)
	if a := math.Abs(r); r != 0 && (a < 1e-3 || a >= 1e9) {
		return strconv.FormatFloat(r, 'g', -1, 64)
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
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
